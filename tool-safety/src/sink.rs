//! Where a scan collects its results, and the views of a script custom rules get.

use crate::catalog::{finding, id};
use crate::decision::SafetyDecision;
use crate::effects::{Direction, Effect, EffectKind, EffectTarget, MAX_EFFECTS};
use crate::paths::PathClass;
use crate::report::SafetyFinding;
use tool_rules::ScriptLang;

/// Deepest chain of re-parsed strings (`bash -c "python -c '...'"`) followed.
pub(crate) const MAX_NEST: usize = 4;

/// Scans a script nested in another one, in its own language, into the sink at nesting level
/// `nest`; `base` is the outer position nested findings are reported at.
pub(crate) type NestedScan = fn(ScriptLang, &str, &mut Sink, usize, Option<(u32, u32)>);

/// Where a scan collects its results.
pub(crate) struct Sink {
    pub(crate) findings: Vec<SafetyFinding>,
    pub(crate) commands: Vec<CommandView>,
    pub(crate) calls: Vec<CallView>,
    pub(crate) effects: Vec<Effect>,
    pub(crate) cwd_class: PathClass,
    nested: NestedScan,
}

impl Default for Sink {
    /// A sink that cannot follow a script into another language: such a script is a `SCAN-ERROR`
    /// (fail closed). The scanner builds its sinks with [`Sink::new`].
    fn default() -> Self {
        Sink::new(unscannable_nested)
    }
}

/// The nested scan of a sink built without one: the nested script is not vouched for.
fn unscannable_nested(_: ScriptLang, _: &str, sink: &mut Sink, _: usize, base: Option<(u32, u32)>) {
    sink.push_at(
        finding(id::SCAN_ERROR, "nested script not scanned").with_metadata("reason", "nesting"),
        base,
    );
}

impl Sink {
    /// An empty sink that scans nested scripts with `nested`.
    pub(crate) fn new(nested: NestedScan) -> Self {
        Sink {
            findings: Vec::new(),
            commands: Vec::new(),
            calls: Vec::new(),
            effects: Vec::new(),
            cwd_class: PathClass::default(),
            nested,
        }
    }

    /// An empty sink for a sub-scan: same nested scan and working-directory class.
    pub(crate) fn child(&self) -> Self {
        Sink {
            cwd_class: self.cwd_class,
            ..Sink::new(self.nested)
        }
    }

    /// Scan `code` in `lang` into this sink at nesting level `nest`.
    pub(crate) fn scan_nested(
        &mut self,
        lang: ScriptLang,
        code: &str,
        nest: usize,
        base: Option<(u32, u32)>,
    ) {
        (self.nested)(lang, code, self, nest, base);
    }

    /// Record an effect at a 1-based position (the first [`MAX_EFFECTS`] are kept).
    pub(crate) fn effect(
        &mut self,
        kind: EffectKind,
        target: EffectTarget,
        (line, column): (u32, u32),
        evidence: &str,
    ) {
        if self.effects.len() >= MAX_EFFECTS {
            return;
        }
        let e = Effect {
            kind,
            target,
            line,
            column,
            evidence: evidence.to_owned(),
            verdict: SafetyDecision::Allow,
            rule_id: None,
        };
        if !self.effects.contains(&e) {
            self.effects.push(e);
        }
    }

    /// Record a network effect ([`EffectKind::Network`]); its target is the host when one is
    /// known.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn network(
        &mut self,
        url: Option<String>,
        host: Option<String>,
        port: Option<u16>,
        direction: Direction,
        sends: Option<String>,
        at: (u32, u32),
        evidence: &str,
    ) {
        let target = host
            .clone()
            .map_or(EffectTarget::Unknown, EffectTarget::Resolved);
        let kind = EffectKind::Network {
            url,
            host,
            port,
            direction,
            sends,
        };
        self.effect(kind, target, at, evidence);
    }

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

/// `false` (with a `SCAN-ERROR` finding at `base`, the outer position of a nested script) when a
/// script nested `nest` levels deep must not be scanned any further.
pub(crate) fn nesting_ok(sink: &mut Sink, nest: usize, base: Option<(u32, u32)>) -> bool {
    if nest > MAX_NEST {
        sink.push_at(
            finding(id::SCAN_ERROR, "nested scripts too deep").with_metadata("reason", "nesting"),
            base,
        );
        return false;
    }
    true
}
