//! The example tools' command line: list, dump, call, scan, pin, verify, serve, demo.

fn main() {
    tool_core::cli::run()
}
