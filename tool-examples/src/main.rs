//! The example tools' command line: list, dump, call, scan, pin, verify, serve, and the demo.

// Linking the library brings its `#[tool]` registrations into the binary.
use tool_examples::demo;

fn main() {
    tool_core::cli::Cli::new().demo(demo::run).run()
}
