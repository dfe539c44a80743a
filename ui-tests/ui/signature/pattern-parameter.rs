use tool_core::tool;

/// Add two numbers.
#[tool(risk = "safe")]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
