use tool_core::tool;

/// Say something.
#[tool(risk = "safe")]
fn say(text: impl Into<String>) -> String {
    text.into()
}

fn main() {}
