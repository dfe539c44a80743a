use tool_core::tool;

fn contact_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}})
}

/// Greet someone.
#[tool(risk = "safe", input_schema = contact_schema)]
fn greet(name: String, greeting: String) -> String {
    format!("{greeting}, {name}")
}

fn main() {}
