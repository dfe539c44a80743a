//! `verify-audit FILE [--head SHA256]`: check the hash chain of a JSONL audit log. Prints one JSON
//! line: `{"ok": true, "events": N, "head_sha256": H}`, or `{"ok": false, "line": N, "reason":
//! CODE, "message": TEXT}` and exits 1 naming the first broken line.

use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use super::shared::CliError;
use crate::audit::{verify_chain_summary, ChainError};

/// Arguments of `verify-audit`.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyAuditArgs {
    /// The audit log (JSON Lines, as `--audit` writes it).
    file: PathBuf,
    /// The SHA-256 of the last line, recorded elsewhere earlier: also detect a deleted or edited
    /// last line, which the chain alone cannot.
    #[arg(long, value_name = "SHA256")]
    head: Option<String>,
}

pub(crate) fn run(args: &VerifyAuditArgs) -> Result<ExitCode, CliError> {
    let file = std::fs::File::open(&args.file)
        .map_err(|e| CliError(format!("cannot open {}: {e}", args.file.display())))?;
    let (report, failure) = match verify_chain_summary(BufReader::new(file)) {
        Ok(s)
            if args
                .head
                .as_deref()
                .is_some_and(|h| !h.eq_ignore_ascii_case(&s.head_sha256)) =>
        {
            (
                json!({
                    "ok": false,
                    "line": s.events,
                    "reason": "head_mismatch",
                    "message": "the last line is not the expected head: it was edited or deleted, or lines were appended",
                }),
                Some(format!(
                    "{}: line {}: the last line is not the expected head",
                    args.file.display(),
                    s.events
                )),
            )
        }
        Ok(s) => (
            json!({"ok": true, "events": s.events, "head_sha256": s.head_sha256}),
            None,
        ),
        Err(ChainError::Broken { line, reason }) => (
            json!({
                "ok": false,
                "line": line,
                "reason": reason.as_str(),
                "message": reason.to_string(),
            }),
            Some(format!("{}: line {line}: {reason}", args.file.display())),
        ),
        Err(e) => return Err(CliError(format!("{}: {e}", args.file.display()))),
    };
    writeln!(io::stdout().lock(), "{report}")?;
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(message) => Err(CliError(format!("the audit chain is broken: {message}"))),
    }
}
