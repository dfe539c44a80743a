use tool_core::tool;

/// Wait a while.
#[tool(risk = "safe", timeout = "30 seconds")]
fn wait() {}

fn main() {}
