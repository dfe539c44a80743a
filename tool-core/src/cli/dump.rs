//! `dump`: the tool list in a provider's format.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::CliError;
use crate::registry::Registry;

/// Arguments of `dump`.
#[derive(Debug, clap::Args)]
pub(super) struct DumpArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// The canonical dump, the bytes that get pinned.
    Canonical,
}

pub(super) fn run(registry: &Registry, args: &DumpArgs) -> Result<ExitCode, CliError> {
    let bytes = match args.format {
        Format::Canonical => registry.canonical_dump().to_vec(),
    };
    match &args.out {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}
