//! The example tools' command line: list, dump, call, scan, pin, verify, serve, demo.

// Linking the library brings its `#[tool]` registrations into the binary.
use tool_examples as _;

fn main() {
    tool_core::cli::run()
}
