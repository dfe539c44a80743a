use tool_core::tool;

/// Run a script.
#[tool(
    risk = "dangerous",
    script_args = ["command"],
    script_lang = "bash",
    cwd_arg = "place"
)]
fn run(command: String, place: Option<String>) -> String {
    format!("{command} {place:?}")
}

fn main() {}
