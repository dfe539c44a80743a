use std::collections::BTreeMap;

use tool_core::tool;

/// Run a script.
#[tool(
    risk = "dangerous",
    script_args = ["command"],
    script_lang = "bash",
    env_arg = "command",
    timeout_arg = "vars",
    cwd_arg = "vars"
)]
fn run(command: String, vars: BTreeMap<String, String>) -> String {
    format!("{command} {vars:?}")
}

fn main() {}
