#[tool_core::main(flavor = "current_thread")]
fn main() {}
