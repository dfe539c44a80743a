use tool_core::{tool, WorkspacePath};

/// Read a page of a file.
#[tool(risk = "read_only")]
fn read(#[arg(default = "a.txt")] path: WorkspacePath, #[arg(default = Some(1))] page: Option<u32>) -> String {
    format!("{} {page:?}", path.as_path().display())
}

fn main() {}
