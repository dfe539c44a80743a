//! Gemini's calls: `functionCall` parts, and the model turns that hold them.
//!
//! - a part `{"functionCall": {"name": NAME, "args"?: {...}, "id"?: ID}}`, with an optional
//!   `thoughtSignature` beside it (no `args`: no arguments);
//! - a content `{"role": "model", "parts": [PART, ...]}`, text parts (`{"text"}`, optionally
//!   `thought` and `thoughtSignature`) skipped;
//! - a whole `generateContent` response `{"candidates": [{"content": CONTENT, ...}], ...}` with
//!   exactly one candidate (its metadata keys tolerated, any other key refused).

use serde_json::{Map, Value};

use super::fields::{name, only_keys, optional_id};
use super::types::{ParseError, ToolCall};
use crate::schema::export::Dialect;

/// Keys a `generateContent` response may have besides `candidates`.
const RESPONSE_KEYS: &[&str] = &[
    "usageMetadata",
    "modelVersion",
    "responseId",
    "promptFeedback",
    "createTime",
];

/// Keys a candidate may have besides `content`.
const CANDIDATE_KEYS: &[&str] = &[
    "finishReason",
    "finishMessage",
    "index",
    "safetyRatings",
    "citationMetadata",
    "avgLogprobs",
    "logprobsResult",
    "tokenCount",
    "groundingMetadata",
    "urlContextMetadata",
];

/// Keys a text part may have.
const TEXT_PART_KEYS: &[&str] = &["text", "thought", "thoughtSignature"];

/// `true` for a Gemini text part, which carries no call.
pub(super) fn is_text_part(obj: &Map<String, Value>) -> bool {
    obj.contains_key("text") && obj.keys().all(|k| TEXT_PART_KEYS.contains(&k.as_str()))
}

/// `true` for a Gemini model turn: a content (`parts`) or a response (`candidates`).
pub(super) fn is_turn(obj: &Map<String, Value>) -> bool {
    obj.contains_key("parts") || obj.contains_key("candidates")
}

/// The parts of a Gemini turn ([`is_turn`]) and the JSON path they are at.
pub(super) fn turn_parts(mut obj: Map<String, Value>) -> Result<(Vec<Value>, String), ParseError> {
    if !obj.contains_key("candidates") {
        return content_parts(obj, "$");
    }
    only_keys(
        &obj,
        &["candidates"],
        RESPONSE_KEYS,
        "$",
        "a Gemini response",
    )?;
    let candidate = match obj.remove("candidates") {
        Some(Value::Array(mut all)) if all.len() == 1 => all.remove(0),
        Some(Value::Array(all)) => {
            return Err(ParseError::new(format!(
                "$.candidates has {} candidates; exactly one is accepted (which one to run \
                 cannot be guessed)",
                all.len()
            )))
        }
        _ => return Err(ParseError::new("$.candidates must be an array")),
    };
    let Value::Object(mut candidate) = candidate else {
        return Err(ParseError::new("$.candidates[0] must be a JSON object"));
    };
    only_keys(
        &candidate,
        &["content"],
        CANDIDATE_KEYS,
        "$.candidates[0]",
        "a Gemini candidate",
    )?;
    match candidate.remove("content") {
        Some(Value::Object(content)) => content_parts(content, "$.candidates[0].content"),
        _ => Err(ParseError::new(
            "$.candidates[0].content must be a JSON object",
        )),
    }
}

/// `{"role": "model"?, "parts": [...]}`.
fn content_parts(
    mut content: Map<String, Value>,
    path: &str,
) -> Result<(Vec<Value>, String), ParseError> {
    only_keys(&content, &["parts"], &["role"], path, "a Gemini content")?;
    match content.get("role") {
        None => {}
        Some(Value::String(role)) if role == "model" => {}
        Some(_) => {
            return Err(ParseError::new(format!(
                "{path}.role must be \"model\": only the model's turn carries function calls"
            )))
        }
    }
    match content.remove("parts") {
        Some(Value::Array(parts)) => Ok((parts, format!("{path}.parts"))),
        _ => Err(ParseError::new(format!("{path}.parts must be an array"))),
    }
}

/// A part `{"functionCall": {"name", "args"?, "id"?}, "thoughtSignature"?}`.
pub(super) fn function_call(
    mut part: Map<String, Value>,
    path: &str,
) -> Result<ToolCall, ParseError> {
    only_keys(
        &part,
        &["functionCall"],
        &["thoughtSignature", "thought"],
        path,
        "a Gemini functionCall part",
    )?;
    let fpath = format!("{path}.functionCall");
    let Some(Value::Object(mut call)) = part.remove("functionCall") else {
        return Err(ParseError::new(format!("{fpath} must be a JSON object")));
    };
    only_keys(
        &call,
        &["name"],
        &["args", "id"],
        &fpath,
        "a Gemini functionCall",
    )?;
    let id = optional_id(call.remove("id"), &format!("{fpath}.id"))?;
    let name = name(call.remove("name"), &format!("{fpath}.name"))?;
    let arguments = match call.remove("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args,
        Some(_) => {
            return Err(ParseError::new(format!(
                "{fpath}.args must be a JSON object"
            )))
        }
    };
    Ok(ToolCall {
        name,
        arguments,
        id,
        dialect: Some(Dialect::Gemini),
    })
}
