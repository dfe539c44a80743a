use tool_core::tool;

struct Counter;

impl Counter {
    /// Count.
    #[tool(risk = "safe")]
    fn count(&self) -> u32 {
        1
    }
}

fn main() {}
