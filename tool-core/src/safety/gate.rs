//! The scanner as the executor's script gate (pipeline step 7).

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use tool_safety::{
    PolicyError, SafetyDecision, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner,
};

use super::record::gate_audit;
use crate::decl::ToolDecl;
use crate::executor::gate::{GateAudit, GateVerdict, ScriptGate};

/// Argument names read as the script's working directory.
const CWD_ARGS: &[&str] = &["cwd", "workdir", "working_dir"];
/// Argument names read as the requested timeout, in seconds.
const TIMEOUT_ARGS: &[&str] = &["timeout_secs", "timeout_seconds", "timeout"];
/// Argument names read as the environment the script gets (only the names are scanned).
const ENV_ARGS: &[&str] = &["env", "environment"];

/// Scans every script argument of a call, with the call's final cwd, timeout and environment
/// variable names, and turns the strictest report into a [`GateVerdict`].
///
/// Calls of tools without script arguments are allowed unscanned. A script argument that is
/// missing is nothing to scan; one that is not a string is a deny (`SCAN-INPUT`): the schema should
/// have refused it already, and the gate does not guess.
#[derive(Debug, Clone)]
pub struct ScannerGate {
    scanner: Arc<Scanner>,
    workspace: Option<String>,
}

impl ScannerGate {
    /// A gate over this scanner.
    pub fn new(scanner: Arc<Scanner>) -> Self {
        ScannerGate {
            scanner,
            workspace: None,
        }
    }

    /// The same gate judging each script's effects against this workspace root (the executor's
    /// workspace): reads, writes and sends outside it are reviewed or denied.
    pub fn with_workspace(mut self, root: impl Into<String>) -> Self {
        self.workspace = Some(root.into());
        self
    }

    /// A gate over a scanner with the default policy.
    pub fn with_default_policy() -> Result<Self, PolicyError> {
        Ok(ScannerGate::new(Arc::new(Scanner::new(
            SafetyPolicy::default(),
        )?)))
    }

    /// The scanner.
    pub fn scanner(&self) -> &Scanner {
        &self.scanner
    }

    /// The working directory a scan is judged in: the `cwd` argument joined onto the workspace
    /// (`..` folded, never above the root of the file system), or the workspace itself.
    fn cwd_of(&self, arg: Option<String>) -> Option<String> {
        let Some(root) = &self.workspace else {
            return arg;
        };
        let Some(arg) = arg else {
            return Some(root.clone());
        };
        let joined = if arg.starts_with('/') {
            arg
        } else {
            format!("{}/{arg}", root.trim_end_matches('/'))
        };
        let mut parts: Vec<&str> = Vec::new();
        for p in joined.split('/') {
            match p {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                _ => parts.push(p),
            }
        }
        Some(format!("/{}", parts.join("/")))
    }

    fn requests(&self, decl: &ToolDecl, args: &Value) -> Result<Vec<SafetyScanRequest>, String> {
        let Some(lang) = decl.script_lang else {
            return Ok(Vec::new());
        };
        let first_str = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| args.get(*n).and_then(Value::as_str))
                .map(str::to_owned)
        };
        let cwd = self.cwd_of(first_str(CWD_ARGS));
        let timeout = TIMEOUT_ARGS
            .iter()
            .find_map(|n| args.get(*n).and_then(Value::as_u64));
        let env_names: Vec<String> = ENV_ARGS
            .iter()
            .filter_map(|n| args.get(*n).and_then(Value::as_object))
            .flat_map(|m| m.keys().cloned())
            .collect();
        let mut out = Vec::new();
        for name in &decl.script_args {
            let script = match args.get(name) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => s.clone(),
                Some(_) => return Err(format!("script argument `{name}` is not a string")),
            };
            let mut req = SafetyScanRequest::new(decl.name.clone(), lang, script)
                .with_env_names(env_names.clone())
                .with_open_world(decl.open_world);
            if let Some(root) = &self.workspace {
                req = req.with_workspace(root.clone());
            }
            if let Some(cwd) = &cwd {
                req = req.with_cwd(cwd.clone());
            }
            if let Some(t) = timeout {
                req = req.with_timeout_seconds(t);
            }
            out.push(req);
        }
        Ok(out)
    }
}

fn verdict_of(report: &SafetyReport, block_on_review: bool) -> GateVerdict {
    let rule_ids: Vec<String> = report.rule_ids().into_iter().map(str::to_owned).collect();
    let summary = || {
        report
            .findings
            .iter()
            .filter(|f| f.decision != SafetyDecision::Allow)
            .map(|f| format!("{}: {}", f.rule_id, f.recommendation))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match report.decision {
        SafetyDecision::Allow => GateVerdict::Allow,
        SafetyDecision::NeedsHumanReview if !block_on_review => GateVerdict::Review {
            summary: summary(),
            rule_ids,
        },
        SafetyDecision::NeedsHumanReview => GateVerdict::ReviewBlocked {
            message: format!(
                "the safety scan asks for human review and the policy blocks on review ({})",
                rule_ids.join(", ")
            ),
            rule_ids,
        },
        SafetyDecision::Deny => GateVerdict::Deny {
            message: format!("the safety scan denied the script: {}", summary()),
            rule_ids,
        },
    }
}

impl ScriptGate for ScannerGate {
    fn in_workspace(&self, root: &Path) -> Option<Arc<dyn ScriptGate>> {
        if self.workspace.is_some() {
            return None;
        }
        let root = root.to_str()?;
        Some(Arc::new(self.clone().with_workspace(root)))
    }

    fn check(&self, decl: &ToolDecl, final_args: &Value) -> GateVerdict {
        self.check_audited(decl, final_args).0
    }

    fn check_audited(
        &self,
        decl: &ToolDecl,
        final_args: &Value,
    ) -> (GateVerdict, Option<GateAudit>) {
        let requests = match self.requests(decl, final_args) {
            Ok(r) => r,
            Err(message) => {
                let deny = GateVerdict::Deny {
                    rule_ids: vec!["SCAN-INPUT".to_owned()],
                    message,
                };
                return (deny, None);
            }
        };
        if requests.is_empty() {
            return (GateVerdict::Allow, None);
        }
        let block_on_review = self.scanner.policy().block_on_review;
        let mut merged: Option<(SafetyReport, SafetyScanRequest)> = None;
        for req in requests {
            let report = self.scanner.scan(&req);
            merged = Some(match merged {
                None => (report, req),
                Some((mut acc, first)) => {
                    acc.merge(report);
                    (acc, first)
                }
            });
        }
        let Some((report, req)) = merged else {
            return (GateVerdict::Allow, None);
        };
        let audit = gate_audit(&report, &req);
        (verdict_of(&report, block_on_review), Some(audit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_is_taken_inside_the_workspace() {
        let g = ScannerGate::with_default_policy()
            .expect("default policy")
            .with_workspace("/w/proj");
        assert_eq!(g.cwd_of(None).as_deref(), Some("/w/proj"));
        assert_eq!(
            g.cwd_of(Some("src/./a".into())).as_deref(),
            Some("/w/proj/src/a")
        );
        assert_eq!(g.cwd_of(Some("../..".into())).as_deref(), Some("/"));
        assert_eq!(
            g.cwd_of(Some("/w/proj/b".into())).as_deref(),
            Some("/w/proj/b")
        );
        let unbound = ScannerGate::with_default_policy().expect("default policy");
        assert_eq!(unbound.cwd_of(Some("src".into())).as_deref(), Some("src"));
    }

    #[test]
    fn binding_keeps_a_workspace_given_explicitly() {
        let unbound = ScannerGate::with_default_policy().expect("default policy");
        assert!(unbound.in_workspace(Path::new("/w")).is_some());
        let bound = unbound.with_workspace("/elsewhere");
        assert!(bound.in_workspace(Path::new("/w")).is_none());
    }
}
