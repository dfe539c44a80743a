//! `scan`: print the safety report of a script as JSON. Exit 0 whatever the decision.
//!
//! One file gives one pretty-printed report. Several files give JSON Lines, one
//! `{"file": .., "report": ..}` object per file in argument order; every file is read before
//! anything is printed, so an unreadable file fails the command with no partial output.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::shared::CliError;
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
    /// Script files (`-` for standard input, at most once).
    #[arg(required = true)]
    files: Vec<String>,
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
    if args.files.iter().filter(|f| *f == "-").count() > 1 {
        return Err(CliError("standard input (`-`) can be scanned once".into()));
    }
    let scripts = args
        .files
        .iter()
        .map(|f| read_script(f))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = std::io::stdout().lock();
    for (file, script) in args.files.iter().zip(scripts) {
        let report = scanner.scan(&SafetyScanRequest::new(args.tool.clone(), lang, script));
        let json = if args.files.len() == 1 {
            serde_json::to_string_pretty(&report)
        } else {
            serde_json::to_string(&serde_json::json!({"file": file, "report": report}))
        }
        .map_err(|e| CliError(e.to_string()))?;
        writeln!(out, "{json}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A script's text. Invalid UTF-8 is scanned lossily: replacement characters cannot hide a
/// command.
fn read_script(file: &str) -> Result<String, CliError> {
    let mut bytes = Vec::new();
    if file == "-" {
        std::io::stdin().read_to_end(&mut bytes)?;
    } else {
        bytes = std::fs::read(file).map_err(|e| CliError(format!("cannot read `{file}`: {e}")))?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
