use std::sync::Mutex;
use tool_core::{tool, State};

/// A lock each call would need its own copy of.
#[tool(risk = "safe")]
fn peek(cell: State<Mutex<u64>>) -> String {
    String::new()
}

fn main() {}
