use tool_core::tool;

/// Run a command.
#[tool(risk = "dangerous", script_args = ["argv", "shell"], script_lang = "bash")]
fn run(argv: Vec<String>) -> String {
    argv.join(" ")
}

fn main() {}
