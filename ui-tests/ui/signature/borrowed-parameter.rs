use tool_core::tool;

/// Shout.
#[tool(risk = "safe")]
fn shout(text: &str) -> String {
    text.to_uppercase()
}

fn main() {}
