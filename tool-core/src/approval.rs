//! Human approval by risk: who is asked, what they see, what they may answer.
//!
//! `safe` and `read_only` tools need no approval. `mutation` asks, and the answer may cover the
//! rest of the session. `destructive` and `dangerous` ask every time; a session grant is treated
//! as a one-time approval. A safety review asks whatever the risk and is never granted for the
//! session. No approver configured means deny. An approver that puts the question to someone who
//! answers later (an MCP client, through an input-required result) answers
//! [`ApprovalDecision::Pending`]: the call does not run now, and is retried with the answer.

use std::fmt;

/// The future an [`Approver`] returns, re-exported so an implementation needs no `futures`
/// dependency of its own.
pub use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decl::Risk;

/// Why a call needs approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The tool's declared risk asks for it.
    Risk {
        /// The declared risk.
        risk: Risk,
    },
    /// The safety scan found something a human must look at.
    Review {
        /// The findings, summarized for a human.
        summary: String,
        /// The rule ids that fired.
        rule_ids: Vec<String>,
    },
}

impl fmt::Display for ApprovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalReason::Risk { risk } => write!(f, "the tool's risk is `{risk}`"),
            ApprovalReason::Review { summary, rule_ids } => {
                write!(f, "safety review ({}): {summary}", rule_ids.join(", "))
            }
        }
    }
}

/// What an approver is asked about: the call exactly as it would run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The session the call belongs to.
    pub session_id: String,
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The tool's declared risk.
    pub risk: Risk,
    /// The final arguments (after filters, defaults and path normalization).
    pub args: Value,
    /// Why approval is needed.
    pub reason: ApprovalReason,
    /// `true` when an [`ApprovalDecision::ApproveForSession`] answer will be honoured as a grant
    /// (only for `mutation` tools outside a safety review).
    pub session_grant_allowed: bool,
    /// 0 for the first question, then one more per edit of the arguments.
    pub round: u32,
    /// What the call's scripts will do, as the safety scan judged it: the effects and
    /// dynamic-execution findings that need a look, in words (`fetches https://host/x.html`,
    /// `kills processes named sshd`, `writes /root/.bashrc`), redacted, at most a few then
    /// `+N more`. Empty when nothing was scanned or nothing needs a look.
    pub effects: Vec<String>,
}

impl ApprovalRequest {
    /// [`effects`](Self::effects) on one line, `; `-separated; `None` when there are none.
    pub fn effects_line(&self) -> Option<String> {
        (!self.effects.is_empty()).then(|| self.effects.join("; "))
    }

    /// [`args`](Self::args) as a person is shown them (the CLI prompt, the MCP question):
    /// indented JSON, one key per line, with secrets masked line by line by the audit log's
    /// redactor ([`redact_text`](crate::audit::redact_text) masks the same way), so a token inside a script argument
    /// or under a secret-named key is not put on a screen. `args` itself stays exact: the
    /// approver decides on the call as it runs.
    pub fn args_shown(&self) -> String {
        serde_json::to_string_pretty(&self.args)
            .unwrap_or_default()
            .lines()
            .map(|line| tool_rules::redact::redact(line).0)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalDecision {
    /// Run this call.
    Approve,
    /// Run this call, and later calls of the same tool in this session without asking. Honoured
    /// only when the request says `session_grant_allowed`; otherwise a one-time approval.
    ApproveForSession,
    /// Do not run the call.
    Deny {
        /// Why, shown to the model.
        reason: String,
    },
    /// Run with these arguments instead. They go through every check again (trusted argument
    /// rules, schema, path guard, permissions, script gate) and, when approval is still needed,
    /// back to the approver; after too many edits the call is refused.
    Edit {
        /// The replacement arguments (a JSON object).
        args: Value,
    },
    /// Not decided yet: the approver has put this request's question to someone who answers
    /// later (an MCP client, through an input-required result). The call does not run now: it
    /// stops with [`ReasonCode::InputRequired`](crate::reason::ReasonCode::InputRequired) and
    /// approval status `pending`, and whoever retries it brings the answer.
    Pending,
}

/// Decides whether a call that needs approval may run (a terminal prompt, a UI, a policy).
pub trait Approver: Send + Sync {
    /// Answer one request.
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision>;
}

/// An approver that gives the same answer to every request (for scripts and tests).
#[derive(Debug, Clone)]
pub struct FixedApprover {
    decision: ApprovalDecision,
}

impl FixedApprover {
    /// Approve every request (once; never as a session grant).
    pub fn allow() -> Self {
        FixedApprover {
            decision: ApprovalDecision::Approve,
        }
    }

    /// Deny every request with this reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        FixedApprover {
            decision: ApprovalDecision::Deny {
                reason: reason.into(),
            },
        }
    }
}

impl Approver for FixedApprover {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let d = self.decision.clone();
        Box::pin(async move { d })
    }
}

/// An approver from a function or closure that answers at once: `approval::from_fn(|req| ..)`.
///
/// ```
/// use std::sync::Arc;
/// use tool_core::approval::{self, ApprovalDecision};
/// use tool_core::ExecutorConfig;
///
/// let approver = approval::from_fn(|req| {
///     if req.tool == "write_file" {
///         ApprovalDecision::Approve
///     } else {
///         ApprovalDecision::Deny { reason: format!("`{}` is not allowed here", req.tool) }
///     }
/// });
/// let config = ExecutorConfig::new(".").approver(Arc::new(approver));
/// # drop(config);
/// ```
pub fn from_fn<F>(decide: F) -> FnApprover<F>
where
    F: Fn(&ApprovalRequest) -> ApprovalDecision + Send + Sync,
{
    FnApprover { decide }
}

/// The approver [`from_fn`] makes.
#[derive(Clone)]
pub struct FnApprover<F> {
    decide: F,
}

impl<F> fmt::Debug for FnApprover<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnApprover").finish_non_exhaustive()
    }
}

impl<F> Approver for FnApprover<F>
where
    F: Fn(&ApprovalRequest) -> ApprovalDecision + Send + Sync,
{
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let d = (self.decide)(request);
        Box::pin(async move { d })
    }
}

/// How approval went for one call, as recorded in the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// The call never got as far as approval (refused earlier).
    NotReached,
    /// The tool's risk needs no approval and there was no safety review.
    NotRequired,
    /// An earlier "approve for this session" answer covered the call.
    SessionGrant,
    /// The approver approved this call.
    Approved,
    /// The approver approved this call and granted the tool for the session.
    ApprovedForSession,
    /// The approver denied the call.
    Denied,
    /// Approval was needed and no approver is configured.
    NoApprover,
    /// The approver kept editing the arguments past the limit.
    EditLimit,
    /// The approver put the question to someone who answers later; the call did not run.
    Pending,
}

impl ApprovalStatus {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::NotReached => "not_reached",
            ApprovalStatus::NotRequired => "not_required",
            ApprovalStatus::SessionGrant => "session_grant",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::ApprovedForSession => "approved_for_session",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::NoApprover => "no_approver",
            ApprovalStatus::EditLimit => "edit_limit",
            ApprovalStatus::Pending => "pending",
        }
    }
}

impl fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `true` when a call of this risk needs approval (outside any safety review).
pub fn risk_needs_approval(risk: Risk) -> bool {
    !risk.is_read_only()
}

/// `true` when a session grant may cover later calls of a tool of this risk.
pub fn risk_allows_session_grant(risk: Risk) -> bool {
    risk == Risk::Mutation
}
