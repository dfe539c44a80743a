//! Step `script_gate`: the configured [`ScriptGate`](super::ScriptGate) (the static safety scan)
//! judges the final arguments: allow, ask for review (the approve step asks a human), block on
//! review (`review_required`) or deny (`safety_denied`). A gate that panics denies (`SCAN-ERROR`);
//! a tool with script arguments and no gate is refused: unscanned scripts never run, unless the
//! configuration switched the scan off explicitly ([`ScanMode::Off`]).

use std::panic::AssertUnwindSafe;

use super::state::{CallState, StepContext, Stop};
use crate::gate::{GateVerdict, ScanMode};
use crate::reason::ReasonCode;
use crate::status::Step;

/// Ask the gate; keep its findings and audit fields in the call's record.
#[inline]
pub(super) fn check(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    let decl = call.tool.decl();
    call.review = None;
    if cx.executor.config.scan == ScanMode::Off {
        return Ok(());
    }
    let Some(gate) = &cx.executor.config.script_gate else {
        if decl.script_args.is_empty() {
            return Ok(());
        }
        return Err(Stop::new(
            Step::ScriptGate,
            ReasonCode::SafetyDenied,
            format!(
                "`{}` takes scripts and no script scanner is configured",
                decl.name
            ),
        ));
    };
    let args = &call.args;
    let (verdict, audit) =
        std::panic::catch_unwind(AssertUnwindSafe(|| gate.check_audited(decl, args)))
            .unwrap_or_else(|_| {
                let deny = GateVerdict::Deny {
                    rule_ids: vec!["SCAN-ERROR".to_owned()],
                    message: "the safety scanner failed".to_owned(),
                };
                (deny, None)
            });
    let (rule_ids, stop) = match verdict {
        GateVerdict::Allow => (Vec::new(), None),
        GateVerdict::Review { summary, rule_ids } => {
            call.review = Some((summary, rule_ids.clone()));
            (rule_ids, None)
        }
        GateVerdict::ReviewBlocked { rule_ids, message } => (
            rule_ids,
            Some(Stop::new(
                Step::ScriptGate,
                ReasonCode::ReviewRequired,
                message,
            )),
        ),
        GateVerdict::Deny { rule_ids, message } => (
            rule_ids,
            Some(Stop::new(
                Step::ScriptGate,
                ReasonCode::SafetyDenied,
                message,
            )),
        ),
    };
    // The gate's part of the call's record, in one place; `blocked` is the outcome step's.
    call.record.rule_ids = rule_ids;
    call.record.safety = audit;
    stop.map_or(Ok(()), Err)
}
