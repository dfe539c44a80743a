use tool_core::{tool, WorkspacePath};

/// Run a script.
#[tool(
    risk = "dangerous",
    script_args = ["command"],
    script_lang = "bash",
    cwd_arg = "workdir",
    timeout_arg = "timeout"
)]
fn run(command: String, cwd: Option<WorkspacePath>, timeout_secs: Option<u64>) -> String {
    format!("{command} {cwd:?} {timeout_secs:?}")
}

fn main() {}
