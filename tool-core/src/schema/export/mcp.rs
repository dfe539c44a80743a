//! The MCP `tools/list` result (protocol revision 2025-06-18 and later).
//!
//! Shape: `{"tools": [{"name", "description", "inputSchema", "outputSchema"?, "annotations"}]}`.
//!
//! - `inputSchema` is the canonical input schema unchanged (MCP takes JSON Schema 2020-12, so
//!   `$schema`, `$defs` and `$ref` stay).
//! - `annotations` are derived from the declaration, never guessed from names: `readOnlyHint`
//!   from the risk (`safe`, `read_only`), `destructiveHint` from the risk (`destructive`,
//!   `dangerous`; always `false` for a read-only tool), `idempotentHint` from
//!   [`ToolDecl::is_idempotent`] (a read-only tool is idempotent by definition, as the canonical
//!   dump's `idempotent` says too), `openWorldHint` from `open_world`. All four are
//!   always written: the protocol's defaults for absent hints assume the worst, which would be
//!   wrong for declared tools. There is no `title` (declarations have none).
//! - `outputSchema` is the `Json<T>` output schema when its root is `"type": "object"`. MCP
//!   requires an object there, because `structuredContent` is a JSON object; any other root (a
//!   `Json<Vec<T>>`'s array, a string, an optional value, ...) is wrapped as the one required
//!   property [`RESULT_KEY`] of an object (`{"type": "object", "properties": {"result": …},
//!   "required": ["result"]}`, with `$schema` and `$defs` moved to the wrapper's root so every
//!   `$ref` still resolves), and the server sends such a tool's value as
//!   `structuredContent: {"result": value}` ([`wraps_output`] tells it which case applies).

use serde_json::{json, Map, Value};

use crate::decl::ToolDecl;

/// The `tools/list` result for these declarations, in the order given.
pub fn tools_list<'a>(decls: impl IntoIterator<Item = &'a ToolDecl>) -> Value {
    let tools: Vec<Value> = decls.into_iter().map(tool).collect();
    json!({ "tools": tools })
}

/// One MCP `Tool`.
pub fn tool(decl: &ToolDecl) -> Value {
    let mut m = Map::new();
    m.insert("name".to_owned(), json!(decl.name));
    m.insert("description".to_owned(), json!(decl.description));
    m.insert("inputSchema".to_owned(), decl.input_schema.value().clone());
    if let Some(out) = output_schema(decl) {
        m.insert("outputSchema".to_owned(), out);
    }
    m.insert("annotations".to_owned(), annotations(decl));
    Value::Object(m)
}

/// The behaviour hints of a declaration.
pub fn annotations(decl: &ToolDecl) -> Value {
    let read_only = decl.read_only();
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": !read_only && decl.destructive(),
        "idempotentHint": decl.is_idempotent(),
        "openWorldHint": decl.open_world,
    })
}

/// The property that holds a value whose declared output schema is not an object, in
/// `structuredContent` and in the advertised `outputSchema`.
pub const RESULT_KEY: &str = "result";

/// The output schema MCP advertises: the declared one when its root is an object, otherwise the
/// declared one wrapped as the object's [`RESULT_KEY`] property. `None` without a declared one.
pub fn output_schema(decl: &ToolDecl) -> Option<Value> {
    let schema = decl.output_schema.as_ref()?;
    if wraps_output(decl) {
        Some(wrapped(schema))
    } else {
        Some(schema.clone())
    }
}

/// Whether the tool's results travel as `structuredContent: {"result": value}`: it declares an
/// output schema whose root is not `"type": "object"`.
pub fn wraps_output(decl: &ToolDecl) -> bool {
    decl.output_schema
        .as_ref()
        .is_some_and(|s| s.get("type").and_then(Value::as_str) != Some("object"))
}

/// `schema` as the one required property of an object; the keywords that belong at a schema's
/// root (`$schema`, `$id`, `$defs`, `definitions`) move to the wrapper's root, where `$ref`s of
/// the form `#/$defs/..` still find them.
fn wrapped(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let mut root = Map::new();
    if let Some(fields) = inner.as_object_mut() {
        for key in ["$schema", "$id", "$defs", "definitions"] {
            if let Some(v) = fields.remove(key) {
                root.insert(key.to_owned(), v);
            }
        }
    }
    root.insert("type".to_owned(), json!("object"));
    root.insert("properties".to_owned(), json!({ RESULT_KEY: inner }));
    root.insert("required".to_owned(), json!([RESULT_KEY]));
    root.insert("additionalProperties".to_owned(), json!(false));
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ToolDef;

    fn decl(output: Option<Value>) -> ToolDecl {
        let mut b = ToolDef::builder("t")
            .description("A tool.")
            .handler(|_ctx, _args| async { "ok" });
        if let Some(out) = output {
            b = b.output_schema(out);
        }
        b.build().expect("tool").decl().clone()
    }

    #[test]
    fn a_non_object_output_schema_is_wrapped_with_its_defs_at_the_root() {
        let array = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/Hit"},
            "$defs": {"Hit": {"type": "object", "properties": {"n": {"type": "integer"}}}}
        });
        let d = decl(Some(array));
        assert!(wraps_output(&d));
        let out = output_schema(&d).expect("advertised");
        assert_eq!(out["type"], "object");
        assert_eq!(out["required"], json!(["result"]));
        assert_eq!(out["properties"]["result"]["type"], "array");
        assert_eq!(out["$defs"]["Hit"]["type"], "object");
        assert!(out["properties"]["result"].get("$defs").is_none());
        let validator = jsonschema::validator_for(&out).expect("a valid schema");
        assert!(validator.is_valid(&json!({"result": [{"n": 1}]})));
        assert!(!validator.is_valid(&json!({"result": [{"n": "x"}]})));
        assert!(!validator.is_valid(&json!([{"n": 1}])));
    }

    #[test]
    fn an_object_output_schema_is_advertised_as_declared() {
        let object = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let d = decl(Some(object.clone()));
        assert!(!wraps_output(&d));
        assert_eq!(output_schema(&d), Some(object));
        let d = decl(None);
        assert!(!wraps_output(&d));
        assert_eq!(output_schema(&d), None);
    }
}
