use tool_core::tool;

/// Read a file.
#[tool(name = "read file", risk = "read_only")]
fn read(text: String) -> String {
    text
}

fn main() {}
