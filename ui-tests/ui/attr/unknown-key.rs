use tool_core::tool;

/// Add two numbers.
#[tool(risk = "safe", concurency_safe)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
