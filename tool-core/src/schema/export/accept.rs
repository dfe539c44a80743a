//! What we export, we accept: a call shaped by a dialect's exported schema, mapped back to what
//! the canonical schema expects before validation.
//!
//! | dialect | what its export changes in the values a model sends | mapped back |
//! |---|---|---|
//! | [`Dialect::OpenAiStrict`] | optional properties made required and nullable: the model sends `null` for "absent" | [`strip_optional_nulls`]: a `null` for a property the canonical schema makes optional and does not let be `null` is removed |
//! | [`Dialect::Gemini`] | nothing: every downgrade of a registry export is written into a description, and numbers arrive as JSON numbers (an integral `5.0` reaches a handler as the integer `5` in every dialect) | identity |
//! | [`Dialect::Anthropic`], [`Dialect::Mcp`], [`Dialect::Canonical`] | nothing: the schema is the canonical one, minus `$schema` | identity |
//!
//! The mapping never widens what is accepted: the mapped arguments are validated against the
//! canonical schema as before, so a `null` the canonical schema refuses where it requires a value
//! is still refused. Schemas declared elsewhere ([`super::convert`]) have their own
//! [`map_back`](super::convert::Conversion::map_back), which also undoes the structural
//! downgrades of a conversion.
//!
//! Which dialect a call is mapped from: the executor's configured one
//! ([`ExecutorConfig::dialect`](crate::executor::ExecutorConfig::dialect), `call --dialect`) when
//! set, else the one its envelope says ([`ToolCall::dialect`](crate::call::ToolCall::dialect)):
//! OpenAI Chat Completions and Responses calls are read as strict OpenAI (stripping a `null` an
//! optional property cannot hold is sound whether or not the tools were exported strict),
//! Anthropic `tool_use` as Anthropic, Gemini `functionCall` as Gemini; the `{"tool", "args"}`
//! shape and text actions are canonical.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::common::{accepts_null, resolve_local_ref, type_includes};

/// Longest chain of `$ref`s followed while mapping.
const MAX_DEPTH: usize = 64;

/// The schema dialect a call was shaped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Dialect {
    /// The canonical schema as registered.
    Canonical,
    /// OpenAI strict mode (structured outputs), see [`super::openai`].
    #[cfg_attr(feature = "cli", value(name = "openai-strict"))]
    OpenAiStrict,
    /// Anthropic Messages `input_schema`.
    Anthropic,
    /// Gemini function declarations, see [`super::gemini`].
    Gemini,
    /// MCP `tools/list` `inputSchema`.
    Mcp,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 5] = [
        Dialect::Canonical,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// The name `call --dialect` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Canonical => "canonical",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Mcp => "mcp",
        }
    }

    /// Map `args`, shaped by this dialect's export of `schema` (the canonical input schema), back
    /// to what `schema` expects (see the [module docs](self)).
    pub fn map_back(self, schema: &Value, args: &mut Value) {
        match self {
            Dialect::OpenAiStrict => strip_optional_nulls(schema, args),
            Dialect::Canonical | Dialect::Anthropic | Dialect::Gemini | Dialect::Mcp => {}
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dialect name that is not one of [`Dialect::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect `{0}`; expected canonical, openai-strict, anthropic, gemini or mcp")]
pub struct UnknownDialect(pub String);

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

/// Remove, recursively, the `null` values strict mode makes the model send for optional
/// properties that do not themselves accept `null` in the canonical `schema`. Run it on a strict
/// model's arguments before validation; a `null` where the canonical schema requires a value is
/// left alone (and refused by validation). Inside `anyOf`/`oneOf`, the first alternative the
/// value fits once its optional `null`s are gone is the one followed; `allOf` items are all
/// followed; names outside `properties` follow the one `patternProperties` schema, or the
/// `additionalProperties` schema.
pub fn strip_optional_nulls(schema: &Value, args: &mut Value) {
    strip_nulls_at(schema, schema, args, 0);
}

fn strip_nulls_at(root: &Value, schema: &Value, args: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => match resolve_local_ref(root, r) {
            Some(s) => s,
            None => return,
        },
        None => schema,
    };
    match args {
        Value::Object(obj) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(props) = props {
                let required = required_names(schema);
                obj.retain(|k, v| {
                    !(v.is_null()
                        && !required.contains(k.as_str())
                        && props.get(k).is_some_and(|p| !accepts_null_deep(root, p, 0)))
                });
            }
            // The other names' schema: the one `patternProperties` pattern (without a regex
            // engine the match is not checked; validation does), else `additionalProperties`.
            let patterns = schema.get("patternProperties").and_then(Value::as_object);
            let rest = match patterns {
                Some(p) if p.len() == 1 => p.values().next(),
                Some(_) => None,
                None => schema.get("additionalProperties").filter(|a| a.is_object()),
            };
            for (k, v) in obj.iter_mut() {
                if let Some(p) = props.and_then(|p| p.get(k)).or(rest) {
                    strip_nulls_at(root, p, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for v in items.iter_mut() {
                    strip_nulls_at(root, item_schema, v, depth + 1);
                }
            }
        }
        _ => return,
    }
    for item in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        strip_nulls_at(root, item, args, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        let Some(alts) = schema.get(key).and_then(Value::as_array) else {
            continue;
        };
        for alt in alts {
            let mut candidate = args.clone();
            strip_nulls_at(root, alt, &mut candidate, depth + 1);
            if value_fits(root, alt, &candidate, depth + 1) {
                *args = candidate;
                break;
            }
        }
    }
}

fn required_names(schema: &Value) -> BTreeSet<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether an object or array plausibly belongs to an alternative (see [`object_fits`]; an array
/// fits an alternative that allows arrays).
fn value_fits(root: &Value, alt: &Value, value: &Value, depth: usize) -> bool {
    if !value.is_array() {
        return object_fits(root, alt, value, depth);
    }
    let alt = match alt.get("$ref").and_then(Value::as_str) {
        Some(r) => match resolve_local_ref(root, r) {
            Some(s) => s,
            None => return false,
        },
        None => alt,
    };
    match alt {
        Value::Object(m) => match m.get("type") {
            Some(_) => type_includes(m, "array"),
            None => !m.contains_key("properties"),
        },
        other => other == &Value::Bool(true),
    }
}

/// Whether an object plausibly belongs to an alternative: its required names are present, no
/// name a closed alternative forbids is there, and its `const`/`enum` properties (the
/// discriminators) hold allowed values.
fn object_fits(root: &Value, alt: &Value, value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let alt = match alt.get("$ref").and_then(Value::as_str) {
        Some(r) => match resolve_local_ref(root, r) {
            Some(s) => s,
            None => return false,
        },
        None => alt,
    };
    let Value::Object(obj) = value else {
        return false;
    };
    let Value::Object(m) = alt else {
        return alt == &Value::Bool(true);
    };
    if m.get("type").is_some_and(|_| !type_includes(m, "object")) {
        return false;
    }
    if required_names(alt).iter().any(|n| !obj.contains_key(*n)) {
        return false;
    }
    let props = m.get("properties").and_then(Value::as_object);
    if m.get("additionalProperties") == Some(&Value::Bool(false))
        && obj
            .keys()
            .any(|k| !props.is_some_and(|p| p.contains_key(k)))
    {
        return false;
    }
    for (k, v) in obj {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            continue;
        };
        if p.get("const").is_some_and(|c| c != v) {
            return false;
        }
        if let Some(e) = p.get("enum").and_then(Value::as_array) {
            if !e.contains(v) {
                return false;
            }
        }
    }
    true
}
/// `true` when the schema (following local refs) lets `null` through at its top level.
fn accepts_null_deep(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match schema {
        Value::Bool(b) => *b,
        Value::Object(m) => {
            if m.is_empty() {
                return true;
            }
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                return resolve_local_ref(root, r)
                    .is_some_and(|t| accepts_null_deep(root, t, depth + 1));
            }
            if accepts_null(m) {
                return true;
            }
            ["anyOf", "oneOf"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|alts| alts.iter().any(|a| accepts_null_deep(root, a, depth + 1)))
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn dialect_names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(d.as_str().parse::<Dialect>(), Ok(d));
        }
        assert!("openai".parse::<Dialect>().is_err());
    }

    #[test]
    fn strip_optional_nulls_keeps_required_and_nullable_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer"},
                "c": {"type": ["string", "null"]},
                "n": {"$ref": "#/$defs/N"}
            },
            "required": ["a"],
            "$defs": {"N": {"type": "object", "properties": {"x": {"type": "integer"}}}}
        });
        let mut args = json!({"a": null, "b": null, "c": null, "n": {"x": null}});
        strip_optional_nulls(&schema, &mut args);
        assert_eq!(args, json!({"a": null, "c": null, "n": {}}));
    }
}
