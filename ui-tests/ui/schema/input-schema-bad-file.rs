use tool_core::tool;

/// Look a word up.
#[tool(risk = "safe", input_schema = "schemas/no-such-schema.json")]
fn lookup(args: serde_json::Value) -> String {
    args.to_string()
}

/// A schema that is a number.
#[tool(risk = "safe", input_schema = 42)]
fn numbered(args: serde_json::Value) -> String {
    args.to_string()
}

fn main() {}
