//! The scanner: policy + rules, built once; parsers reused per thread; failures deny.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::catalog::{self, finding, id};
use crate::decision::SafetyDecision;
use crate::effects::{Effect, EffectKind, EffectTarget};
use crate::judge::{is_hidden_code, judge, sharpen_hidden, Workspace};
use crate::paths::{self, PathClass};
use crate::policy::{PolicyError, RuleAction, SafetyPolicy};
use crate::report::{RiskLevel, SafetyFinding, SafetyReport, SafetyScanRequest};
use crate::rule::{SafetyRule, ScanContext};
use crate::sink::Sink;
use crate::{audit, bash, python, redact};
use tool_rules::ScriptLang;

/// Scan a script nested in another one (`bash -c "python -c '…'"`, `os.system(…)`) in its own
/// language. The scanner hands this to every [`Sink`], so the language modules never import each
/// other.
fn scan_nested(
    lang: ScriptLang,
    code: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
) {
    match lang {
        ScriptLang::Bash => {
            bash::scan(code, sink, nest, base);
        }
        ScriptLang::Python => python::scan(code, sink, nest, base),
    }
}

/// The safety scanner: a policy plus built-in and custom rules, built once and shared.
pub struct Scanner {
    policy: SafetyPolicy,
    rules: Vec<Box<dyn SafetyRule>>,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("policy", &self.policy)
            .field(
                "custom_rules",
                &self
                    .rules
                    .iter()
                    .map(|r| r.id().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Scanner {
    /// A scanner with the built-in rules only. Fails if the policy overrides something it may not.
    pub fn new(policy: SafetyPolicy) -> Result<Self, PolicyError> {
        Self::with_rules(policy, Vec::new())
    }

    /// A scanner with custom rules added after the built-in ones.
    pub fn with_rules(
        policy: SafetyPolicy,
        rules: Vec<Box<dyn SafetyRule>>,
    ) -> Result<Self, PolicyError> {
        let ids: Vec<&str> = rules.iter().map(|r| r.id()).collect();
        policy.validate(&ids)?;
        Ok(Scanner { policy, rules })
    }

    /// The policy in force.
    pub fn policy(&self) -> &SafetyPolicy {
        &self.policy
    }

    /// Scan one request. Never fails: any internal failure is a `SCAN-ERROR` deny.
    pub fn scan(&self, req: &SafetyScanRequest) -> SafetyReport {
        let span = tracing::info_span!(
            "tool.safety.scan",
            tool.name = %req.tool_name,
            tool.safety.decision = tracing::field::Empty,
            tool.safety.risk_level = tracing::field::Empty,
            tool.safety.rule_id = tracing::field::Empty,
            tool.safety.rule_ids = tracing::field::Empty,
            tool.safety.duration_ms = tracing::field::Empty,
            tool.safety.redacted = tracing::field::Empty,
            tool.safety.blocked = tracing::field::Empty,
        );
        let _enter = span.enter();
        let started = Instant::now();
        let mut report = SafetyReport {
            decision: SafetyDecision::Allow,
            risk_level: RiskLevel::None,
            tool_name: req.tool_name.clone(),
            language: req.language,
            findings: Vec::new(),
            effects: Vec::new(),
            duration_us: 0,
            redacted: false,
            parser: "none".to_owned(),
            policy_version: self.policy.version.clone(),
        };
        let scanned = catch_unwind(AssertUnwindSafe(|| self.scan_inner(req)));
        match scanned {
            Ok((findings, effects, parser)) => {
                report.findings = findings;
                report.effects = effects;
                report.parser = parser.to_owned();
            }
            Err(_) => {
                report.findings =
                    vec![finding(id::SCAN_ERROR, "scanner panicked")
                        .with_metadata("reason", "panic")];
            }
        }
        self.apply_policy(&mut report.findings);
        settle_verdicts(&mut report.effects, &report.findings);
        report.recompute();
        report.duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        audit::record_span(&span, &report, self.policy.block_on_review);
        report
    }

    /// The report for a script in a language the scanner does not read (`language` as the
    /// caller tagged it): a `SCAN-ERROR` deny, since what is not parsed is not vouched for.
    pub fn scan_unsupported(&self, tool_name: &str, language: &str) -> SafetyReport {
        let mut r = self.scan(&SafetyScanRequest::new(tool_name, ScriptLang::Bash, ""));
        r.findings.push(
            finding(id::SCAN_ERROR, "unsupported code block language")
                .with_metadata("language", language),
        );
        r.recompute();
        r
    }

    fn scan_inner(
        &self,
        req: &SafetyScanRequest,
    ) -> (Vec<SafetyFinding>, Vec<Effect>, &'static str) {
        let mut sink = Sink::new(scan_nested);
        self.request_checks(req, &mut sink);
        if req.script.len() > self.policy.max_script_bytes || req.script.contains('\0') {
            sink.push_at(
                finding(id::SCAN_INPUT, "script too large or contains NUL bytes"),
                None,
            );
            return (sink.findings, Vec::new(), "none");
        }
        let (tree, parser) = match req.language {
            ScriptLang::Bash => (bash::scan(&req.script, &mut sink, 0, None), bash::PARSER),
            ScriptLang::Python => {
                python::scan(&req.script, &mut sink, 0, None);
                (None, python::PARSER)
            }
        };
        let ctx = ScanContext {
            request: req,
            policy: &self.policy,
            tree: tree.as_ref(),
            commands: &sink.commands,
            calls: &sink.calls,
        };
        let mut custom = Vec::new();
        for rule in &self.rules {
            match catch_unwind(AssertUnwindSafe(|| rule.scan(&ctx))) {
                Ok(found) => {
                    for mut f in found {
                        f.rule_id = rule.id().to_owned();
                        let (ev, r) = redact::redact_bounded(&f.evidence);
                        f.evidence = ev;
                        f.evidence_redacted |= r;
                        custom.push(f);
                    }
                }
                Err(_) => custom.push(
                    finding(id::SCAN_ERROR, "a custom rule panicked")
                        .with_metadata("rule", rule.id()),
                ),
            }
        }
        sink.findings.extend(custom);
        let ws = Workspace {
            root: req.workspace.as_deref(),
            cwd: req.cwd.as_deref(),
            open_world: req.open_world,
            allowed_hosts: &self.policy.network_allow_hosts,
        };
        // Where a built-in rule already speaks at least as strictly, it alone speaks.
        let judged = judge(&sink.effects, &ws, &self.policy.allowlist.paths);
        let mut effects = std::mem::take(&mut sink.effects);
        // Except code the scan cannot see: its finding stays beside the built-in rule's (they
        // say different things), and may be sharpened below.
        for (f, at, i) in judged {
            let (line, column) = at.unzip();
            let covering = sink
                .findings
                .iter()
                .filter(|_| !is_hidden_code(&f.rule_id))
                .find(|g| g.line == line && g.column == column && g.decision >= f.decision)
                .map(|g| (g.rule_id.clone(), g.decision));
            let covered = covering.is_some();
            let (rule, decision) = covering.unwrap_or((f.rule_id.clone(), f.decision));
            if let Some(e) = effects.get_mut(i) {
                if e.rule_id.is_none() || decision > e.verdict {
                    e.rule_id = Some(rule);
                    e.verdict = decision;
                }
            }
            if !covered {
                sink.push_at(f, at);
            }
        }
        sharpen_hidden(&mut sink.findings, &mut effects);
        // Paths as they will be: against the tracked cwd, then the request's cwd and workspace.
        if ws.cwd.or(ws.root).is_some() {
            for e in &mut effects {
                if e.kind.on_path() || e.kind == EffectKind::ProcessSpawn {
                    match &mut e.target {
                        EffectTarget::Resolved(v) => *v = ws.resolve(v),
                        EffectTarget::Set(vs) => vs.iter_mut().for_each(|v| *v = ws.resolve(v)),
                        EffectTarget::Unknown => {}
                    }
                }
            }
        }
        // One command often has several effects: redact its text once.
        let mut redacted: Vec<(String, String)> = Vec::new();
        for e in &mut effects {
            match redacted.iter().find(|(raw, _)| *raw == e.evidence) {
                Some((_, r)) => e.evidence = r.clone(),
                None => {
                    let r = redact::redact_bounded(&e.evidence).0;
                    redacted.push((std::mem::replace(&mut e.evidence, r.clone()), r));
                }
            }
            if let EffectKind::Network { url: Some(u), .. } = &mut e.kind {
                *u = redact::redact_bounded(u).0;
            }
        }
        sink.findings.sort_by_key(|f| (f.line, f.column));
        (sink.findings, effects, parser)
    }

    fn request_checks(&self, req: &SafetyScanRequest, sink: &mut Sink) {
        if let Some(t) = req.timeout_seconds {
            if t > self.policy.max_timeout_seconds {
                sink.push_at(
                    finding(
                        id::REQ_TIMEOUT,
                        &format!("timeout {t}s > max {}s", self.policy.max_timeout_seconds),
                    ),
                    None,
                );
            }
        }
        if let Some(cwd) = &req.cwd {
            let class = paths::classify(cwd);
            sink.cwd_class = class;
            // A cwd inside the workspace is the workspace's, wherever the workspace lies.
            let inside = req.workspace.as_deref().is_some_and(|w| {
                let w = w.trim_end_matches('/');
                cwd == w || cwd.strip_prefix(w).is_some_and(|r| r.starts_with('/'))
            });
            let allowed = inside || paths::allowlisted(cwd, &self.policy.allowlist.paths);
            if !allowed
                && matches!(
                    class,
                    PathClass::Root
                        | PathClass::SystemTop
                        | PathClass::SystemSub
                        | PathClass::HomeSensitive
                )
            {
                let mut f = finding(id::REQ_CWD, &format!("cwd {cwd}"));
                f.subject_path = Some(cwd.clone());
                sink.push_at(f, None);
            }
        }
        for name in &req.env_names {
            let rule = match name.as_str() {
                "LD_PRELOAD"
                | "LD_AUDIT"
                | "DYLD_INSERT_LIBRARIES"
                | "BASH_ENV"
                | "ENV"
                | "PROMPT_COMMAND"
                | "PYTHONSTARTUP"
                | "PYTHONINSPECT"
                | "PERL5OPT"
                | "NODE_OPTIONS"
                | "RUBYOPT" => id::REQ_ENV,
                "PATH" | "LD_LIBRARY_PATH" | "DYLD_LIBRARY_PATH" | "PYTHONPATH" | "PYTHONHOME" => {
                    id::REQ_ENV_PATH
                }
                _ => continue,
            };
            sink.push_at(finding(rule, &format!("env {name}")), None);
        }
    }

    fn apply_policy(&self, findings: &mut Vec<SafetyFinding>) {
        let allow = &self.policy.allowlist;
        findings.retain(|f| {
            if catalog::is_locked(&f.rule_id) {
                return true;
            }
            if f.decision == SafetyDecision::NeedsHumanReview
                && f.subject_command
                    .as_ref()
                    .is_some_and(|c| allow.commands.contains(c))
            {
                return false;
            }
            if let Some(p) = &f.subject_path {
                let class = paths::classify(p);
                if !matches!(class, PathClass::Root | PathClass::Home)
                    && paths::allowlisted(p, &allow.paths)
                {
                    return false;
                }
            }
            true
        });
        for f in findings.iter_mut() {
            if catalog::is_locked(&f.rule_id) {
                continue;
            }
            if let Some(action) = self.policy.rules.get(&f.rule_id) {
                let mut d = action.decision();
                if f.risk_level == RiskLevel::Critical && *action == RuleAction::Allow {
                    // Never silently allow a critical finding (custom rules are not validated by level).
                    d = SafetyDecision::NeedsHumanReview;
                    f.metadata
                        .insert("override".to_owned(), "capped_at_review".to_owned());
                } else {
                    f.metadata
                        .insert("override".to_owned(), action_name(*action).to_owned());
                }
                f.decision = d;
            }
        }
    }
}

/// Each effect's verdict after the policy: the decision of the finding (rule and position) that
/// judged it, or `allow` when the policy dropped that finding.
fn settle_verdicts(effects: &mut [Effect], findings: &[SafetyFinding]) {
    for e in effects {
        let Some(rule) = &e.rule_id else { continue };
        e.verdict = findings
            .iter()
            .filter(|f| &f.rule_id == rule && f.line == Some(e.line) && f.column == Some(e.column))
            .map(|f| f.decision)
            .max()
            .unwrap_or(SafetyDecision::Allow);
    }
}

fn action_name(a: RuleAction) -> &'static str {
    a.decision().as_str()
}
