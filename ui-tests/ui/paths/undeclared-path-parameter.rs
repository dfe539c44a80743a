use tool_core::tool;

/// Move a file.
#[tool(path_args = ["source"])]
fn move_file(source: String, destination: std::path::PathBuf, log_file: Option<String>) {
    let _ = (source, destination, log_file);
}

fn main() {}
