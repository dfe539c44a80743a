//! `list`: one line per tool.

use std::io::Write;
use std::process::ExitCode;

use super::shared::CliError;
use crate::registry::Registry;

pub(super) fn run(registry: &Registry) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    for tool in registry.iter() {
        writeln!(out, "{}", line(tool.decl()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `name  risk  flags`, flags comma-separated.
fn line(d: &crate::decl::ToolDecl) -> String {
    let mut flags: Vec<String> = Vec::new();
    if d.read_only() {
        flags.push("read_only".into());
    }
    if d.destructive() {
        flags.push("destructive".into());
    }
    if d.concurrency_safe {
        flags.push("concurrency_safe".into());
    }
    // As every export states it: declared, or implied by read-only.
    if d.is_idempotent() {
        flags.push("idempotent".into());
    }
    if d.open_world {
        flags.push("open_world".into());
    }
    if !d.path_args.is_empty() {
        flags.push(format!("paths={}", d.path_args.join("+")));
    }
    if !d.script_args.is_empty() {
        let lang = d.script_lang.map(|l| l.as_str()).unwrap_or("?");
        flags.push(format!("scripts={}:{lang}", d.script_args.join("+")));
    }
    if let Some(t) = d.timeout {
        flags.push(format!("timeout={}ms", t.as_millis()));
    }
    let flags = if flags.is_empty() {
        "-".to_owned()
    } else {
        flags.join(",")
    };
    format!("{:<20} {:<12} {}", d.name, d.risk.as_str(), flags)
}

#[cfg(test)]
mod tests {
    use super::line;
    use crate::decl::Risk;
    use crate::registry::ToolDef;

    fn listed(risk: Risk, idempotent: bool) -> String {
        let def = ToolDef::builder("t")
            .description("A tool.")
            .risk(risk)
            .idempotent(idempotent)
            .handler(|_ctx, _args| async { "ok" })
            .build()
            .expect("tool");
        line(def.decl())
    }

    #[test]
    fn idempotent_is_listed_as_the_exports_state_it() {
        assert!(listed(Risk::Mutation, true).contains("idempotent"));
        assert!(listed(Risk::ReadOnly, false).contains("idempotent"));
        assert!(!listed(Risk::Mutation, false).contains("idempotent"));
    }
}
