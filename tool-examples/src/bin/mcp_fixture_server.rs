//! An MCP server with fixture tools for third-party clients: the conformance suite's tools
//! (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`, the content tools
//! `test_image_content`, `test_audio_content`, `test_embedded_resource`,
//! `test_multiple_content_types`, the logging tools `test_tool_with_logging` and
//! `test_logging_tool`, `json_schema_2020_12_tool`, `test_custom_header` with its
//! `x-mcp-header` parameter, the `mutation` tools the input-required scenarios ask to approve,
//! and the tools that ask the user, the caller's model or its roots mid-call through
//! `ToolContext`: `test_elicitation`, `test_elicitation_sep1034_defaults`,
//! `test_elicitation_sep1330_enums`, `test_sampling`, `test_missing_capability` and the
//! `test_input_required_result_*` tools) and a few tools that exercise annotations, output
//! schemas, path arguments and approval for the Python client test. All are `#[tool]`s served
//! through the executor, like any application's tools.
//!
//! Besides tools it offers the suite's resources (`test://static-text`, `test://static-binary`,
//! `test://watched-resource`, the template `test://template/{id}/data`), the workspace's files
//! as `file://` resources, and the suite's prompts (`test_simple_prompt`,
//! `test_prompt_with_arguments` with completion of `arg1`, `test_prompt_with_embedded_resource`,
//! `test_prompt_with_image`, and `test_input_required_result_prompt`, which asks the user for
//! its context before it is built).
//!
//! The tasks extension's fixtures are served as tasks to clients that declare it: `slow_compute`,
//! `failing_job` (only as a task), `protocol_error_job`, `confirm_delete` and `multi_input`
//! (which ask inside the task), `test_tool_with_task` (which asks before it becomes a task), next
//! to the plain `greet`.
//!
//! `mcp_fixture_server --stdio --workspace DIR` or `mcp_fixture_server --http ADDR --workspace DIR`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_core::content::ResourceBody;
use tool_core::content::{Audio, Content, EmbeddedResource, Image};
use tool_core::guard::path::PathGuard;
use tool_core::input::{FormAnswer, InputAnswer, InputError, InputKind, InputRequest, Sampling};
use tool_core::mcp::completion::Completer;
use tool_core::mcp::prompts::{Message, Prompt, PromptArgument, Prompts};
use tool_core::mcp::resources::{Resource, ResourceTemplate, Resources, WorkspaceResources};
use tool_core::mcp::tasks::{TaskSupport, TaskTools};
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::outcome::ToolError;
use tool_core::{
    tool, Executor, ExecutorConfig, Json, LogLevel, Registry, ToolContext, WorkspacePath,
};

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

/// The suite's resources, and the workspace's files.
fn resources(guard: PathGuard) -> Result<Resources, String> {
    let template = ResourceTemplate::new("test://template/{id}/data", "template-data", |m| {
        let id = m.vars.get("id").map(String::as_str).unwrap_or_default();
        let body = serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        Ok(ResourceBody::Text(body.to_string()))
    })
    .and_then(|t| {
        t.with_description("A JSON document per id")
            .with_mime_type("application/json")
            .with_completer("id", Completer::from_values(["123", "456", "789"]))
    })
    .map_err(|e| e.to_string())?;
    Resources::new()
        .with_resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "This is the content of the static text resource.",
            )
            .with_description("A fixed text resource"),
        )
        .and_then(|r| {
            r.with_resource(
                Resource::blob(
                    "test://static-binary",
                    "static-binary",
                    tool_examples::media::png_rgb(1, 1, [255, 0, 0]),
                    "image/png",
                )
                .with_description("A fixed PNG image"),
            )
        })
        .and_then(|r| {
            r.with_resource(
                Resource::text(
                    "test://watched-resource",
                    "watched-resource",
                    "A resource clients subscribe to.",
                )
                .with_description("A resource to subscribe to"),
            )
        })
        .and_then(|r| r.with_template(template))
        .map(|r| r.with_workspace(WorkspaceResources::new(guard)))
        .map_err(|e| e.to_string())
}

/// The suite's prompts.
fn prompts() -> Result<Prompts, String> {
    let simple = Prompt::new("test_simple_prompt", |_| {
        Ok(vec![Message::user("This is a simple prompt for testing.")])
    })
    .with_description("A prompt without arguments");
    let with_args = Prompt::new("test_prompt_with_arguments", |args| {
        Ok(vec![Message::user(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            args.get("arg1").unwrap_or_default(),
            args.get("arg2").unwrap_or_default()
        ))])
    })
    .with_description("A prompt with two required arguments")
    .with_argument(
        PromptArgument::required("arg1")
            .with_description("First test argument")
            .with_completer(Completer::from_values([
                "paris", "park", "party", "test", "testing",
            ])),
    )
    .with_argument(PromptArgument::required("arg2").with_description("Second test argument"));
    let embedded = Prompt::new("test_prompt_with_embedded_resource", |args| {
        let uri = args.get("resourceUri").unwrap_or_default();
        Ok(vec![
            Message::user(
                EmbeddedResource::text(uri, "Embedded resource content for testing.")
                    .with_mime_type("text/plain"),
            ),
            Message::user("Please process the embedded resource above."),
        ])
    })
    .with_description("A prompt that embeds a resource")
    .with_argument(
        PromptArgument::required("resourceUri").with_description("URI of the resource to embed"),
    );
    let image = Prompt::new("test_prompt_with_image", |_| {
        Ok(vec![
            Message::user(Image::png(tool_examples::media::png_rgb(1, 1, [255, 0, 0]))),
            Message::user("Please analyze the image above."),
        ])
    })
    .with_description("A prompt with an image");
    let asking = Prompt::asking("test_input_required_result_prompt", |_, input| async move {
        let form = json!({
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"]
        });
        let answer = input
            .elicit("user_context", "What context should the prompt use?", form)
            .await?;
        let context = field(&answer, "context")?;
        Ok(vec![Message::user(format!(
            "Answer with this context in mind: {context}"
        ))])
    })
    .with_description("A prompt that asks the user for its context first");
    Prompts::new()
        .with_prompt(simple)
        .and_then(|p| p.with_prompt(with_args))
        .and_then(|p| p.with_prompt(embedded))
        .and_then(|p| p.with_prompt(image))
        .and_then(|p| p.with_prompt(asking))
        .map_err(|e| e.to_string())
}

/// Asks the user for a name and an email address (a form), and says what they answered.
///
/// # Arguments
/// * `message` - what the user is asked
#[tool(risk = "safe")]
async fn test_elicitation(ctx: ToolContext, message: String) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = ctx.elicit("user_info", message, schema).await?;
    Ok(format!("User response: {}", describe(&answer)))
}

/// Asks the user a form whose every field has a default (SEP-1034).
#[tool(risk = "safe")]
async fn test_elicitation_sep1034_defaults(ctx: ToolContext) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let answer = ctx
        .elicit("defaults", "Please review these values", schema)
        .await?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

/// Asks the user a form with the five kinds of choice fields (SEP-1330).
#[tool(risk = "safe")]
async fn test_elicitation_sep1330_enums(ctx: ToolContext) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    });
    let answer = ctx.elicit("choices", "Please choose", schema).await?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

/// Asks the caller's model to answer a prompt, and returns its answer.
///
/// # Arguments
/// * `prompt` - what the model is asked
#[tool(risk = "safe")]
async fn test_sampling(ctx: ToolContext, prompt: String) -> Result<String, InputError> {
    let message = ctx
        .sample("completion", Sampling::prompt(prompt, 100))
        .await?;
    Ok(format!(
        "LLM response: {}",
        message.text().unwrap_or("(no text)")
    ))
}

/// The form that asks for a name.
fn name_form() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    })
}

/// A form's answer as text: the action, and the content when accepted.
fn describe(answer: &FormAnswer) -> String {
    match answer {
        FormAnswer::Accept(content) => format!(
            "action=accept, content={}",
            serde_json::Value::Object(content.clone())
        ),
        FormAnswer::Decline => "action=decline".to_owned(),
        FormAnswer::Cancel => "action=cancel".to_owned(),
    }
}

/// The accepted form's `field`, or why there is none.
fn field(answer: &FormAnswer, field: &str) -> Result<String, InputError> {
    match answer {
        FormAnswer::Accept(content) => content
            .get(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| InputError::Invalid(format!("the form has no `{field}`"))),
        other => Err(InputError::Invalid(format!(
            "the user did not fill in the form ({})",
            describe(other)
        ))),
    }
}

/// Asks the user's name (a form, question `user_name`) and greets them.
#[tool(risk = "safe")]
async fn test_input_required_result_elicitation(ctx: ToolContext) -> Result<String, InputError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", name_form())
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")?))
}

/// Asks the caller's model for the capital of France (question `capital_question`).
#[tool(risk = "safe")]
async fn test_input_required_result_sampling(ctx: ToolContext) -> Result<String, InputError> {
    let message = ctx
        .sample(
            "capital_question",
            Sampling::prompt("What is the capital of France?", 100),
        )
        .await?;
    Ok(format!(
        "The model said: {}",
        message.text().unwrap_or("(no text)")
    ))
}

/// Asks for the caller's roots (question `client_roots`) and lists them.
#[tool(risk = "safe")]
async fn test_input_required_result_list_roots(ctx: ToolContext) -> Result<String, InputError> {
    let roots = ctx.list_roots("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("{} root(s): {}", roots.len(), uris.join(", ")))
}

/// Asks a form, the caller's model and the roots in one round.
#[tool(risk = "safe")]
async fn test_input_required_result_multiple_inputs(
    ctx: ToolContext,
) -> Result<String, InputError> {
    let answers = ctx
        .ask(vec![
            (
                "user_name".into(),
                InputRequest::form("What is your name?", name_form()),
            ),
            (
                "greeting".into(),
                InputRequest::sample(Sampling::prompt("Generate a greeting", 50)),
            ),
            ("client_roots".into(), InputRequest::roots()),
        ])
        .await?;
    let mut parts = Vec::new();
    for answer in &answers {
        parts.push(match answer {
            InputAnswer::Form(form) => format!("name: {}", field(form, "name")?),
            InputAnswer::Message(m) => format!("greeting: {}", m.text().unwrap_or("(no text)")),
            InputAnswer::Roots(roots) => format!("{} root(s)", roots.len()),
            other => format!("{other:?}"),
        });
    }
    Ok(parts.join("; "))
}

/// Asks two questions in two rounds: a name (`step1`), then a favourite colour (`step2`).
#[tool(risk = "safe")]
async fn test_input_required_result_multi_round(ctx: ToolContext) -> Result<String, InputError> {
    let name = ctx
        .elicit("step1", "Step 1: What is your name?", name_form())
        .await?;
    let name = field(&name, "name")?;
    let colour_form = json!({
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"]
    });
    let colour = ctx
        .elicit(
            "step2",
            format!("Step 2: What is your favorite color, {name}?"),
            colour_form,
        )
        .await?;
    Ok(format!("{name} likes {}", field(&colour, "color")?))
}

/// Asks only what the client can answer: a form when it declared elicitation, its model when it
/// declared sampling; fails when it declared neither.
#[tool(risk = "safe")]
async fn test_input_required_result_capabilities(ctx: ToolContext) -> Result<String, InputError> {
    let mut questions = Vec::new();
    if ctx.can_ask(InputKind::Elicitation) {
        questions.push((
            "user_name".to_owned(),
            InputRequest::form("What is your name?", name_form()),
        ));
    }
    if ctx.can_ask(InputKind::Sampling) {
        questions.push((
            "capital_question".to_owned(),
            InputRequest::sample(Sampling::prompt("What is the capital of France?", 100)),
        ));
    }
    if questions.is_empty() {
        return Err(InputError::Unavailable {
            kind: InputKind::Elicitation,
            reason: "the client declared neither elicitation nor sampling".into(),
        });
    }
    let answers = ctx.ask(questions).await?;
    Ok(format!("{} answer(s)", answers.len()))
}

/// Needs the caller's model (sampling): a client that did not declare it is refused.
#[tool(risk = "safe")]
async fn test_missing_capability(ctx: ToolContext) -> Result<String, InputError> {
    let message = ctx
        .sample("probe", Sampling::prompt("Say hello", 20))
        .await?;
    Ok(format!(
        "The model said: {}",
        message.text().unwrap_or("(no text)")
    ))
}

/// Greets by name, at once (never a task).
///
/// # Arguments
/// * `name` - who is greeted
#[tool(risk = "safe", idempotent)]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` seconds (at most 600), then says so; stops early when cancelled. Served
/// as a task to clients that declare the tasks extension.
///
/// # Arguments
/// * `seconds` - how long to work
/// * `label` - a name for the job
#[tool(risk = "safe", idempotent)]
async fn slow_compute(
    ctx: ToolContext,
    seconds: f64,
    label: Option<String>,
) -> Result<String, String> {
    let wait = Duration::from_secs_f64(seconds.clamp(0.0, 600.0));
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err("cancelled".to_owned()),
        _ = tokio::time::sleep(wait) => Ok(format!(
            "computed `{}` in {seconds} s",
            label.as_deref().unwrap_or("job")
        )),
    }
}

/// Works a second, then fails with a tool error. Served only as a task.
#[tool(risk = "safe", idempotent)]
async fn failing_job(ctx: ToolContext) -> Result<String, String> {
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err("cancelled".to_owned()),
        _ = tokio::time::sleep(Duration::from_secs(1)) => {
            Err("the job failed, as it always does".to_owned())
        }
    }
}

/// Panics: the executor contains it, and as a task it ends `failed` with a protocol error.
#[tool(risk = "safe", idempotent)]
fn protocol_error_job() -> String {
    panic!("protocol_error_job panics on purpose")
}

/// Asks the user to confirm, then says what they decided (nothing is deleted: a fixture).
///
/// # Arguments
/// * `filename` - what would be deleted
#[tool(risk = "safe")]
async fn confirm_delete(ctx: ToolContext, filename: String) -> Result<String, InputError> {
    let form = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]
    });
    let answer = ctx
        .elicit("confirm", format!("Delete {filename}?"), form)
        .await?;
    Ok(match answer {
        FormAnswer::Accept(c) if c.get("confirm") == Some(&json!(true)) => {
            format!("confirmed: {filename} would be deleted")
        }
        other => format!("not confirmed ({})", describe(&other)),
    })
}

/// Asks two questions in one round (both pending at once), then lists the answers.
#[tool(risk = "safe")]
async fn multi_input(ctx: ToolContext) -> Result<String, InputError> {
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}
    });
    let answers = ctx
        .ask(vec![
            (
                "first".into(),
                InputRequest::form("First input?", form.clone()),
            ),
            ("second".into(), InputRequest::form("Second input?", form)),
        ])
        .await?;
    let parts: Vec<String> = answers
        .iter()
        .map(|a| match a {
            InputAnswer::Form(f) => describe(f),
            other => format!("{other:?}"),
        })
        .collect();
    Ok(parts.join("; "))
}

/// Asks the user's name (question `user_name`), then works half a second and greets them. Served
/// only as a task, once the name is known: the question travels in an input-required result.
#[tool(risk = "safe")]
async fn test_tool_with_task(ctx: ToolContext) -> Result<String, InputError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", name_form())
        .await?;
    let name = field(&answer, "name")?;
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err(InputError::Cancelled),
        _ = tokio::time::sleep(Duration::from_millis(500)) => {
            Ok(format!("Hello, {name}! (finished as a task)"))
        }
    }
}

/// The tools served as tasks.
fn task_tools() -> TaskTools {
    TaskTools::new()
        .with_tool("slow_compute", TaskSupport::Optional)
        .with_tool("failing_job", TaskSupport::Required)
        .with_tool("protocol_error_job", TaskSupport::Optional)
        .with_tool("confirm_delete", TaskSupport::Optional)
        .with_tool("multi_input", TaskSupport::Optional)
        .with_tool_asking_first("test_tool_with_task", TaskSupport::Required)
}

/// The fixture tools, and only them (the example library's tools are linked in too).
fn fixtures() -> Result<Registry, tool_core::RegistryError> {
    Registry::builder()
        .with_inventory_where(|module| module == module_path!())
        .build()
}

const USAGE: &str = "usage: --stdio | --http ADDR, and --workspace DIR";

fn main() -> ExitCode {
    // The program is its own sandbox helper (for tools that start programs): first thing.
    if let Some(code) = tool_core::sandbox::dispatch_helper() {
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut http = None;
    let mut stdio = false;
    let mut workspace = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" => stdio = true,
            "--http" => http = it.next().cloned(),
            "--workspace" => workspace = it.next().cloned(),
            other => {
                eprintln!("unknown argument `{other}`; {USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(workspace) = workspace else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let executor = match fixtures().map_err(|e| e.to_string()).and_then(|r| {
        Executor::new(Arc::new(r), ExecutorConfig::new(workspace)).map_err(|e| e.to_string())
    }) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let catalog = PathGuard::new(executor.workspace())
        .map_err(|e| e.to_string())
        .and_then(|guard| Ok((resources(guard)?, prompts()?)));
    let server = match catalog {
        Ok((resources, prompts)) => McpServer::new(ExecutorBackend::new(executor))
            .with_resources(resources)
            .with_prompts(prompts)
            .with_tasks(task_tools()),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async move {
        match (stdio, http) {
            (true, None) => tool_core::mcp::serve_stdio_server(server).await,
            (false, Some(addr)) => match addr.parse() {
                Ok(addr) => tool_core::mcp::serve_http_server(server, addr).await,
                Err(e) => {
                    eprintln!("error: bad address `{addr}`: {e}");
                    return Err(None);
                }
            },
            _ => {
                eprintln!("{USAGE}");
                return Err(None);
            }
        }
        .map_err(Some)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Some(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(None) => ExitCode::from(2),
    }
}
