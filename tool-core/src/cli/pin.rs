//! `pin` and `verify`: commit the tool list with its hash, and check it still holds.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::shared::CliError;
use crate::pin;
use crate::registry::Registry;

/// Arguments of `pin` and `verify`.
#[derive(Debug, clap::Args)]
pub(super) struct PinArgs {
    /// Directory holding `tools.schema.json` and `tools.schema.sha256`.
    #[arg(long)]
    dir: PathBuf,
}

pub(super) fn run_pin(registry: &Registry, args: &PinArgs) -> Result<ExitCode, CliError> {
    pin::write(registry, &args.dir).map_err(|e| CliError(format!("[{}] {e}", e.code())))?;
    writeln!(
        std::io::stdout().lock(),
        "pinned {} tools in {} (sha256 {})",
        registry.len(),
        args.dir.display(),
        registry.fingerprint()
    )?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn run_verify(registry: &Registry, args: &PinArgs) -> Result<ExitCode, CliError> {
    registry
        .verify_pin(&args.dir)
        .map_err(|e| CliError(format!("[{}] {e}", e.code())))?;
    writeln!(
        std::io::stdout().lock(),
        "ok: {} tools match the pin in {} (sha256 {})",
        registry.len(),
        args.dir.display(),
        registry.fingerprint()
    )?;
    Ok(ExitCode::SUCCESS)
}
