use tool_core::tool;

/// Sort a list.
#[tool(risk = "read_only")]
fn sort(items: &mut Vec<String>) {
    items.sort();
}

fn main() {}
