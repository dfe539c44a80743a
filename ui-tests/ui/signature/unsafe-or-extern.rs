use tool_core::tool;

/// Add two numbers.
#[tool(risk = "safe")]
unsafe fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtract two numbers.
#[tool(risk = "safe")]
extern "C" fn sub(a: i64, b: i64) -> i64 {
    a - b
}

fn main() {}
