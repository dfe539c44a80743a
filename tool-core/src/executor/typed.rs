//! The typed path: a `{"tool": NAME, "args": {...}}` call to a `#[tool]` with a typed entry
//! (see `crate::registry::typed`) has its arguments read straight into the function's parameter
//! types, where the general path builds a JSON object, validates it against the schema and then
//! takes it apart again. The entry is generated only where those types check exactly what the
//! schema says, so the call it accepts is one the general path would run with the same values.
//!
//! The path is taken only where it leaves every step's answer as it is: no argument filter,
//! override or default for the tool, no dialect mapping, no audit (which hashes the JSON
//! arguments), no permission check, a risk that needs no approval, no script for the gate to
//! judge, nothing that refuses to confine the tool, an error budget not spent, and a call whose
//! every path argument the guard accepts. Anything else, or an arguments text the entry does not
//! take, goes down the general path from the start, with nothing done: refusals come from there,
//! with their precise reasons.
//!
//! ```text
//! budget → parse → lookup → validate → guard      (typed: read, guarded)
//! approve (not required) → run → outcome          (as the general path)
//! ```

use super::engine::Executor;
use super::session::Session;
use super::state::{CallState, Record, StepContext, Verdict};
use super::{budget, run};
use crate::approval::{risk_needs_approval, ApprovalStatus};
use crate::gate::ScanMode;
use crate::guard::path::WorkspacePath;
use crate::registry::typed::TypedRun;
use crate::registry::RegisteredTool;

/// A call read and guarded by the typed path, ready to run.
pub(super) struct Ready<'r> {
    tool: &'r RegisteredTool,
    paths: Vec<(String, WorkspacePath)>,
    run: TypedRun,
}

impl Executor {
    /// The call `text` read by its tool's typed entry and guarded, when the call and the
    /// configuration allow the typed path; `None` leaves it to the general path, nothing done.
    pub(super) fn typed_call(&self, session: &Session, text: &str) -> Option<Ready<'_>> {
        let (name, raw) = crate::call::tool_args_raw(text, &self.config.parse_limits)?;
        let tool = self.registry.get(&name)?;
        let entry = tool.def().typed()?;
        if !self.typed_allowed(tool) || budget::check(self, session).is_err() {
            return None;
        }
        let typed = entry(raw)?;
        // The guard's walk: the declared path arguments in order, each checked once.
        let mut paths: Vec<(String, WorkspacePath)> = Vec::with_capacity(typed.paths.len());
        for name in tool.def().guarded_path_names() {
            let Some((_, raw)) = typed.paths.iter().find(|(n, _)| *n == name) else {
                continue;
            };
            let checked = self.guard.check(raw).ok()?;
            if !paths.iter().any(|(n, _)| n == name) {
                paths.push((name.to_owned(), checked));
            }
        }
        Some(Ready {
            tool,
            paths,
            run: typed.run,
        })
    }

    /// Whether every step between lookup and run would pass a checked call of `tool` without
    /// reading its JSON arguments.
    fn typed_allowed(&self, tool: &RegisteredTool) -> bool {
        let config = &self.config;
        let decl = tool.decl();
        let gate_silent = config.scan == ScanMode::Off
            || match &config.script_gate {
                Some(gate) => !gate.inspects(decl),
                None => decl.script_args.is_empty(),
            };
        config.filters.is_empty()
            && !config.overrides.iter().any(|r| r.applies(decl))
            && !config.defaults.iter().any(|r| r.applies(decl))
            && config.dialect.is_none()
            && !config.audit.is_enabled()
            && tool.def().permission_check().is_none()
            && !risk_needs_approval(decl.risk)
            && gate_silent
            && self.confinement.refusal(decl).is_none()
    }
}

impl Ready<'_> {
    /// The tool's name.
    pub(super) fn name(&self) -> &str {
        &self.tool.decl().name
    }
}

/// The steps of a call the typed path read: approval is not required (the path is not taken
/// otherwise), then the general path's `run`.
pub(super) async fn steps(cx: &StepContext<'_>, ready: Ready<'_>) -> (Verdict, Record) {
    cx.executor.count_typed();
    let Ready { tool, paths, run } = ready;
    let mut call = CallState::typed(tool, paths, run);
    call.record.approval = ApprovalStatus::NotRequired;
    let verdict = run::run(cx, &mut call).await;
    (verdict, call.record)
}
