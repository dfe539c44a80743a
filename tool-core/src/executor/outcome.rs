//! Step `outcome`: the verdict becomes a [`CallResult`]: the output is charged to the session's
//! output budget, the result counts against the error budget (see [`budget`](super::budget)),
//! a context modifier is merged (unless the caller merges it), the tracing span gets its
//! outcome fields and the audit event is written.

use std::time::Instant;

use sha2::{Digest, Sha256};

use super::engine::Executor;
use super::output::{charge_session_budget, Output};
use super::result::CallResult;
use super::session::Session;
use super::state::{CallState, Record, StepContext, Stop, Verdict};
use crate::audit::{timestamp_now, AuditEvent, SafetyAudit};
use crate::reason::ReasonCode;
use crate::sandbox::call::NOT_RUN;
use crate::schema::canonical::canonical_bytes;
use crate::status::CallStatus;

/// A call at its end, for [`finish`].
pub(super) struct Finished<'s> {
    /// The tool, when the call parsed.
    pub(super) tool: Option<String>,
    pub(super) call_id: String,
    /// `call_id` came with the call.
    pub(super) call_id_given: bool,
    pub(super) verdict: Verdict,
    pub(super) record: Record,
    /// Merge a context modifier into the session ([`CallOptions::merge_modifier`](super::CallOptions::merge_modifier)).
    pub(super) merge_modifier: bool,
    /// When the call was received.
    pub(super) start: Instant,
    pub(super) span: &'s tracing::Span,
}

/// Hash the final arguments for the audit event, before the handler takes them.
#[inline]
pub(super) fn hash_args(cx: &StepContext<'_>, call: &mut CallState<'_>) {
    if cx.executor.config.audit.is_enabled() {
        call.record.args_sha256 = Some(hex::encode(Sha256::digest(canonical_bytes(&call.args))));
    }
}

/// Build the result, count it against the budget, audit it.
pub(super) fn finish(executor: &Executor, session: &Session, call: Finished<'_>) -> CallResult {
    let Finished {
        tool,
        call_id,
        call_id_given,
        verdict,
        mut record,
        merge_modifier,
        start,
        span,
    } = call;
    // Charged here, in result order, so concurrent calls share the session budget
    // deterministically.
    let (status, stop, output, content, modifier) = match verdict {
        Verdict::Ok {
            output,
            content,
            modifier,
        } => {
            let (out, cut) = charge_session_budget(
                session,
                Output {
                    value: output,
                    content,
                },
            );
            record.truncated |= cut;
            (CallStatus::Ok, None, Some(out.value), out.content, modifier)
        }
        Verdict::Refused(stop) => (CallStatus::Refused, Some(stop), None, Vec::new(), None),
        Verdict::Failed(stop) => (CallStatus::Failed, Some(stop), None, Vec::new(), None),
    };
    let (code, step, message, error_code, violations) = match stop {
        Some(Stop {
            step,
            code,
            message,
            error_code,
            violations,
        }) => (
            Some(code),
            Some(step),
            Some(message),
            error_code,
            violations,
        ),
        None => (None, None, None, None, Vec::new()),
    };
    let counted = !matches!(
        code,
        Some(ReasonCode::Cancelled | ReasonCode::ErrorBudgetExhausted)
    );
    if counted {
        session.record(status == CallStatus::Ok);
    }
    let modifier_applied = match &modifier {
        Some(m) if merge_modifier && !m.is_empty() => {
            session.apply_modifier(m);
            true
        }
        _ => false,
    };
    let duration = start.elapsed();
    let enforced = record.enforced.unwrap_or(NOT_RUN);
    span.record("tool.status", status.as_str());
    span.record("tool.approval", record.approval.as_str());
    if let Some(code) = code {
        span.record("tool.code", code.as_str());
    }
    if let Some(step) = step {
        span.record("tool.step", step.as_str());
    }
    if !record.rule_ids.is_empty() {
        span.record("tool.safety.rule_ids", record.rule_ids.join(",").as_str());
    }
    tracing::debug!(parent: span, duration_ms = duration.as_millis() as u64, "tool call finished");
    if executor.config.audit.is_enabled() {
        let event = AuditEvent {
            timestamp: timestamp_now(),
            session: session.id().to_owned(),
            tool: tool.clone(),
            call_id: call_id.clone(),
            status,
            code,
            error_code: error_code.clone(),
            step,
            risk: record.risk,
            approval: record.approval,
            rule_ids: record.rule_ids,
            duration_ms: duration.as_millis().try_into().unwrap_or(u64::MAX),
            args_sha256: record.args_sha256,
            registry_fingerprint: executor.registry.fingerprint().to_owned(),
            truncated: record.truncated,
            scan: executor.config.scan,
            enforced: enforced.to_owned(),
            safety: record
                .safety
                .map(|gate| SafetyAudit::of_call(gate, code, record.approval)),
        };
        if let Err(e) = executor.config.audit.record(&event.redacted()) {
            tracing::error!(parent: span, error = %e, "the audit event could not be written");
        }
    }
    CallResult {
        tool,
        call_id,
        call_id_given,
        status,
        code,
        step,
        message,
        error_code,
        violations,
        output,
        content,
        modifier,
        modifier_applied,
        truncated: record.truncated,
        approval: record.approval,
        duration,
        enforced,
    }
}
