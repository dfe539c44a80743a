use tool_core::{tool, WorkspacePath};

fn file_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}})
}

/// Read a file.
///
/// # Arguments
/// * `path` - the file
#[tool(risk = "read_only", path_args = ["path"], input_schema = file_schema)]
fn read(path: WorkspacePath) -> String {
    path.as_path().display().to_string()
}

/// Count.
#[tool(risk = "safe", input_schema = file_schema)]
fn count(#[arg(default = 3)] n: u32) -> u32 {
    n
}

fn main() {}
