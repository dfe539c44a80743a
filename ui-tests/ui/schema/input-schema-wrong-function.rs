use tool_core::tool;

fn schema_text() -> &'static str {
    r#"{"type": "object"}"#
}

/// Echo.
#[tool(risk = "safe", input_schema = schema_text)]
fn echo(args: serde_json::Value) -> String {
    args.to_string()
}

fn main() {}
