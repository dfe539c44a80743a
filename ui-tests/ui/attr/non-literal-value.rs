use tool_core::tool;

const NAME: &str = "add";

/// Add two numbers.
#[tool(name = NAME, path_args = "a", idempotent = "yes", timeout)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
