use tool_core::tool;

/// Run a script.
#[tool(risk = "destructive", path_args = ["script"], script_args = ["script"], script_lang = "bash")]
fn run(script: String) -> String {
    script
}

fn main() {}
