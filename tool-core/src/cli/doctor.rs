//! `doctor`: what kernel confinement this machine offers, and what the executor makes of it for
//! the registry's tools, read from the confinement an executor would start here (the current
//! directory as workspace, the default sandbox configuration).

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use super::shared::CliError;
use crate::registry::Registry;
use crate::resource::Resources;
use crate::sandbox;
use crate::sandbox::setup::{Confinement, SandboxConfig};

pub(super) fn run(registry: &Registry, resources: &Resources) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "kernel sandbox: {}", sandbox::support())?;
    writeln!(out, "sandbox helper: {}", sandbox::helper_status())?;
    let scripts = registry
        .iter()
        .filter(|t| !t.decl().script_args.is_empty())
        .count();
    writeln!(out, "tools: {} ({scripts} with scripts)", registry.len())?;
    let root = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| CliError(format!("cannot resolve the current directory: {e}")))?;
    let grants = match sandbox::tool_grants::tool_grants(registry, resources, &root) {
        Ok(grants) => grants,
        Err(e) => {
            writeln!(out, "grants: refused: {e}")?;
            HashMap::new()
        }
    };
    let config = SandboxConfig::default();
    let confinement = Confinement::new(&root, registry, &config, &grants);
    writeln!(out, "mode: {}", confinement.mode.as_str())?;
    for class in confinement.report() {
        writeln!(out, "class {}: {}", class.name, class.tools.join(", "))?;
        writeln!(out, "  sync handlers: {}", confined(class.sync_handlers))?;
        writeln!(out, "  async handlers: {}", confined(class.async_handlers))?;
        match &class.programs {
            Ok(()) => writeln!(out, "  programs: confined by the helper")?,
            Err(why) => writeln!(out, "  programs: refused (sandbox_unavailable): {why}")?,
        }
        if let Some(g) = &class.grants {
            writeln!(out, "  grants: {g}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A handler label as doctor says it: what confines it, or that nothing does.
fn confined(label: &str) -> String {
    if label == "none" {
        "not confined (the audit records `none`)".to_owned()
    } else {
        format!("confined ({label})")
    }
}
