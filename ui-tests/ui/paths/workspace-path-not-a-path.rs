use tool_core::{tool, WorkspacePath};

/// Read a file.
#[tool(risk = "read_only", not_paths = ["path"])]
fn read(path: WorkspacePath) -> String {
    path.to_string()
}

fn main() {}
