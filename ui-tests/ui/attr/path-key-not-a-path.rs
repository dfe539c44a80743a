use tool_core::tool;

/// Add two numbers.
#[tool(risk = "safe", check_permissions = "not a path!")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtract two numbers.
#[tool(risk = "safe", crate = 42)]
fn sub(a: i64, b: i64) -> i64 {
    a - b
}

fn main() {}
