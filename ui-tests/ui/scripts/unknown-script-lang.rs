use tool_core::tool;

/// Run a command.
#[tool(risk = "dangerous", script_args = ["command"], script_lang = "zsh")]
fn run(command: String) -> String {
    command
}

fn main() {}
