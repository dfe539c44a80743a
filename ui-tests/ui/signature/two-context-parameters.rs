use tool_core::{tool, ToolContext};

/// Report the call id.
#[tool(risk = "read_only")]
fn whoami(ctx: &ToolContext, again: ToolContext) -> String {
    format!("{}{}", ctx.call_id(), again.call_id())
}

fn main() {}
