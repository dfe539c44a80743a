//! The call id and tool name of a call that did not parse, read from its envelope alone, so its
//! refusal is answered under the id the provider expects.
//!
//! The envelope is read leniently (the arguments are never looked at: malformed `arguments`
//! strings, duplicate keys in `input` or `args`, oversized values all leave it readable), but
//! what it yields is checked: an envelope key given twice yields nothing, the id is taken only
//! from the key its shape names (`call_id` for a Responses `function_call`, `id` for a Chat
//! Completions call or a `tool_use` block, `functionCall.id` for a Gemini part), and an id that
//! is not [`valid_call_id`] is dropped and the message says the reply carries a fresh one.

use serde::Deserialize;
use serde_json::Value;

use super::types::{quoted, valid_call_id, ParseError, MAX_CALL_ID_LEN};

/// The envelope keys that name a call's id or tool; every other key is skipped unread.
#[derive(Deserialize, Default)]
struct Envelope {
    #[serde(rename = "type", default)]
    kind: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    call_id: Option<Value>,
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    function: Option<Named>,
    #[serde(rename = "functionCall", default)]
    function_call: Option<Named>,
}

/// `{"id"?, "name"?, ...}`, the rest skipped unread.
#[derive(Deserialize, Default)]
struct Named {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    name: Option<Value>,
}

/// Longest tool name kept from an envelope that did not parse.
const MAX_NAME_LEN: usize = 256;

/// `err` with the id and name of the envelope in `doc` (a JSON document), where it names them.
pub(super) fn from_doc(err: ParseError, doc: &str) -> ParseError {
    match serde_json::from_str::<Envelope>(doc) {
        Ok(envelope) => attach(err, envelope),
        Err(_) => err,
    }
}

/// `err` with the id and name of the envelope `item` (one call of a turn), where it names them.
pub(super) fn from_value(err: ParseError, item: &Value) -> ParseError {
    match Envelope::deserialize(item) {
        Ok(envelope) => attach(err, envelope),
        Err(_) => err,
    }
}

fn attach(mut err: ParseError, envelope: Envelope) -> ParseError {
    let as_str = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_owned);
    let kind = as_str(&envelope.kind);
    let (id, name) = match (kind.as_deref(), &envelope.function_call) {
        (Some("function_call"), _) => (as_str(&envelope.call_id), as_str(&envelope.name)),
        (Some("function"), _) => (
            as_str(&envelope.id),
            envelope.function.as_ref().and_then(|f| as_str(&f.name)),
        ),
        (Some("tool_use"), _) => (as_str(&envelope.id), as_str(&envelope.name)),
        (None, Some(call)) => (as_str(&call.id), as_str(&call.name)),
        // `{"tool", "args"}` names no id; a malformed one names no tool either.
        _ => (None, None),
    };
    if err.tool.is_none() {
        err.tool = name.filter(|n| !n.is_empty() && n.len() <= MAX_NAME_LEN);
    }
    match id {
        Some(id) if valid_call_id(&id) => err.call_id = Some(id),
        Some(id) => {
            err.message.push_str(&format!(
                "; the call id {} is not a valid id (1 to {MAX_CALL_ID_LEN} ASCII letters, digits, \
                 `_` and `-`), so this reply carries a fresh id instead",
                quoted(&id)
            ));
        }
        None => {}
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn salvage(doc: &str) -> (Option<String>, Option<String>) {
        let e = from_doc(ParseError::new("bad"), doc);
        (e.call_id, e.tool)
    }

    #[test]
    fn each_shape_names_its_id() {
        let s = |id: &str, tool: &str| (Some(id.to_owned()), Some(tool.to_owned()));
        assert_eq!(
            salvage(r#"{"id":"call_8","type":"function","function":{"name":"f","arguments":"{"}}"#),
            s("call_8", "f")
        );
        assert_eq!(
            salvage(
                r#"{"type":"function_call","id":"fc_1","call_id":"call_2","name":"f","arguments":"x"}"#
            ),
            s("call_2", "f")
        );
        assert_eq!(
            salvage(r#"{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1,"a":2}}"#),
            s("toolu_1", "f")
        );
        assert_eq!(
            salvage(r#"{"functionCall":{"id":"g1","name":"f","args":{"a":1,"a":2}}}"#),
            s("g1", "f")
        );
    }

    #[test]
    fn ambiguous_or_invalid_envelopes_name_nothing() {
        // A key given twice: which id is meant cannot be known.
        assert_eq!(
            salvage(r#"{"type":"tool_use","id":"a","id":"b","name":"f","input":{}}"#),
            (None, None)
        );
        // Not JSON at all, or a shape that names no id.
        assert_eq!(salvage(r#"{"type":"tool_use","id":"a""#), (None, None));
        assert_eq!(salvage(r#"{"type":"other","id":"a"}"#), (None, None));
        let e = from_doc(
            ParseError::new("bad"),
            r#"{"type":"tool_use","id":"../../etc","name":"f","input":[]}"#,
        );
        assert_eq!(e.call_id, None);
        assert!(e.message.contains("fresh id"), "{}", e.message);
    }
}
