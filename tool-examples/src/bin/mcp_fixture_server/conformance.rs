//! The conformance suite's plain tools: text, errors, progress, content blocks, logging, a
//! hand-written 2020-12 schema, a header parameter, and the tools the clients' tests call to
//! read, count, write and approve.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::content::{Audio, Content, EmbeddedResource, Image};
use tool_core::outcome::ToolError;
use tool_core::{tool, Json, LogLevel, ToolContext, WorkspacePath};

/// Returns a fixed text.
#[tool(risk = "safe", idempotent)]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Always fails.
#[tool(risk = "safe", idempotent)]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Reports progress 0, 50 and 100 out of 100.
#[tool(risk = "safe", idempotent)]
async fn test_tool_with_progress(ctx: ToolContext) -> String {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(step, Some(100.0), None);
    }
    "progress reported: 0, 50, 100".to_owned()
}

/// Returns a 1x1 red PNG image.
#[tool(risk = "safe", idempotent)]
fn test_image_content() -> Image {
    Image::png(tool_examples::media::png_rgb(1, 1, [255, 0, 0]))
}

/// Returns a short WAV tone.
#[tool(risk = "safe", idempotent)]
fn test_audio_content() -> Audio {
    Audio::wav(tool_examples::media::wav_tone(8000, 440.0, 0.05))
}

/// Returns an embedded text resource.
#[tool(risk = "safe", idempotent)]
fn test_embedded_resource() -> EmbeddedResource {
    EmbeddedResource::text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded JSON resource.
#[tool(risk = "safe", idempotent)]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Image::png(tool_examples::media::png_rgb(1, 1, [255, 0, 0])).into(),
        EmbeddedResource::text(
            "test://mixed-content-resource",
            r#"{"test":"data","value":123}"#,
        )
        .with_mime_type("application/json")
        .into(),
    ]
}

/// Logs three messages at info level, 50 ms apart.
#[tool(risk = "safe", idempotent)]
async fn test_tool_with_logging(ctx: ToolContext) -> String {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "logged 3 messages".to_owned()
}

/// Logs one message at each level, least severe first.
#[tool(risk = "safe", idempotent)]
fn test_logging_tool(ctx: &ToolContext) -> String {
    for level in LogLevel::ALL {
        ctx.log(level, format!("a {level} message"));
    }
    "logged one message per level".to_owned()
}

/// A postal address.
#[derive(Debug, Serialize, Deserialize)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// The arguments of `json_schema_2020_12_tool`, as its hand-written schema describes them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contact {
    name: Option<String>,
    address: Option<Address>,
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features.
///
/// Its input schema is hand-written (composition, conditionals, `$anchor`): served as written
/// and enforced by the executor before the call reaches the function.
#[tool(
    risk = "safe",
    idempotent,
    input_schema = "schemas/json_schema_2020_12_tool.json"
)]
fn json_schema_2020_12_tool(contact: Contact) -> String {
    let how = match contact.contact_method.as_deref() {
        Some("phone") => contact.phone.as_deref().unwrap_or_default(),
        _ => contact
            .email
            .as_deref()
            .or(contact.phone.as_deref())
            .unwrap_or_default(),
    };
    format!(
        "contact {} at {how}",
        contact.name.as_deref().unwrap_or("(no name)")
    )
}

/// Read a note from the workspace.
///
/// # Arguments
/// * `path` - the note, relative to the workspace
#[tool(risk = "read_only", path_args = ["path"], idempotent)]
fn read_note(path: WorkspacePath) -> Result<String, ToolError> {
    Ok(path.read_to_string(1 << 20)?)
}

/// How many words a text has.
#[derive(Debug, Serialize, JsonSchema)]
struct WordCount {
    /// The count.
    words: usize,
}

/// Count the words of a text.
///
/// # Arguments
/// * `text` - the text
/// * `max` - count at most this many
#[tool(risk = "safe", idempotent)]
fn count_words(text: String, max: Option<u32>) -> Json<WordCount> {
    let n = text.split_whitespace().count();
    let n = max.map_or(n, |m| n.min(m as usize));
    Json(WordCount { words: n })
}

/// Write a note into the workspace.
///
/// # Arguments
/// * `path` - the note, relative to the workspace
/// * `text` - what to write
#[tool(risk = "mutation", path_args = ["path"])]
fn write_note(path: WorkspacePath, text: String) -> Result<String, ToolError> {
    path.write_atomic(text.as_bytes())?;
    Ok(format!("wrote {}", path.as_path().display()))
}

/// Needs approval (a `mutation`), then says so. The conformance suite's input-required scenarios
/// call it: a 2026-07-28 client approves through an input-required result whose signed
/// `requestState` it echoes back.
#[tool(risk = "mutation")]
fn test_input_required_result_request_state() -> String {
    "approved: the call ran".to_owned()
}

/// Needs approval (a `mutation`); the suite echoes a changed `requestState`, which is refused.
#[tool(risk = "mutation")]
fn test_input_required_result_tampered_state() -> String {
    "approved: the call ran".to_owned()
}

/// Needs approval (a `mutation`): over stateless HTTP the question travels in the result, never
/// as a request of its own on the response stream.
#[tool(risk = "mutation")]
fn test_streaming_elicitation() -> String {
    "approved: the call ran".to_owned()
}

/// Says which region the call was routed to. Its `region` parameter declares `x-mcp-header`
/// (SEP-2243): over HTTP the `Mcp-Param-Region` header must carry the same value, or the call is
/// refused before it reaches the tool.
#[tool(
    risk = "safe",
    idempotent,
    input_schema = "schemas/test_custom_header.json"
)]
fn test_custom_header(region: String) -> String {
    format!("routed to region {region}")
}
