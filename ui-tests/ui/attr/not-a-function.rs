use tool_core::tool;

/// Not a tool.
#[tool(risk = "safe")]
struct Weather {
    city: String,
}

fn main() {}
