//! `verify-audit FILE [--head SHA256] [--key KEYFILE [--state STATEFILE]]`: check the hash chain
//! of a JSONL audit log, and with `--key` its MACs, epochs, checkpoints and state file. Prints
//! one JSON line: `{"ok": true, "events": N, "head_sha256": H}` (with `--key` also `lines`,
//! `epoch`, `closed`), or `{"ok": false, "line": N, "reason": CODE, "message": TEXT}` and exits 1
//! naming the first broken line.

use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use super::shared::CliError;
use crate::audit::{
    state_path, verify_chain_summary, verify_keyed, AuditKey, ChainError, KeyedError,
};

/// Arguments of `verify-audit`.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyAuditArgs {
    /// The audit log (JSON Lines, as `--audit` writes it).
    file: PathBuf,
    /// The SHA-256 of the last line, recorded elsewhere earlier: also detect a deleted or edited
    /// last line, which the chain alone cannot.
    #[arg(long, value_name = "SHA256")]
    head: Option<String>,
    /// The key file the log was written with (`--audit-key`): check every line's MAC, the epochs,
    /// the closing checkpoint and the state file.
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The log's state file (default: FILE.state); with `--key`.
    #[arg(long, value_name = "FILE", requires = "key")]
    state: Option<PathBuf>,
}

pub(crate) fn run(args: &VerifyAuditArgs) -> Result<ExitCode, CliError> {
    let file = std::fs::File::open(&args.file)
        .map_err(|e| CliError(format!("cannot open {}: {e}", args.file.display())))?;
    let (mut report, mut failure) = match &args.key {
        Some(key) => keyed(args, key, file)?,
        None => unkeyed(args, file)?,
    };
    if failure.is_none() {
        if let Some(expected) = &args.head {
            if !report["head_sha256"]
                .as_str()
                .is_some_and(|h| h.eq_ignore_ascii_case(expected))
            {
                let line = report["lines"].clone();
                let line = if line.is_null() {
                    report["events"].clone()
                } else {
                    line
                };
                failure = Some(format!(
                    "{}: line {line}: the last line is not the expected head",
                    args.file.display()
                ));
                report = json!({
                    "ok": false,
                    "line": line,
                    "reason": "head_mismatch",
                    "message": "the last line is not the expected head: it was edited or deleted, or lines were appended",
                });
            }
        }
    }
    writeln!(io::stdout().lock(), "{report}")?;
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(message) => Err(CliError(format!("the audit chain is broken: {message}"))),
    }
}

fn unkeyed(
    args: &VerifyAuditArgs,
    file: std::fs::File,
) -> Result<(Value, Option<String>), CliError> {
    Ok(match verify_chain_summary(BufReader::new(file)) {
        Ok(s) => (
            json!({"ok": true, "events": s.events, "head_sha256": s.head_sha256}),
            None,
        ),
        Err(ChainError::Broken { line, reason }) => {
            broken(args, line, reason.as_str(), reason.to_string())
        }
        Err(e) => return Err(CliError(format!("{}: {e}", args.file.display()))),
    })
}

fn keyed(
    args: &VerifyAuditArgs,
    key: &std::path::Path,
    file: std::fs::File,
) -> Result<(Value, Option<String>), CliError> {
    let key = AuditKey::from_file(key).map_err(|e| CliError(e.to_string()))?;
    let state_file = args.state.clone().unwrap_or_else(|| state_path(&args.file));
    let state = match std::fs::read(&state_file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let message = format!(
                "the state file {} is missing: without it a log cut at a checkpoint looks whole",
                state_file.display()
            );
            return Ok((
                json!({"ok": false, "line": 0, "reason": "state_missing", "message": message}),
                Some(format!("{}: {message}", args.file.display())),
            ));
        }
        Err(e) => {
            return Err(CliError(format!(
                "cannot read {}: {e}",
                state_file.display()
            )))
        }
    };
    Ok(
        match verify_keyed(BufReader::new(file), &key, Some(&state)) {
            Ok(s) => (
                json!({
                    "ok": true,
                    "keyed": true,
                    "events": s.events,
                    "lines": s.lines,
                    "epoch": s.epoch,
                    "closed": s.closed,
                    "head_sha256": s.head_sha256,
                }),
                None,
            ),
            Err(KeyedError::Broken { line, reason }) => {
                broken(args, line, reason.as_str(), reason.to_string())
            }
            Err(e) => return Err(CliError(format!("{}: {e}", args.file.display()))),
        },
    )
}

/// The report and failure message of a chain broken at `line`, keyed or not.
fn broken(
    args: &VerifyAuditArgs,
    line: u64,
    reason: &str,
    message: String,
) -> (Value, Option<String>) {
    let failure = format!("{}: line {line}: {message}", args.file.display());
    (
        json!({"ok": false, "line": line, "reason": reason, "message": message}),
        Some(failure),
    )
}
