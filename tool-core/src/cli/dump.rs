//! `dump`: the tool list in a provider's format.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::shared::CliError;
use crate::registry::Registry;
use crate::schema::export::{self, ExportOptions};

/// Arguments of `dump`.
#[derive(Debug, clap::Args)]
pub(super) struct DumpArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// OpenAI strict mode (structured outputs); only with `--format openai`.
    #[arg(long)]
    strict: bool,
    /// Write to this file instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// The canonical dump, the bytes that get pinned.
    Canonical,
    /// OpenAI Chat Completions `tools`.
    Openai,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// Gemini `functionDeclarations`.
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

impl From<Format> for export::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Canonical => export::Format::Canonical,
            Format::Openai => export::Format::OpenAi,
            Format::Anthropic => export::Format::Anthropic,
            Format::Gemini => export::Format::Gemini,
            Format::Mcp => export::Format::Mcp,
        }
    }
}

pub(super) fn run(registry: &Registry, args: &DumpArgs) -> Result<ExitCode, CliError> {
    let format = export::Format::from(args.format);
    if args.strict && format != export::Format::OpenAi {
        return Err(CliError(format!(
            "--strict applies to --format openai only, not {format}"
        )));
    }
    let bytes = export::export(
        registry,
        format,
        ExportOptions {
            strict: args.strict,
        },
    )
    .map_err(|e| CliError(format!("[{}] {e}", e.code())))?;
    match &args.out {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}
