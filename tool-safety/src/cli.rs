//! The `scan` command (feature `cli`): print the safety report of a script as JSON, whatever the
//! decision. Both the `scan` subcommand of `tool_core::cli` and the `tool-scan` program take these
//! arguments and print through [`run`].
//!
//! One file gives one pretty-printed report. Several files give JSON Lines, one
//! `{"file": .., "report": ..}` object per file in argument order; every file is read before
//! anything is printed, so an unreadable file fails the command with no partial output.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;
use tool_rules::ScriptLang;

use crate::policy::SafetyPolicy;
use crate::report::SafetyScanRequest;
use crate::scanner::Scanner;

/// Why `scan` failed: a message for stderr (the program exits 1, with nothing on stdout).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(String);

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError(e.to_string())
    }
}

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Script language.
    #[arg(long, value_parser = ["bash", "python"])]
    lang: String,
    /// Policy file (.yaml, .yml or .toml); the built-in policy otherwise.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Tool name recorded in the report.
    #[arg(long, default_value = "cli")]
    tool: String,
    /// The workspace root the script runs in: what it touches outside is reviewed or denied.
    /// Without it, only effects on system and home paths are judged.
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// The working directory the script starts in (relative to the workspace, or absolute;
    /// default: the workspace root).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Judge the script as a tool declared `open_world`: plain network use is then no finding.
    /// Without it, the conservative declaration: network use is reviewed.
    #[arg(long)]
    open_world: bool,
    /// Script files (`-` for standard input, at most once).
    #[arg(required = true)]
    files: Vec<String>,
}

/// Scan the files of `args` and print their reports on stdout (one pretty-printed report, or
/// JSON Lines for several files). Nothing is printed if a file cannot be read.
pub fn run(args: &ScanArgs) -> Result<(), CliError> {
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
    let (workspace, cwd) = places(args)?;
    let mut out = std::io::stdout().lock();
    for (file, script) in args.files.iter().zip(scripts) {
        let mut req = SafetyScanRequest::new(args.tool.clone(), lang, script)
            .with_open_world(args.open_world);
        if let Some(w) = &workspace {
            req = req.with_workspace(w.clone());
        }
        if let Some(c) = &cwd {
            req = req.with_cwd(c.clone());
        }
        let report = scanner.scan(&req);
        let json = if args.files.len() == 1 {
            serde_json::to_string_pretty(&report)
        } else {
            serde_json::to_string(&serde_json::json!({"file": file, "report": report}))
        }
        .map_err(|e| CliError(e.to_string()))?;
        writeln!(out, "{json}")?;
    }
    Ok(())
}

/// The canonical workspace root and the absolute working directory of `--workspace` and
/// `--cwd`. The workspace must be a directory; a relative cwd is taken inside it.
fn places(args: &ScanArgs) -> Result<(Option<String>, Option<String>), CliError> {
    let text = |p: &std::path::Path| {
        p.to_str()
            .map(str::to_owned)
            .ok_or_else(|| CliError(format!("`{}` is not valid UTF-8", p.display())))
    };
    let root = match &args.workspace {
        Some(w) => {
            let c = std::fs::canonicalize(w)
                .map_err(|e| CliError(format!("workspace `{}`: {e}", w.display())))?;
            if !c.is_dir() {
                return Err(CliError(format!(
                    "workspace `{}` is not a directory",
                    w.display()
                )));
            }
            Some(c)
        }
        None => None,
    };
    let cwd = match (&args.cwd, &root) {
        (Some(c), _) if c.is_absolute() => Some(text(c)?),
        (Some(c), Some(r)) => Some(text(&r.join(c))?),
        (Some(c), None) => {
            return Err(CliError(format!(
                "a relative --cwd (`{}`) needs --workspace",
                c.display()
            )))
        }
        (None, Some(r)) => Some(text(r)?),
        (None, None) => None,
    };
    Ok((root.as_deref().map(text).transpose()?, cwd))
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
