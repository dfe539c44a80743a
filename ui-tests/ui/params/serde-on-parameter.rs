use tool_core::tool;

/// Page through results.
#[tool(risk = "safe")]
fn search(query: String, #[serde(default)] page: u32) -> String {
    format!("{query} {page}")
}

fn main() {}
