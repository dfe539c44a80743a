//! `tool-scan`: the `scan` command as a program of its own, for one-shot scans from scripts and
//! hooks (no tool registry, no MCP server linked in).

fn main() {
    tool_core::cli::run_scan()
}
