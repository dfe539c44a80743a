use tool_core::tool;

/// Run a command.
#[tool(risk = "dangerous", script_args = ["command"])]
fn run(command: String) -> String {
    command
}

fn main() {}
