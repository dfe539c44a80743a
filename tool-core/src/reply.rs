//! Results back to the model: a [`CallResult`] (or a model turn's batch of them) as the
//! provider's next message, keeping the call id the call came with.
//!
//! | provider | one result | a batch |
//! |---|---|---|
//! | [`Provider::OpenAi`] (Chat Completions) | `{"role": "tool", "tool_call_id", "content"}` | an array of those messages |
//! | [`Provider::Responses`] (OpenAI Responses) | `{"type": "function_call_output", "call_id", "output"}` | an array of those input items |
//! | [`Provider::Anthropic`] (Messages) | `{"role": "user", "content": [{"type": "tool_result", "tool_use_id", "content", "is_error"}]}` | one user message, one block per result |
//! | [`Provider::Gemini`] | `{"role": "user", "parts": [{"functionResponse": {"id"?, "name", "response"}}]}` (a `{"text"}` part for a call too malformed to name its function) | one content, one part per result |
//!
//! The text is the tool's output (a string as is, anything else as JSON). Content blocks go
//! where the provider takes them: images as Responses `input_image` data URLs, Anthropic base64
//! `image` blocks (JPEG, PNG, GIF, WebP) and Gemini `inlineData` parts (audio too); what a
//! provider cannot carry (every non-text block in a Chat Completions tool message) is described
//! in text (`[image: image/png, 68 bytes]`, an embedded text resource with its text). A refusal or failure
//! becomes feedback the model can act on: the status, the stable reason code (and the tool's own
//! error code, [`ToolError`](crate::outcome::ToolError)), the step that stopped the call and its
//! message, and what to do next. For `invalid_arguments` it lists every failing JSON path with
//! what is wrong there and the part of the tool's schema that path must match (bounded, see
//! [`Violation::schema`](crate::schema::validate::Violation::schema)), so the model retries against the schema itself:
//!
//! ```text
//! refused (invalid_arguments, at step validate): the arguments do not match the schema of `read_file`: at `/max_bytes`: 0 is less than the minimum of 1
//! Failing paths and the schema each must match:
//! - `/max_bytes`: 0 is less than the minimum of 1; schema: {"type":"integer","minimum":1,"maximum":65536,"default":65536,...}
//! Fix the arguments named above so they match the tool's schema, then call it again.
//! ```
//!
//! Gemini's `functionResponse` carries `id` only when the call carried one
//! ([`CallResult::call_id_given`]): without it, Gemini matches responses to calls by name and
//! order, and a made-up id would match none. The other providers always name an id.
//!
//! Anthropic marks it `is_error: true`; Gemini puts it under `response.error`, with `code`,
//! `error_code` and `violations` (`[{"path", "message", "schema"}]`) as data.

use serde_json::{json, Map, Value};

use crate::content::{base64_encode, Content};
use crate::executor::CallResult;
use crate::reason::ReasonCode;
use crate::status::CallStatus;

/// Whose message shape to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Provider {
    /// OpenAI Chat Completions: `role: tool` messages.
    #[cfg_attr(feature = "cli", value(name = "openai"))]
    OpenAi,
    /// OpenAI Responses: `function_call_output` items.
    Responses,
    /// Anthropic Messages: `tool_result` blocks in a user message.
    Anthropic,
    /// Google Gemini: `functionResponse` parts.
    Gemini,
}

/// The message that gives `result` back to the model.
pub fn reply(result: &CallResult, provider: Provider) -> Value {
    match provider {
        Provider::OpenAi => openai_message(result),
        Provider::Responses => responses_item(result),
        Provider::Anthropic => json!({"role": "user", "content": [anthropic_block(result)]}),
        Provider::Gemini => json!({"role": "user", "parts": gemini_parts(result)}),
    }
}

/// What gives a model turn's `results` back to the model, in their order: OpenAI's messages and
/// Responses' items as an array, Anthropic's blocks in one user message, Gemini's parts in one
/// content.
pub fn reply_batch(results: &[CallResult], provider: Provider) -> Value {
    match provider {
        Provider::OpenAi => Value::Array(results.iter().map(openai_message).collect()),
        Provider::Responses => Value::Array(results.iter().map(responses_item).collect()),
        Provider::Anthropic => json!({
            "role": "user",
            "content": results.iter().map(anthropic_block).collect::<Vec<_>>(),
        }),
        Provider::Gemini => json!({
            "role": "user",
            "parts": results.iter().flat_map(gemini_parts).collect::<Vec<_>>(),
        }),
    }
}

/// The text the model reads: the output when the call succeeded, else the feedback.
pub fn text(result: &CallResult) -> String {
    match (&result.status, &result.output) {
        (CallStatus::Ok, Some(Value::String(s))) => s.clone(),
        (CallStatus::Ok, Some(v)) => v.to_string(),
        (CallStatus::Ok, None) => String::new(),
        _ => feedback(result),
    }
}

/// A refusal or failure, said so the model can act on it.
fn feedback(result: &CallResult) -> String {
    let code = result.code.map_or("error", ReasonCode::as_str);
    let mut out = format!("{} ({code}", result.status.as_str());
    if let Some(error_code) = &result.error_code {
        out.push_str(&format!(", error code {error_code}"));
    }
    if let Some(step) = result.step {
        out.push_str(&format!(", at step {}", step.as_str()));
    }
    out.push(')');
    if let Some(message) = &result.message {
        out.push_str(": ");
        out.push_str(message);
    }
    if !result.violations.is_empty() {
        out.push_str("\nFailing paths and the schema each must match:");
        for v in &result.violations {
            let path = if v.path.is_empty() { "/" } else { &v.path };
            out.push_str(&format!("\n- `{path}`: {}", v.message));
            if let Some(schema) = &v.schema {
                out.push_str(&format!("; schema: {schema}"));
            }
        }
    }
    if let Some(next) = result.code.and_then(next_step) {
        out.push('\n');
        out.push_str(next);
    }
    out
}

/// What the model can do about a refusal, where there is something.
fn next_step(code: ReasonCode) -> Option<&'static str> {
    Some(match code {
        ReasonCode::InvalidArguments => {
            "Fix the arguments named above so they match the tool's schema, then call it again."
        }
        ReasonCode::MalformedCall => {
            "Send the call again as a JSON object with the tool's name and its arguments."
        }
        ReasonCode::UnknownTool => "Call one of the tools you were given, by its exact name.",
        ReasonCode::PathOutsideWorkspace => {
            "Use a path relative to the workspace that stays inside it."
        }
        ReasonCode::ApprovalDenied | ReasonCode::SafetyDenied | ReasonCode::PermissionDenied => {
            "Do not repeat this call; choose another way or ask the user."
        }
        _ => return None,
    })
}

fn is_error(result: &CallResult) -> bool {
    result.status != CallStatus::Ok
}

/// The content blocks the model gets, when the call succeeded with blocks: the structured or
/// text output first (if any), then the blocks in their order. `None`: text only.
fn blocks(result: &CallResult) -> Option<Vec<Content>> {
    if result.content.is_empty() || is_error(result) {
        return None;
    }
    let mut out = Vec::with_capacity(result.content.len() + 1);
    match &result.output {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(_) => out.push(Content::Text(text(result))),
    }
    out.extend(result.content.iter().cloned());
    Some(out)
}

/// A data URL of base64 `bytes`.
fn data_url(mime_type: &str, bytes: &[u8]) -> String {
    format!("data:{mime_type};base64,{}", base64_encode(bytes))
}

/// Chat Completions tool messages hold text parts only: a block that is not text is described.
fn openai_message(result: &CallResult) -> Value {
    let content = match blocks(result) {
        None => json!(text(result)),
        Some(blocks) => blocks
            .iter()
            .map(|b| json!({"type": "text", "text": b.describe()}))
            .collect(),
    };
    json!({"role": "tool", "tool_call_id": result.call_id, "content": content})
}

/// Responses outputs may hold text and images (as data URLs); other blocks are described.
fn responses_item(result: &CallResult) -> Value {
    let output = match blocks(result) {
        None => json!(text(result)),
        Some(blocks) => blocks
            .iter()
            .map(|b| match b {
                Content::Image(i) => {
                    json!({"type": "input_image", "image_url": data_url(&i.mime_type, &i.data)})
                }
                other => json!({"type": "input_text", "text": other.describe()}),
            })
            .collect(),
    };
    json!({"type": "function_call_output", "call_id": result.call_id, "output": output})
}

/// The image types a Messages `tool_result` may carry as base64 image blocks.
const ANTHROPIC_IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// A `tool_result` holds text and image blocks; other blocks (and images of other types) are
/// described.
fn anthropic_block(result: &CallResult) -> Value {
    let content = match blocks(result) {
        None => json!(text(result)),
        Some(blocks) => blocks
            .iter()
            .map(|b| match b {
                Content::Image(i) if ANTHROPIC_IMAGE_TYPES.contains(&i.mime_type.as_str()) => {
                    json!({"type": "image", "source": {
                        "type": "base64", "media_type": i.mime_type, "data": base64_encode(&i.data)
                    }})
                }
                other => json!({"type": "text", "text": other.describe()}),
            })
            .collect(),
    };
    json!({
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": content,
        "is_error": is_error(result),
    })
}

/// Gemini's parts of one result: its `functionResponse` (the text of the blocks under
/// `output`), then each image or audio block as an `inlineData` part.
fn gemini_parts(result: &CallResult) -> Vec<Value> {
    let Some(blocks) = blocks(result) else {
        return vec![gemini_part(result)];
    };
    let text: Vec<String> = blocks
        .iter()
        .filter(|b| !matches!(b, Content::Image(_) | Content::Audio(_)))
        .map(Content::describe)
        .collect();
    let mut response = Map::new();
    response.insert("output".to_owned(), json!(text.join("\n")));
    let mut parts = vec![function_response(result, Value::Object(response))];
    for b in &blocks {
        let (mime_type, data) = match b {
            Content::Image(i) => (&i.mime_type, &i.data),
            Content::Audio(a) => (&a.mime_type, &a.data),
            _ => continue,
        };
        parts.push(json!({"inlineData": {"mimeType": mime_type, "data": base64_encode(data)}}));
    }
    parts
}

fn gemini_part(result: &CallResult) -> Value {
    // A `functionResponse` must name its function: a call too malformed to name one is answered
    // with a text part carrying the feedback.
    if result.tool.as_deref().is_none_or(str::is_empty) {
        return json!({ "text": text(result) });
    }
    let response = if is_error(result) {
        let mut error = json!({
            "status": result.status.as_str(),
            "code": result.code.map(ReasonCode::as_str),
            "message": feedback(result),
        });
        if let Some(error_code) = &result.error_code {
            error["error_code"] = json!(error_code);
        }
        if !result.violations.is_empty() {
            error["violations"] = result
                .violations
                .iter()
                .map(|v| json!({"path": v.path, "message": v.message, "schema": v.schema}))
                .collect();
        }
        json!({ "error": error })
    } else {
        // `response` is a JSON object: an object output is it; anything else goes under `output`.
        match &result.output {
            Some(Value::Object(m)) => Value::Object(m.clone()),
            Some(v) => json!({ "output": v }),
            None => json!({ "output": null }),
        }
    };
    function_response(result, response)
}

fn function_response(result: &CallResult, response: Value) -> Value {
    let mut f = Map::new();
    // Only the call's own id: a made-up one would match no call, while a response without an id
    // is matched by name and order.
    if result.call_id_given {
        f.insert("id".to_owned(), json!(result.call_id));
    }
    f.insert(
        "name".to_owned(),
        json!(result.tool.as_deref().unwrap_or_default()),
    );
    f.insert("response".to_owned(), response);
    json!({ "functionResponse": f })
}
