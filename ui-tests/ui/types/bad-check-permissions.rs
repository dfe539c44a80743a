use tool_core::tool;

fn allow_all(_args: &str) -> bool {
    true
}

/// Touch a target.
#[tool(check_permissions = allow_all)]
fn touch(target: String) -> String {
    target
}

fn main() {}
