//! Provider dialects of the tool list: canonical, OpenAI, Anthropic, Gemini, MCP.
//!
//! Every dialect is computed from the registry's declarations; the output is deterministic (keys
//! sorted at every level, see [`canonical_bytes`]), so the same registry
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
//!
//! Schemas declared elsewhere (a third-party MCP server's tools, hand-written function schemas)
//! are converted with [`convert::convert`]: there, what strict OpenAI or Gemini cannot express
//! gets a documented downgrade (a free-form value as JSON text, a map as a list of entries, ...),
//! every downgrade is reported, and [`convert::Conversion::map_back`] turns the model's answer
//! back into what the original schema expects. `dump --from FILE` is the command line for it.

use serde_json::{json, Value};

use crate::decl::ToolDecl;
use crate::registry::Registry;
use crate::schema::canonical::canonical_bytes;
use common::without_schema_keyword;

pub mod accept;
mod common;
pub mod convert;
pub mod gemini;
pub mod mcp;
pub mod openai;
mod walk;

pub use accept::{Dialect, UnknownDialect};
pub use common::{Downgrade, DowngradeKind, ExportError, ExportOptions, Format, UnknownFormat};

/// Export the registry in `format` as bytes: for [`Format::Canonical`] exactly
/// [`Registry::canonical_dump`], otherwise [`canonical_bytes`] of
/// [`export_value`].
pub fn export(
    registry: &Registry,
    format: Format,
    opts: ExportOptions,
) -> Result<Vec<u8>, ExportError> {
    match format {
        Format::Canonical => Ok(registry.canonical_dump().to_vec()),
        _ => Ok(canonical_bytes(&export_value(registry, format, opts)?)),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::Map;

    use super::common::{note_in_description, push_path, resolve_local_ref};
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
