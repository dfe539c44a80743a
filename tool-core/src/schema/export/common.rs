//! What the dialects share: the format names, options and errors, and the schema rewriting
//! helpers of the strict OpenAI and the Gemini walks.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

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
    serde_json::to_string(&crate::schema::canonical::sorted(v)).unwrap_or_default()
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
