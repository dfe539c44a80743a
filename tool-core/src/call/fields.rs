//! The fields every call envelope shares: its keys, its tool name, its call id.

use serde_json::{Map, Value};

use super::types::{quoted, valid_call_id, ParseError};

/// Refuse missing `required` keys and any key outside `required` and `optional`.
pub(super) fn only_keys(
    obj: &Map<String, Value>,
    required: &[&str],
    optional: &[&str],
    path: &str,
    what: &str,
) -> Result<(), ParseError> {
    if let Some(extra) = obj
        .keys()
        .find(|k| !required.contains(&k.as_str()) && !optional.contains(&k.as_str()))
    {
        return Err(ParseError::new(format!(
            "unexpected key {} at {path} in {what}; allowed keys: {}",
            quoted(extra),
            required
                .iter()
                .chain(optional)
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if let Some(missing) = required.iter().find(|k| !obj.contains_key(**k)) {
        return Err(ParseError::new(format!(
            "missing key {missing:?} at {path} in {what}"
        )));
    }
    Ok(())
}

pub(super) fn name(value: Option<Value>, path: &str) -> Result<String, ParseError> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) => Err(ParseError::new(format!("{path} is an empty tool name"))),
        _ => Err(ParseError::new(format!("{path} must be a string"))),
    }
}

/// An id is a [`valid_call_id`] string when present; `null` counts as absent. A string that is
/// not a valid id is never used: the call goes on under a fresh id, as if it had none.
pub(super) fn optional_id(value: Option<Value>, path: &str) -> Result<Option<String>, ParseError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if valid_call_id(&s) => Ok(Some(s)),
        Some(Value::String(s)) if !s.is_empty() => Ok(None),
        Some(_) => Err(ParseError::new(format!(
            "{path} must be a non-empty string"
        ))),
    }
}
