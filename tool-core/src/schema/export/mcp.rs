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
//! - `outputSchema` is the `Json<T>` output schema when its root is `"type": "object"`, which MCP
//!   requires because `structuredContent` is a JSON object. For any other root (an array, a
//!   string, ...) it is left out, and the server must then return the value as text content only,
//!   without `structuredContent`: wrapping it in an object would change the shape the handler
//!   declared. [`output_schema`] tells a server which case applies.

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
    m.insert("inputSchema".to_owned(), decl.input_schema.clone());
    if let Some(out) = output_schema(decl) {
        m.insert("outputSchema".to_owned(), out.clone());
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

/// The output schema MCP may advertise: present only when the declared output schema's root is
/// an object. `None` means: send results as text content, without `structuredContent`.
pub fn output_schema(decl: &ToolDecl) -> Option<&Value> {
    let schema = decl.output_schema.as_ref()?;
    (schema.get("type").and_then(Value::as_str) == Some("object")).then_some(schema)
}
