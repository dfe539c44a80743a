//! The example tools' command line: list, dump, call, scan, pin, verify, serve, and the demo.

// Linking the library brings its `#[tool]` registrations into the binary.
use tool_examples::demo;

fn main() {
    // Named after this crate: `--help`, `--version` and MCP `serverInfo` say `tool-examples`.
    tool_core::cli!().demo(demo::run).run()
}
