use tool_core::tool;

/// Run a script.
#[tool(risk = "destructive", script_lang = "bash")]
fn run(script: String) -> String {
    script
}

fn main() {}
