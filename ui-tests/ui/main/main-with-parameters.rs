#[tool_core::main]
fn main<T>() {}
