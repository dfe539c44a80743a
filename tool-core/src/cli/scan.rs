//! `scan`: print the safety report of a script as JSON. Exit 0 whatever the decision.
//!
//! The arguments and the printing are the scanner's own (`tool_safety::cli`), which the
//! `tool-scan` program runs as well, so both print the same.

use std::process::ExitCode;

use super::shared::CliError;

pub(crate) use tool_safety::cli::ScanArgs;

pub(super) fn run(args: &ScanArgs) -> Result<ExitCode, CliError> {
    tool_safety::cli::run(args).map_err(|e| CliError(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
