use tool_core::tool;

/// Delete a file.
#[tool(risk = "destuctive", timeout = "soon", path_args = ["target"], colour = "red")]
fn delete_file(path: String, force: &bool) -> Result<(), String> {
    let _ = (path, force);
    Ok(())
}

fn main() {}
