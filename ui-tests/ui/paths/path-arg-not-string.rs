use tool_core::tool;

/// Read a line of a file.
#[tool(risk = "read_only", path_args = ["file", "line"], not_paths = ["file"])]
fn read_line(file: String, line: u32) -> String {
    format!("{file}:{line}")
}

fn main() {}
