//! `tool-scan`: the `scan` command as a program of its own, for one-shot scans from scripts and
//! hooks. It takes the arguments of `tool-examples scan` (`tool_core::cli`) and prints the same,
//! through the same code (`tool_safety::cli`); nothing but the scanner is linked in.
//!
//! Exit status: 0 whatever the decision, 1 if a file cannot be read or the policy is refused
//! (nothing printed on stdout), 2 for arguments it does not take.
//!
//! One process per script is what hooks do, so start-up is most of the run: build it with
//! `cargo build-scan` (the `scan` profile, statically linked, at `target/scan/tool-scan`).

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

/// Scan a bash or Python script and print the safety report as JSON.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct ScanOnly {
    #[command(flatten)]
    args: tool_safety::cli::ScanArgs,
}

fn main() -> ExitCode {
    let cli = match ScanOnly::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match tool_safety::cli::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(1)
        }
    }
}
