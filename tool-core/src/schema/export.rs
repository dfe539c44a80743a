//! Provider dialects of the tool list: canonical, OpenAI, Anthropic, Gemini, MCP.
//!
//! Every dialect is computed from the registry's declarations; the output is deterministic (keys
//! sorted at every level, see [`canonical_bytes`](super::canonical_bytes)), so the same registry
//! always exports the same bytes.
//!
//! A construct a dialect cannot express is either an [`ExportError`] naming the tool and the JSON
//! pointer of the construct in its input schema, or a documented downgrade: the keyword is removed
//! from the schema and written into that schema's `description` as
//! `Constraints: key=value, ...`, so the model still reads it and the
//! executor, which validates against the full canonical schema, still enforces it. Nothing is
//! dropped silently, except pure metadata no provider reads (`$schema`, `$id`, `$comment`,
//! `$anchor`).
//!
//! - [`Format::Canonical`]: the registry's canonical dump, byte for byte (what gets pinned).
//! - [`Format::OpenAi`]: the Chat Completions `tools` array. Without `strict`, each input schema as
//!   is (minus `$schema`) and `"strict": false`. With `strict`, see [`openai`] for the rewrite
//!   rules, downgrades and errors.
//! - [`Format::Anthropic`]: `[{name, description, input_schema}]`, the schema as is (minus
//!   `$schema`): the Messages API takes full JSON Schema.
//! - [`Format::Gemini`]: `{"functionDeclarations": [...]}` in Gemini's OpenAPI 3.0 subset, see
//!   [`gemini`].
//! - [`Format::Mcp`]: the MCP `tools/list` result with annotations, see [`mcp`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use crate::decl::ToolDecl;
use crate::registry::Registry;

pub mod gemini;
pub mod mcp;
pub mod openai;

/// A provider dialect the tool list can be exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// The registry's canonical dump: the bytes that get pinned.
    Canonical,
    /// OpenAI Chat Completions `tools` (function tools, optionally strict).
    OpenAi,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// Gemini `functionDeclarations` (OpenAPI 3.0 schema subset).
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 5] = [
        Format::Canonical,
        Format::OpenAi,
        Format::Anthropic,
        Format::Gemini,
        Format::Mcp,
    ];

    /// The stable name used on the command line and in errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Canonical => "canonical",
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown export format `{0}`; expected one of: canonical, openai, anthropic, gemini, mcp")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

/// Options of an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// OpenAI strict mode (structured outputs). Ignored by the other formats.
    pub strict: bool,
}

/// A schema construct the chosen dialect cannot express. Reason code `schema_not_expressible`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{format} export: tool `{tool}`: at `{path}` in the input schema: {reason}")]
pub struct ExportError {
    /// The dialect.
    pub format: Format,
    /// The tool whose schema cannot be expressed.
    pub tool: String,
    /// JSON pointer into the tool's input schema (`""` for the root).
    pub path: String,
    /// What cannot be expressed, and why.
    pub reason: String,
}

impl ExportError {
    /// The stable reason code of every export error.
    pub const CODE: &'static str = "schema_not_expressible";

    /// The stable reason code (`schema_not_expressible`).
    pub fn code(&self) -> &'static str {
        Self::CODE
    }
}

/// Export the registry in `format` as bytes: for [`Format::Canonical`] exactly
/// [`Registry::canonical_dump`], otherwise [`canonical_bytes`](super::canonical_bytes) of
/// [`export_value`].
pub fn export(
    registry: &Registry,
    format: Format,
    opts: ExportOptions,
) -> Result<Vec<u8>, ExportError> {
    match format {
        Format::Canonical => Ok(registry.canonical_dump().to_vec()),
        _ => Ok(super::canonical_bytes(&export_value(
            registry, format, opts,
        )?)),
    }
}

/// Export the registry in `format` as a JSON value (tools in name order).
pub fn export_value(
    registry: &Registry,
    format: Format,
    opts: ExportOptions,
) -> Result<Value, ExportError> {
    let decls = || registry.iter().map(|t| t.decl());
    match format {
        Format::Canonical => {
            serde_json::from_slice(registry.canonical_dump()).map_err(|e| ExportError {
                format,
                tool: "*".to_owned(),
                path: String::new(),
                reason: format!("the canonical dump does not parse: {e}"),
            })
        }
        Format::OpenAi => decls()
            .map(|d| openai::tool(d, opts))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Format::Anthropic => Ok(Value::Array(decls().map(anthropic_tool).collect())),
        Format::Gemini => decls()
            .map(gemini::declaration)
            .collect::<Result<Vec<_>, _>>()
            .map(|d| json!({ "functionDeclarations": d })),
        Format::Mcp => Ok(mcp::tools_list(decls())),
    }
}

/// One tool in the Anthropic Messages API shape: `{name, description, input_schema}`.
pub fn anthropic_tool(decl: &ToolDecl) -> Value {
    json!({
        "name": decl.name,
        "description": decl.description,
        "input_schema": without_schema_keyword(&decl.input_schema),
    })
}

/// The schema without its root `$schema` keyword (providers ignore or reject it).
pub(crate) fn without_schema_keyword(schema: &Value) -> Value {
    let mut s = schema.clone();
    if let Value::Object(m) = &mut s {
        m.remove("$schema");
    }
    s
}

/// Metadata no provider reads; removed without a note.
pub(crate) const DROPPED_META: &[&str] = &["$schema", "$id", "$comment", "$anchor"];

/// Append a JSON pointer token (escaping `~` and `/`).
pub(crate) fn push_path(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// The subschema a local reference (`#` or `#/json/pointer`) points at inside `root`.
pub(crate) fn resolve_local_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    root.pointer(pointer)
}

/// The JSON pointer (as a schema path) that a local reference names: `#/$defs/A` → `/$defs/A`.
pub(crate) fn ref_path(reference: &str) -> String {
    reference.strip_prefix('#').unwrap_or(reference).to_owned()
}

/// Write keywords the dialect cannot carry into the schema's description, sorted by key, so
/// nothing is lost silently.
pub(crate) fn note_in_description(node: &mut Map<String, Value>, moved: BTreeMap<String, Value>) {
    if moved.is_empty() {
        return;
    }
    let list = moved
        .iter()
        .map(|(k, v)| format!("{k}={}", compact(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let note = format!("Constraints: {list}.");
    let text = match node.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{d}\n{note}"),
        _ => note,
    };
    node.insert("description".to_owned(), Value::String(text));
}

fn compact(v: &Value) -> String {
    // `Value` always serializes; the fallback is never reached.
    serde_json::to_string(&super::sorted(v)).unwrap_or_default()
}

/// Merge `target` (a referenced or `allOf` subschema) under `siblings`: the siblings win on
/// conflicts, as they are the more specific annotations of the use site.
/// Keywords whose meaning cannot be carried by a description: an export error in the strict
/// OpenAI and the Gemini dialects.
pub(crate) const UNSUPPORTED_STRUCTURE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// The first step the strict OpenAI and the Gemini walks share: a one-item `allOf` is merged into
/// its node (returned, to walk instead), and `oneOf` becomes `anyOf`. Errors carry the JSON path.
pub(crate) fn fold_combinators(
    m: &mut Map<String, Value>,
    path: &str,
) -> Result<Option<Value>, (String, &'static str)> {
    if let Some(all) = m.remove("allOf") {
        return match all.as_array().map(Vec::as_slice) {
            Some([only]) => merge_under(only, m)
                .map(Some)
                .ok_or_else(|| (push_path(path, "allOf"), "`allOf` item is not an object")),
            _ => Err((
                push_path(path, "allOf"),
                "`allOf` with several schemas cannot be expressed",
            )),
        };
    }
    if let Some(one) = m.remove("oneOf") {
        if m.contains_key("anyOf") {
            return Err((
                path.to_owned(),
                "`oneOf` next to `anyOf` cannot be expressed",
            ));
        }
        m.insert("anyOf".to_owned(), one);
    }
    Ok(None)
}

pub(crate) fn merge_under(target: &Value, siblings: &Map<String, Value>) -> Option<Value> {
    let mut out = target.as_object()?.clone();
    for (k, v) in siblings {
        out.insert(k.clone(), v.clone());
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
        }
        assert!("open_ai".parse::<Format>().is_err());
    }

    #[test]
    fn notes_are_sorted_and_appended() {
        let mut m = Map::new();
        m.insert("description".into(), json!("The name."));
        let mut moved = BTreeMap::new();
        moved.insert("pattern".to_owned(), json!("^a$"));
        moved.insert("maxLength".to_owned(), json!(10));
        note_in_description(&mut m, moved);
        assert_eq!(
            m["description"],
            json!("The name.\nConstraints: maxLength=10, pattern=\"^a$\".")
        );
    }

    #[test]
    fn local_refs_resolve_with_escapes() {
        let root = json!({"$defs": {"a/b": {"type": "string"}}});
        assert_eq!(
            resolve_local_ref(&root, "#/$defs/a~1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(resolve_local_ref(&root, "#"), Some(&root));
        assert_eq!(resolve_local_ref(&root, "other#/x"), None);
        assert_eq!(push_path("", "a/b~c"), "/a~1b~0c");
    }
}
