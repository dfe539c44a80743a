use tool_core::tool;

fn one() -> u32 {
    1
}

/// Page through results.
#[tool(risk = "safe")]
fn search(
    #[schemars(rename = "q")] query: String,
    #[schemars(range(min = 1), default = "one")] page: u32,
) -> String {
    format!("{query} {page}")
}

fn main() {}
