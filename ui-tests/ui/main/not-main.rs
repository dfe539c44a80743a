#[tool_core::main]
fn start() {}

fn main() {}
