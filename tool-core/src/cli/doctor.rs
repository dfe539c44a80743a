//! `doctor`: what kernel confinement this machine offers, and what the executor makes of it.

use std::io::Write;
use std::process::ExitCode;

use super::shared::CliError;
use crate::registry::Registry;
use crate::sandbox;

pub(super) fn run(registry: &Registry) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    let support = sandbox::support();
    writeln!(out, "kernel sandbox: {support}")?;
    let full = ["landlock-v7", "seccomp", "userns", "pidns"]
        .iter()
        .all(|part| support.split('+').any(|p| p == *part));
    if full {
        writeln!(
            out,
            "  sync handlers: confined per capability class (Landlock + seccomp)\n  \
             programs (scripts, ctx.command): confined in their own user/PID/network namespaces"
        )?;
    } else {
        writeln!(
            out,
            "  under the default mode (required): in-process handlers run with the static guards \
             only; tools with script arguments are refused (sandbox_unavailable)"
        )?;
    }
    writeln!(
        out,
        "  async handlers: not confined (the audit records `none`)\n  \
         sandbox helper: {}",
        if sandbox::helper_embedded() {
            "this program (embedded)"
        } else {
            "not embedded: looked for `tool-sandbox-exec` next to the executable"
        }
    )?;
    let scripts = registry
        .iter()
        .filter(|t| !t.decl().script_args.is_empty())
        .count();
    writeln!(out, "tools: {} ({scripts} with scripts)", registry.len())?;
    Ok(ExitCode::SUCCESS)
}
