use tool_core::tool;

/// Wait a while.
#[tool(risk = "safe", timeout_arg = "secs")]
fn wait(secs: u64) -> String {
    secs.to_string()
}

fn main() {}
