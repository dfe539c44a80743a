//! Step `approve`: by risk (safe and read-only need none; mutation asks and may be granted for
//! the session; destructive and dangerous ask every time), and whenever the script gate asks
//! for review. No approver is a denial. An approver may edit the arguments: the edited call goes
//! down the checks again (see [`pipeline`](super::pipeline)), at most
//! [`max_edit_rounds`](super::ExecutorConfig::max_edit_rounds) times. An approver that answers
//! [`Pending`](crate::approval::ApprovalDecision::Pending) stops the call (`input_required`)
//! without running it.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::{Map, Value};

use super::state::{CallState, StepContext, Stop};
use crate::approval::{
    risk_allows_session_grant, risk_needs_approval, ApprovalDecision, ApprovalReason,
    ApprovalRequest, ApprovalStatus,
};
use crate::reason::ReasonCode;
use crate::status::Step;

/// What approval came to, when it did not refuse the call.
pub(super) enum Approval {
    /// The call may run as checked.
    Granted,
    /// The approver edited the arguments: check these and ask again.
    Edited(Map<String, Value>),
}

fn refuse(code: ReasonCode, message: String) -> Result<Approval, Stop> {
    Err(Stop::new(Step::Approve, code, message))
}

/// Decide whether the checked call may run; `round` counts the edits so far.
pub(super) async fn decide(
    cx: &StepContext<'_>,
    call: &mut CallState<'_>,
    round: u32,
) -> Result<Approval, Stop> {
    let decl = call.tool.decl();
    let session = cx.session;
    let record = &mut call.record;
    let review = call.review.is_some();
    if !review && !risk_needs_approval(decl.risk) {
        record.approval = ApprovalStatus::NotRequired;
        return Ok(Approval::Granted);
    }
    let grant_allowed = !review && risk_allows_session_grant(decl.risk);
    if grant_allowed && session.has_grant(&decl.name) {
        record.approval = ApprovalStatus::SessionGrant;
        return Ok(Approval::Granted);
    }
    let Some(approver) = cx.options.approver_or(cx.executor.config.approver.as_ref()) else {
        record.approval = ApprovalStatus::NoApprover;
        return match &call.review {
            Some((summary, _)) => refuse(
                ReasonCode::ReviewRequired,
                format!(
                    "the safety scan asks for human review and no approver is configured: \
                     {summary}"
                ),
            ),
            None => refuse(
                ReasonCode::ApprovalDenied,
                format!(
                    "`{}` (risk `{}`) needs approval and no approver is configured",
                    decl.name, decl.risk
                ),
            ),
        };
    };
    let request = ApprovalRequest {
        session_id: session.id().to_owned(),
        call_id: cx.call_id.to_owned(),
        tool: decl.name.clone(),
        risk: decl.risk,
        args: call.args.clone(),
        reason: match &call.review {
            Some((summary, rule_ids)) => ApprovalReason::Review {
                summary: summary.clone(),
                rule_ids: rule_ids.clone(),
            },
            None => ApprovalReason::Risk { risk: decl.risk },
        },
        session_grant_allowed: grant_allowed,
        round,
        effects: record
            .safety
            .as_ref()
            .map(|audit| audit.described_effects.clone())
            .unwrap_or_default(),
    };
    let decision = AssertUnwindSafe(approver.decide(&request))
        .catch_unwind()
        .await
        .unwrap_or_else(|_| ApprovalDecision::Deny {
            reason: "the approver failed".to_owned(),
        });
    match decision {
        ApprovalDecision::Approve => {
            record.approval = ApprovalStatus::Approved;
            Ok(Approval::Granted)
        }
        ApprovalDecision::ApproveForSession if grant_allowed => {
            session.grant(&decl.name);
            record.approval = ApprovalStatus::ApprovedForSession;
            Ok(Approval::Granted)
        }
        ApprovalDecision::ApproveForSession => {
            record.approval = ApprovalStatus::Approved;
            Ok(Approval::Granted)
        }
        ApprovalDecision::Deny { reason } => {
            record.approval = ApprovalStatus::Denied;
            refuse(
                ReasonCode::ApprovalDenied,
                format!("approval denied: {reason}"),
            )
        }
        ApprovalDecision::Pending => {
            record.approval = ApprovalStatus::Pending;
            refuse(
                ReasonCode::InputRequired,
                "approval is pending: the question was put to the client, and the call runs \
                 when it is retried with the answer"
                    .to_owned(),
            )
        }
        ApprovalDecision::Edit { args: edited } => {
            let max = cx.executor.config.max_edit_rounds;
            if round + 1 > max {
                record.approval = ApprovalStatus::EditLimit;
                return refuse(
                    ReasonCode::ApprovalDenied,
                    format!("the arguments were edited more than {max} times"),
                );
            }
            match edited {
                Value::Object(m) => Ok(Approval::Edited(m)),
                _ => refuse(
                    ReasonCode::InvalidArguments,
                    "the edited arguments are not a JSON object".to_owned(),
                ),
            }
        }
    }
}
