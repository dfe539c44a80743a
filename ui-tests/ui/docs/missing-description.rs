use tool_core::tool;

#[tool(risk = "safe")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
