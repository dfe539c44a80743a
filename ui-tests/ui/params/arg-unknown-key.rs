use tool_core::tool;

/// Page through results.
#[tool(risk = "safe")]
fn search(query: String, #[arg(defualt = 1)] page: u32) -> String {
    format!("{query} {page}")
}

fn main() {}
