use tool_core::tool;

/// Page through results.
#[tool(risk = "safe")]
fn page(#[arg(default = 1, default = 2)] page: u32) -> u32 {
    page
}

fn main() {}
