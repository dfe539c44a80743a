use tool_core::tool;

/// Add two numbers.
#[tool(risk = "safe")]
fn r#加(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
