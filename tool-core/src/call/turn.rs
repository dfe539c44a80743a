//! A model turn read call by call: each call parsed on its own, a bad one refused in its place
//! (under the id its envelope names) while the others still run.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::input::{classify, Input};
use super::types::{ParseError, ParseLimits, ToolCall};
use super::{gemini, json, salvage, shape, text};

/// What one input holds: a single call, or a model turn of calls.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A single call (any shape of [`parse_call`](super::parse_call), text actions included).
    Call(Result<ToolCall, ParseError>),
    /// A model turn's calls in their order, each parsed on its own.
    Calls(Vec<Result<ToolCall, ParseError>>),
}

/// Read `input` as a single call or as a model turn of calls.
///
/// A turn is a JSON array of calls and content blocks, an assistant message (`tool_calls` or
/// content blocks), a Gemini content (`parts`) or a Gemini response (`candidates`), as in
/// [`parse_batch`](super::parse_batch); items that carry no call are skipped. Each call is parsed
/// on its own: one of an unknown shape, or whose arguments are malformed, is refused in its place
/// and keeps the id its envelope names. A JSON array that is not strict JSON as a whole (a
/// duplicate key inside one call) is split into its items, each judged strictly on its own.
/// `Err` only when the input cannot be read as any of these (too large, not JSON, a turn of more
/// than [`ParseLimits::max_calls`] calls, a turn object whose envelope is malformed).
pub fn parse_turn(input: &str, limits: &ParseLimits) -> Result<Turn, ParseError> {
    let doc = match classify(input, limits)? {
        Input::Text(text) => return Ok(Turn::Call(text::parse(text, limits))),
        Input::Json(doc) => doc,
    };
    let calls = match json::parse(doc, limits) {
        Ok(Value::Array(items)) => items_to_calls(items, "$", limits),
        Ok(Value::Object(obj)) => match turn_items(obj)? {
            TurnOf::Items(items, path) => items_to_calls(items, &path, limits),
            TurnOf::Single(obj) => {
                let parsed = shape::call_from_object(obj.clone(), "$", limits);
                return Ok(Turn::Call(
                    parsed.map_err(|e| salvage::from_value(e, &Value::Object(obj))),
                ));
            }
        },
        Ok(_) => return Err(ParseError::new("a call must be a JSON object")),
        Err(err) => match split_array(doc) {
            Some(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| parse_item(item, i, limits))
                .collect(),
            None if doc.trim_start().starts_with('[') => return Err(err),
            None => return Ok(Turn::Call(Err(salvage::from_doc(err, doc)))),
        },
    };
    if calls.len() > limits.max_calls {
        return Err(ParseError::new(format!(
            "the turn has {} calls; the limit is {}",
            calls.len(),
            limits.max_calls
        )));
    }
    Ok(Turn::Calls(calls))
}

/// Parse a model turn item by item, as [`parse_turn`] does; a single call is refused here (a
/// turn is a JSON array of calls or a turn object).
pub fn parse_turn_items(
    input: &str,
    limits: &ParseLimits,
) -> Result<Vec<Result<ToolCall, ParseError>>, ParseError> {
    match parse_turn(input, limits)? {
        Turn::Calls(calls) => Ok(calls),
        Turn::Call(_) => Err(ParseError::new(
            "a model turn here must be a JSON array of calls or a model's message",
        )),
    }
}

/// Where a turn object's calls are.
enum TurnOf {
    Items(Vec<Value>, String),
    Single(Map<String, Value>),
}

fn turn_items(mut obj: Map<String, Value>) -> Result<TurnOf, ParseError> {
    if gemini::is_turn(&obj) {
        let (parts, path) = gemini::turn_parts(obj)?;
        return Ok(TurnOf::Items(parts, path));
    }
    if !obj.contains_key("role") {
        return Ok(TurnOf::Single(obj));
    }
    let (items, path) = shape::message_items(&mut obj)?;
    Ok(TurnOf::Items(items, path))
}

/// The calls of a turn's items, skipping those that carry no call; each refused in its place.
fn items_to_calls(
    items: Vec<Value>,
    path: &str,
    limits: &ParseLimits,
) -> Vec<Result<ToolCall, ParseError>> {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        let parsed = match &item {
            Value::Object(obj) if shape::carries_no_call(obj) => continue,
            Value::Object(obj) => shape::call_from_object(obj.clone(), &item_path, limits),
            _ => Err(ParseError::new(format!(
                "{item_path} must be a JSON object (a call or a content block)"
            ))),
        };
        out.push(parsed.map_err(|e| salvage::from_value(e, &item)));
    }
    out
}

/// One item of an array that was split because it is not strict JSON as a whole: judged
/// strictly on its own (one level deep, as it sits in the array).
fn parse_item(item: &str, i: usize, limits: &ParseLimits) -> Result<ToolCall, ParseError> {
    let path = format!("$[{i}]");
    let value = json::parse_nested(item, limits, 1)
        .map_err(|e| salvage::from_doc(ParseError::new(format!("{path}: {}", e.message)), item))?;
    match &value {
        Value::Object(obj) => shape::call_from_object(obj.clone(), &path, limits)
            .map_err(|e| salvage::from_value(e, &value)),
        _ => Err(ParseError::new(format!(
            "{path} must be a JSON object (a call or a content block)"
        ))),
    }
}

/// The items of a JSON array as text, when the array is well-formed JSON apart from what each
/// item holds (read leniently, each item is judged strictly afterwards); `None` otherwise.
fn split_array(doc: &str) -> Option<Vec<&str>> {
    let mut rest = doc.trim_start().strip_prefix('[')?;
    let mut items = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(']') {
            return after.trim().is_empty().then_some(items);
        }
        if !items.is_empty() {
            rest = rest.strip_prefix(',')?.trim_start();
        }
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
        stream.next()?.ok()?;
        let end = stream.byte_offset();
        items.push(&rest[..end]);
        rest = &rest[end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_split_into_their_items() {
        assert_eq!(
            split_array(r#" [ {"a":1,"a":2} , {"b":[1]}]"#),
            Some(vec![r#"{"a":1,"a":2}"#, r#"{"b":[1]}"#])
        );
        assert_eq!(split_array("[]"), Some(vec![]));
        assert_eq!(split_array("[{},]"), None);
        assert_eq!(split_array("[{} {}]"), None);
        assert_eq!(split_array("[{}] x"), None);
        assert_eq!(split_array("[{\"a\":"), None);
    }
}
