use tool_core::tool;

/// Add two numbers.
///
/// # Arguments
/// * `a` - the first addend
/// * `c` - the second addend
#[tool(risk = "safe")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
