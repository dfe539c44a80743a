use std::rc::Rc;
use tool_core::{tool, State};

/// A counter the tool cannot share between threads.
#[tool(risk = "safe")]
fn count(counter: State<Rc<u64>>) -> String {
    counter.0.to_string()
}

fn main() {}
