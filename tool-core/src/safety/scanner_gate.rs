//! The scanner as the executor's script gate (the `script_gate` step).

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use tool_safety::{
    PolicyError, SafetyDecision, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner,
};

use super::record::gate_audit;
use crate::decl::ToolDecl;
use crate::gate::{GateAudit, GateVerdict, ScriptGate};

/// Scans every script argument of a call, with the call's final working directory, timeout and
/// environment variable names (the arguments the tool's [`ScriptSetup`] names; no other argument
/// is read as one of them), and turns the strictest report into a [`GateVerdict`].
///
/// Calls of tools without script arguments are allowed unscanned. A script or setup argument
/// that is missing (or null) is nothing to scan; one of the wrong type (a script that is not a
/// string, a timeout that is not a whole number of seconds, an environment that is not an object)
/// is a deny (`SCAN-INPUT`): the schema should have refused it already, and the gate does not
/// guess.
///
/// [`ScriptSetup`]: crate::decl::ScriptSetup
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
        let setup = &decl.script_setup;
        let cwd = declared(args, setup.cwd.as_deref(), "a string", Value::as_str)?;
        let cwd = self.cwd_of(cwd.map(str::to_owned));
        let timeout = declared(
            args,
            setup.timeout.as_deref(),
            "a whole number of seconds",
            Value::as_u64,
        )?;
        let env_names: Vec<String> =
            declared(args, setup.env.as_deref(), "an object", Value::as_object)?
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
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

/// The value of the setup argument `name` (if the tool declares one and the call gives it), read
/// by `read`; a value `read` does not take is an error naming what was `expected`.
fn declared<'a, T>(
    args: &'a Value,
    name: Option<&str>,
    expected: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>, String> {
    let Some(name) = name else {
        return Ok(None);
    };
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v)
            .map(Some)
            .ok_or_else(|| format!("script setup argument `{name}` is not {expected}")),
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

    /// Only a tool with a script language has anything to scan (see `requests`).
    fn inspects(&self, decl: &ToolDecl) -> bool {
        decl.script_lang.is_some()
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

    fn shell(setup: crate::decl::ScriptSetup) -> ToolDecl {
        let mut decl = crate::registry::ToolDef::builder("shell")
            .description("Runs a script")
            .input_schema(serde_json::json!({"type": "object", "properties": {
                "command": {"type": "string"}, "workdir": {"type": "string"},
                "cwd": {"type": "string"}, "secs": {}, "vars": {}
            }}))
            .script_args(["command"], tool_safety::ScriptLang::Bash)
            .path_args(["workdir", "cwd"])
            .handler(|_ctx, _args| async { "ran" })
            .build()
            .expect("tool")
            .decl()
            .clone();
        decl.script_setup = setup;
        decl
    }

    #[test]
    fn only_the_declared_setup_arguments_are_read() {
        let g = ScannerGate::with_default_policy()
            .expect("default policy")
            .with_workspace("/w");
        let args = serde_json::json!({
            "command": "ls", "cwd": "elsewhere", "workdir": "src", "secs": 9,
            "vars": {"HOME": "x"}, "timeout_secs": 5, "env": {"PATH": "y"}
        });
        // Nothing declared: `cwd`, `timeout_secs` and `env` are plain arguments.
        let plain = g
            .requests(&shell(Default::default()), &args)
            .expect("requests");
        assert_eq!(plain[0].cwd.as_deref(), Some("/w"));
        assert_eq!(plain[0].timeout_seconds, None);
        assert!(plain[0].env_names.is_empty());
        let declared = crate::decl::ScriptSetup {
            cwd: Some("workdir".into()),
            timeout: Some("secs".into()),
            env: Some("vars".into()),
        };
        let r = g.requests(&shell(declared), &args).expect("requests");
        assert_eq!(r[0].cwd.as_deref(), Some("/w/src"));
        assert_eq!(r[0].timeout_seconds, Some(9));
        assert_eq!(r[0].env_names, vec!["HOME".to_owned()]);
    }

    #[test]
    fn a_setup_argument_of_the_wrong_type_denies() {
        let g = ScannerGate::with_default_policy().expect("default policy");
        let decl = shell(crate::decl::ScriptSetup {
            timeout: Some("secs".into()),
            env: Some("vars".into()),
            ..Default::default()
        });
        for (args, why) in [
            (
                serde_json::json!({"command": "ls", "secs": "9"}),
                "`secs` is not a whole number",
            ),
            (
                serde_json::json!({"command": "ls", "secs": -1}),
                "`secs` is not a whole number",
            ),
            (
                serde_json::json!({"command": "ls", "vars": ["A"]}),
                "`vars` is not an object",
            ),
        ] {
            let (verdict, _) = g.check_audited(&decl, &args);
            match verdict {
                GateVerdict::Deny { rule_ids, message } => {
                    assert_eq!(rule_ids, ["SCAN-INPUT"]);
                    assert!(message.contains(why), "{message}");
                }
                other => panic!("{args}: {other:?}"),
            }
        }
        // Null is absent.
        let (verdict, _) =
            g.check_audited(&decl, &serde_json::json!({"command": "ls", "secs": null}));
        assert_eq!(verdict, GateVerdict::Allow);
    }

    #[test]
    fn binding_keeps_a_workspace_given_explicitly() {
        let unbound = ScannerGate::with_default_policy().expect("default policy");
        assert!(unbound.in_workspace(Path::new("/w")).is_some());
        let bound = unbound.with_workspace("/elsewhere");
        assert!(bound.in_workspace(Path::new("/w")).is_none());
    }
}
