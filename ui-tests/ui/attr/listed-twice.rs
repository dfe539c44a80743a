use tool_core::{tool, WorkspacePath};

/// Copy a file.
#[tool(risk = "mutation", path_args = ["from", "from"])]
fn copy(from: String, to: WorkspacePath) -> String {
    format!("{from} {to}")
}

fn main() {}
