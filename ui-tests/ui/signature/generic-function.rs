use tool_core::tool;

/// Echo anything.
#[tool(risk = "safe")]
fn echo<T: ToString>(value: T) -> String {
    value.to_string()
}

fn main() {}
