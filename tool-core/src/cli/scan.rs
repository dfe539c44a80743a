//! `scan`: print the safety report of a script as JSON. Exit 0 whatever the decision.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::CliError;
use crate::decl::ScriptLang;
use crate::safety::{SafetyPolicy, SafetyScanRequest, Scanner};

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub(crate) struct ScanArgs {
    /// Script language.
    #[arg(long, value_parser = ["bash", "python"])]
    lang: String,
    /// Policy file (.yaml, .yml or .toml); the built-in policy otherwise.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Tool name recorded in the report.
    #[arg(long, default_value = "cli")]
    tool: String,
    /// Script file, or `-` for standard input.
    file: String,
}

pub(super) fn run(args: &ScanArgs) -> Result<ExitCode, CliError> {
    let lang: ScriptLang = args.lang.parse().map_err(|e| CliError(format!("{e}")))?;
    let policy = match &args.policy {
        Some(p) => {
            SafetyPolicy::from_file(p).map_err(|e| CliError(format!("{}: {e}", e.code())))?
        }
        None => SafetyPolicy::default(),
    };
    let scanner = Scanner::new(policy).map_err(|e| CliError(format!("{}: {e}", e.code())))?;
    let mut bytes = Vec::new();
    if args.file == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(&args.file)
            .map_err(|e| CliError(format!("cannot read `{}`: {e}", args.file)))?;
    }
    // Invalid UTF-8 is scanned lossily: replacement characters cannot hide a command.
    let script = String::from_utf8_lossy(&bytes).into_owned();
    let report = scanner.scan(&SafetyScanRequest::new(args.tool.clone(), lang, script));
    let json = serde_json::to_string_pretty(&report).map_err(|e| CliError(e.to_string()))?;
    writeln!(std::io::stdout().lock(), "{json}")?;
    Ok(ExitCode::SUCCESS)
}
