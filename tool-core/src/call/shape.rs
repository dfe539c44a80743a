//! Which call shape a parsed JSON object is, and the `ToolCall` it holds.

use serde_json::{Map, Value};

use super::fields::{name, only_keys, optional_id};
use super::types::{quoted, ParseError, ParseLimits, ToolCall};
use super::{gemini, json};
use crate::schema::export::Dialect;

/// Item types of a model turn that carry no call and are skipped in a batch.
const SKIPPED_TYPES: &[&str] = &[
    "text",
    "thinking",
    "redacted_thinking",
    "message",
    "reasoning",
];

/// Keys an assistant message may have besides `role`.
const MESSAGE_KEYS: &[&str] = &["content", "tool_calls", "refusal", "annotations"];

/// One call from a JSON object at `path` (for messages).
pub(super) fn call_from_object(
    obj: Map<String, Value>,
    path: &str,
    limits: &ParseLimits,
) -> Result<ToolCall, ParseError> {
    if obj.contains_key("tool") || obj.contains_key("args") {
        return tool_args(obj, path);
    }
    if obj.contains_key("functionCall") {
        return gemini::function_call(obj, path);
    }
    let Some(kind) = obj.get("type") else {
        return Err(ParseError::new(format!(
            "unrecognised call shape at {path}: expected {{\"tool\", \"args\"}}, a Gemini \
             {{\"functionCall\"}} part or a \"type\" of \"function\", \"function_call\" or \
             \"tool_use\"; found keys {}",
            key_list(&obj)
        )));
    };
    match kind.as_str() {
        Some("function") => chat_completions(obj, path, limits),
        Some("function_call") => responses(obj, path, limits),
        Some("tool_use") => anthropic(obj, path),
        Some(other) => Err(ParseError::new(format!(
            "unknown call type {} at {path}.type; expected \"function\", \"function_call\" or \
             \"tool_use\"",
            quoted(other)
        ))),
        None => Err(ParseError::new(format!("{path}.type must be a string"))),
    }
}

/// `true` for content blocks and items that carry no call (`text`, `thinking`, …, and Gemini's
/// text parts).
pub(super) fn carries_no_call(obj: &Map<String, Value>) -> bool {
    match obj.get("type") {
        Some(Value::String(kind)) => SKIPPED_TYPES.contains(&kind.as_str()),
        Some(_) => false,
        None => gemini::is_text_part(obj),
    }
}

/// The calls of a JSON array (a model turn), skipping items that carry no call.
pub(super) fn calls_from_array(
    items: Vec<Value>,
    path: &str,
    limits: &ParseLimits,
) -> Result<Vec<ToolCall>, ParseError> {
    let mut calls = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        let Value::Object(obj) = item else {
            return Err(ParseError::new(format!(
                "{item_path} must be a JSON object (a call or a content block)"
            )));
        };
        if carries_no_call(&obj) {
            continue;
        }
        calls.push(call_from_object(obj, &item_path, limits)?);
    }
    Ok(calls)
}

/// The calls of a JSON object: an assistant message, a Gemini turn, or a single call.
pub(super) fn calls_from_object(
    mut obj: Map<String, Value>,
    limits: &ParseLimits,
) -> Result<Vec<ToolCall>, ParseError> {
    if gemini::is_turn(&obj) {
        let (parts, path) = gemini::turn_parts(obj)?;
        return calls_from_array(parts, &path, limits);
    }
    if !obj.contains_key("role") {
        return Ok(vec![call_from_object(obj, "$", limits)?]);
    }
    let (items, path) = message_items(&mut obj)?;
    calls_from_array(items, &path, limits)
}

/// The items of an assistant message that may hold calls (its `tool_calls`, else its content
/// blocks) and their JSON path.
pub(super) fn message_items(
    obj: &mut Map<String, Value>,
) -> Result<(Vec<Value>, String), ParseError> {
    only_keys(obj, &["role"], MESSAGE_KEYS, "$", "an assistant message")?;
    if obj.get("role").and_then(Value::as_str) != Some("assistant") {
        return Err(ParseError::new(
            "$.role must be \"assistant\": only an assistant message carries tool calls",
        ));
    }
    let content = obj.remove("content");
    match obj.remove("tool_calls") {
        Some(Value::Array(items)) => {
            if matches!(content, Some(Value::Array(_))) {
                return Err(ParseError::new(
                    "$ has both \"tool_calls\" and a content-block array; send one or the other",
                ));
            }
            Ok((items, "$.tool_calls".to_owned()))
        }
        Some(Value::Null) | None => match content {
            Some(Value::Array(blocks)) => Ok((blocks, "$.content".to_owned())),
            _ => Ok((Vec::new(), "$.content".to_owned())),
        },
        Some(_) => Err(ParseError::new("$.tool_calls must be an array")),
    }
}

/// `{"tool": NAME, "args": {...}}`, exactly those keys.
fn tool_args(mut obj: Map<String, Value>, path: &str) -> Result<ToolCall, ParseError> {
    only_keys(
        &obj,
        &["tool", "args"],
        &[],
        path,
        "a {\"tool\", \"args\"} call",
    )?;
    let name = name(obj.remove("tool"), &format!("{path}.tool"))?;
    let Some(Value::Object(args)) = obj.remove("args") else {
        return Err(ParseError::new(format!(
            "{path}.args is missing or not a JSON object"
        )));
    };
    Ok(ToolCall::new(name, args))
}

/// OpenAI Chat Completions: `{"type": "function", "function": {"name", "arguments"}, "id"?}`.
fn chat_completions(
    mut obj: Map<String, Value>,
    path: &str,
    limits: &ParseLimits,
) -> Result<ToolCall, ParseError> {
    only_keys(
        &obj,
        &["type", "function"],
        &["id"],
        path,
        "an OpenAI tool call",
    )?;
    let id = optional_id(obj.remove("id"), &format!("{path}.id"))?;
    let fpath = format!("{path}.function");
    let Some(Value::Object(mut function)) = obj.remove("function") else {
        return Err(ParseError::new(format!("{fpath} must be a JSON object")));
    };
    only_keys(
        &function,
        &["name", "arguments"],
        &[],
        &fpath,
        "an OpenAI function",
    )?;
    let name = name(function.remove("name"), &format!("{fpath}.name"))?;
    let arguments = arguments_string(
        function.remove("arguments"),
        &format!("{fpath}.arguments"),
        limits,
    )?;
    Ok(ToolCall {
        name,
        arguments,
        id,
        dialect: Some(Dialect::OpenAiStrict),
    })
}

/// OpenAI Responses API: `{"type": "function_call", "name", "arguments", "call_id", "id"?,
/// "status"?}`.
fn responses(
    mut obj: Map<String, Value>,
    path: &str,
    limits: &ParseLimits,
) -> Result<ToolCall, ParseError> {
    only_keys(
        &obj,
        &["type", "name", "arguments", "call_id"],
        &["id", "status"],
        path,
        "an OpenAI Responses function_call",
    )?;
    optional_id(obj.remove("id"), &format!("{path}.id"))?;
    match obj.remove("status") {
        None => {}
        Some(Value::String(s)) if s == "completed" => {}
        Some(other) => {
            return Err(ParseError::new(format!(
                "{path}.status is {other}; only a \"completed\" function_call is accepted"
            )))
        }
    }
    let call_id = optional_id(obj.remove("call_id"), &format!("{path}.call_id"))?;
    let name = name(obj.remove("name"), &format!("{path}.name"))?;
    let arguments = arguments_string(
        obj.remove("arguments"),
        &format!("{path}.arguments"),
        limits,
    )?;
    Ok(ToolCall {
        name,
        arguments,
        id: call_id,
        dialect: Some(Dialect::OpenAiStrict),
    })
}

/// Anthropic: `{"type": "tool_use", "id", "name", "input"}`.
fn anthropic(mut obj: Map<String, Value>, path: &str) -> Result<ToolCall, ParseError> {
    only_keys(
        &obj,
        &["type", "id", "name", "input"],
        &[],
        path,
        "an Anthropic tool_use block",
    )?;
    let id = optional_id(obj.remove("id"), &format!("{path}.id"))?;
    let name = name(obj.remove("name"), &format!("{path}.name"))?;
    let Some(Value::Object(input)) = obj.remove("input") else {
        return Err(ParseError::new(format!(
            "{path}.input must be a JSON object"
        )));
    };
    Ok(ToolCall {
        name,
        arguments: input,
        id,
        dialect: Some(Dialect::Anthropic),
    })
}

/// OpenAI sends arguments as a string holding a JSON object: parse it as strictly as the rest.
fn arguments_string(
    value: Option<Value>,
    path: &str,
    limits: &ParseLimits,
) -> Result<Map<String, Value>, ParseError> {
    let Some(Value::String(text)) = value else {
        return Err(ParseError::new(format!(
            "{path} must be a string holding a JSON object"
        )));
    };
    // Depth 1 is the call object around the arguments, as in `{"tool", "args"}`.
    match json::parse_nested(&text, limits, 1) {
        Ok(Value::Object(args)) => Ok(args),
        Ok(_) => Err(ParseError::new(format!("{path} must hold a JSON object"))),
        Err(e) => Err(ParseError::new(format!("in {path}: {}", e.message))),
    }
}

fn key_list(obj: &Map<String, Value>) -> String {
    if obj.is_empty() {
        return "none".to_owned();
    }
    obj.keys().map(|k| quoted(k)).collect::<Vec<_>>().join(", ")
}
