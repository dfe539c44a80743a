//! The scanner: policy + rules, built once; parsers reused per thread; failures deny.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use sha2::{Digest, Sha256};
use tree_sitter::{Parser, Tree};

use super::catalog::{self, finding};
use super::paths::{self, PathClass};
use super::policy::{PolicyError, RuleAction, SafetyPolicy};
use super::{RiskLevel, SafetyDecision, SafetyFinding, SafetyReport, SafetyScanRequest};
use crate::decl::ScriptLang;

/// Deepest chain of re-parsed strings (`bash -c "python -c '...'"`) followed.
pub(crate) const MAX_NEST: usize = 4;

const BASH_PARSER: &str = "tree-sitter-bash 0.25";

thread_local! {
    static BASH: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parse bash with this thread's parser (created on first use). `None` if the parser fails.
pub(crate) fn parse_bash(src: &str) -> Option<Tree> {
    BASH.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut p = Parser::new();
            let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
            p.set_language(&language).ok()?;
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        let tree = parser.parse(src, None);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// Where a scan collects its results.
#[derive(Default)]
pub(crate) struct Sink {
    pub(crate) findings: Vec<SafetyFinding>,
    pub(crate) commands: Vec<CommandView>,
    pub(crate) calls: Vec<CallView>,
    pub(crate) cwd_class: PathClass,
}

impl Sink {
    /// Add a finding at a 1-based position, dropping exact duplicates (same rule, same place).
    pub(crate) fn push_at(&mut self, mut f: SafetyFinding, at: Option<(u32, u32)>) {
        if let Some((l, c)) = at {
            f.line = Some(l);
            f.column = Some(c);
        }
        if self
            .findings
            .iter()
            .any(|g| g.rule_id == f.rule_id && g.line == f.line && g.column == f.column)
        {
            return;
        }
        self.findings.push(f);
    }
}

/// A shell command as the bash scanner saw it, after unwrapping and normalization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandView {
    /// Normalized command name (`$?` when computed at run time).
    pub name: String,
    /// Arguments after quote removal (`$HOME` shown as `~`, other expansions as `$NAME`).
    pub args: Vec<String>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// Wrappers removed to reach it (`sudo`, `env`, `xargs`, `find`...).
    pub wrappers: Vec<String>,
}

/// A Python call as the Python scanner saw it, with import aliases resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallView {
    /// Qualified callee, e.g. `os.system` for `from os import system as s; s(...)`.
    pub qualified_name: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// What a custom rule sees: the request, the policy and the parsed script.
pub struct ScanContext<'a> {
    /// The request being scanned.
    pub request: &'a SafetyScanRequest,
    /// The policy in force.
    pub policy: &'a SafetyPolicy,
    /// The tree-sitter syntax tree of a bash script, when it parsed (`None` for Python, whose
    /// calls are in [`ScanContext::calls`]).
    pub tree: Option<&'a Tree>,
    /// Bash commands (empty for Python).
    pub commands: &'a [CommandView],
    /// Python calls (empty for bash).
    pub calls: &'a [CallView],
}

/// A custom rule: pure, deterministic, no side effects. It must only report findings whose rule
/// id is its own [`SafetyRule::id`] (the scanner enforces it); a panic becomes a `SCAN-ERROR` deny.
pub trait SafetyRule: Send + Sync {
    /// Stable id of the rule's findings, e.g. `CUSTOM-INTERNAL-BINARY`.
    fn id(&self) -> &str;
    /// Inspect one script.
    fn scan(&self, ctx: &ScanContext<'_>) -> Vec<SafetyFinding>;
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
            duration_us: 0,
            redacted: false,
            parser: "none".to_owned(),
            policy_version: self.policy.version.clone(),
        };
        let scanned = catch_unwind(AssertUnwindSafe(|| self.scan_inner(req)));
        match scanned {
            Ok((findings, parser)) => {
                report.findings = findings;
                report.parser = parser.to_owned();
            }
            Err(_) => {
                report.findings = vec![
                    finding("SCAN-ERROR", "scanner panicked").with_metadata("reason", "panic")
                ];
            }
        }
        self.apply_policy(&mut report.findings);
        report.recompute();
        report.duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        super::audit::record_span(&span, &report, self.policy.block_on_review);
        report
    }

    fn scan_inner(&self, req: &SafetyScanRequest) -> (Vec<SafetyFinding>, &'static str) {
        let mut sink = Sink::default();
        self.request_checks(req, &mut sink);
        if req.script.len() > self.policy.max_script_bytes || req.script.contains('\0') {
            sink.push_at(
                finding("SCAN-INPUT", "script too large or contains NUL bytes"),
                None,
            );
            return (sink.findings, "none");
        }
        let (tree, parser) = match req.language {
            ScriptLang::Bash => (
                super::bash::scan(&req.script, &mut sink, 0, None),
                BASH_PARSER,
            ),
            ScriptLang::Python => {
                super::python::scan(&req.script, &mut sink, 0, None);
                (None, super::python::PARSER)
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
                        let (ev, r) = super::redact::redact_bounded(&f.evidence);
                        f.evidence = ev;
                        f.evidence_redacted |= r;
                        custom.push(f);
                    }
                }
                Err(_) => custom.push(
                    finding("SCAN-ERROR", "a custom rule panicked")
                        .with_metadata("rule", rule.id()),
                ),
            }
        }
        sink.findings.extend(custom);
        sink.findings.sort_by_key(|f| (f.line, f.column));
        (sink.findings, parser)
    }

    fn request_checks(&self, req: &SafetyScanRequest, sink: &mut Sink) {
        if let Some(t) = req.timeout_seconds {
            if t > self.policy.max_timeout_seconds {
                sink.push_at(
                    finding(
                        "REQ-TIMEOUT",
                        &format!("timeout {t}s > max {}s", self.policy.max_timeout_seconds),
                    ),
                    None,
                );
            }
        }
        if let Some(cwd) = &req.cwd {
            let class = paths::classify(cwd);
            sink.cwd_class = class;
            let allowed = paths::allowlisted(cwd, &self.policy.allowlist.paths);
            if !allowed
                && matches!(
                    class,
                    PathClass::Root
                        | PathClass::SystemTop
                        | PathClass::SystemSub
                        | PathClass::HomeSensitive
                )
            {
                let mut f = finding("REQ-CWD", &format!("cwd {cwd}"));
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
                | "RUBYOPT" => "REQ-ENV",
                "PATH" | "LD_LIBRARY_PATH" | "DYLD_LIBRARY_PATH" | "PYTHONPATH" | "PYTHONHOME" => {
                    "REQ-ENV-PATH"
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

fn action_name(a: RuleAction) -> &'static str {
    a.decision().as_str()
}

/// SHA-256 of a script, hex-encoded (for audit events; never the text itself).
pub(crate) fn script_sha256(script: &str) -> String {
    hex::encode(Sha256::digest(script.as_bytes()))
}

/// `false` (with a `SCAN-ERROR` finding at `base`, the outer position of a nested script) when a
/// script nested `nest` levels deep must not be scanned any further.
pub(crate) fn nesting_ok(sink: &mut Sink, nest: usize, base: Option<(u32, u32)>) -> bool {
    if nest > MAX_NEST {
        sink.push_at(
            finding("SCAN-ERROR", "nested scripts too deep").with_metadata("reason", "nesting"),
            base,
        );
        return false;
    }
    true
}

/// Parse bash `src` for a scan at nesting level `nest`; too deep a nesting or a parser failure is
/// a `SCAN-ERROR` finding at `base` and no tree.
pub(crate) fn parse_bash_for_scan(
    src: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
) -> Option<Tree> {
    if !nesting_ok(sink, nest, base) {
        return None;
    }
    let tree = parse_bash(src);
    if tree.is_none() {
        sink.push_at(
            finding("SCAN-ERROR", "bash parser failed").with_metadata("reason", "parser"),
            base,
        );
    }
    tree
}
