//! The stable reason codes for refusals and failures: a leaf every stage may name.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a call was refused or failed. The names are stable: they appear in audit logs, CLI output and
/// MCP results, and callers may match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReasonCode {
    /// The call could not be parsed (bad JSON, wrong shape, limits exceeded, duplicate keys).
    MalformedCall,
    /// No tool with that name is registered.
    UnknownTool,
    /// The arguments do not match the tool's JSON Schema.
    InvalidArguments,
    /// A path argument leaves the workspace (`..`, absolute path, symlink, NUL byte).
    PathOutsideWorkspace,
    /// The tool's own permission rule refused the call.
    PermissionDenied,
    /// The approver denied the call, or no approver is configured.
    ApprovalDenied,
    /// The safety scan denied the script.
    SafetyDenied,
    /// The safety scan asked for human review and the policy blocks on review.
    ReviewRequired,
    /// Too many consecutive failures in this session; reset the budget to continue. Over MCP
    /// also: a server-wide bound (tasks kept, input-required rounds outstanding) is reached.
    ErrorBudgetExhausted,
    /// The tool ran longer than its timeout.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// The tool panicked.
    Panicked,
    /// The tool ran and reported an error.
    ToolError,
    /// Two concurrent calls tried to change the same context key.
    ModifierConflict,
    /// The call needs kernel confinement that is not available here (`Mode::Required` on a
    /// kernel without Landlock, seccomp or namespaces, another OS, or the sandbox helper binary
    /// not found): tools with script arguments are refused before they run, and a program a
    /// tool starts through [`crate::process`] is not started. Nothing ran unconfined because of
    /// it.
    SandboxUnavailable,
    /// A program the tool started reached a resource limit of its declaration's sandbox (memory
    /// over all its processes, processes, file size, CPU) and failed; the message says which
    /// limit and what it was set to.
    ResourceLimit,
    /// A `requestState` (MCP input-required results: an approval question, a tool's question)
    /// that does not verify: forged, altered, expired, or issued for another tool, other
    /// arguments or another caller.
    ApprovalStateInvalid,
    /// A `requestState` (approval or a tool's question) that was already used once.
    ApprovalStateReplayed,
    /// The tool asked for input (a form, a model's message, the roots) that nobody can give:
    /// no input handler (the command line), or a client that did not declare the capability.
    InputUnavailable,
    /// The tool asked for input, or its approval is pending (the approver answered
    /// [`ApprovalDecision::Pending`](crate::approval::ApprovalDecision::Pending)): the question
    /// travels to the client in an MCP input-required result, and the call runs again with the
    /// answer (a round of a multi-round call, not an end).
    InputRequired,
    /// An answer to the tool's question does not fit it: the wrong shape, too large, or an
    /// accepted form whose content does not match the form's schema.
    InputInvalid,
    /// The tool asked too many questions, or in too many rounds.
    InputLimitExceeded,
    /// One MCP client holds as many running tasks or outstanding input-required rounds as its
    /// quota allows (clients are told apart by the hash of their `Authorization` header, or by
    /// their session): this client's request is refused, other clients are still served. It
    /// may try again once one of its tasks has ended or one of its rounds was answered or expired.
    ClientQuotaExceeded,
    /// A keyed audit log was changed since its writer's last checkpoint (edited, cut, emptied,
    /// appended to by someone else, or its state file forged or removed): the executor refuses
    /// to append to it, and to start on it.
    AuditTampered,
    /// The store the server shares with its replicas (`tool_core::store`, feature `redis`) is unreachable or did not
    /// answer in time: what needs it (an approval round, a tool's questions, a task) is refused
    /// before anything runs, and nothing is half-recorded. A used state is never taken as
    /// unused because it could not be checked. Calls that need no shared state still answer,
    /// and the server reconnects by itself when the store is back.
    StoreUnavailable,
}

impl ReasonCode {
    /// Every reason code.
    pub const ALL: [ReasonCode; 25] = [
        ReasonCode::MalformedCall,
        ReasonCode::UnknownTool,
        ReasonCode::InvalidArguments,
        ReasonCode::PathOutsideWorkspace,
        ReasonCode::PermissionDenied,
        ReasonCode::ApprovalDenied,
        ReasonCode::SafetyDenied,
        ReasonCode::ReviewRequired,
        ReasonCode::ErrorBudgetExhausted,
        ReasonCode::Timeout,
        ReasonCode::Cancelled,
        ReasonCode::Panicked,
        ReasonCode::ToolError,
        ReasonCode::ModifierConflict,
        ReasonCode::SandboxUnavailable,
        ReasonCode::ResourceLimit,
        ReasonCode::ApprovalStateInvalid,
        ReasonCode::ApprovalStateReplayed,
        ReasonCode::InputUnavailable,
        ReasonCode::InputRequired,
        ReasonCode::InputInvalid,
        ReasonCode::InputLimitExceeded,
        ReasonCode::ClientQuotaExceeded,
        ReasonCode::AuditTampered,
        ReasonCode::StoreUnavailable,
    ];

    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::MalformedCall => "malformed_call",
            ReasonCode::UnknownTool => "unknown_tool",
            ReasonCode::InvalidArguments => "invalid_arguments",
            ReasonCode::PathOutsideWorkspace => "path_outside_workspace",
            ReasonCode::PermissionDenied => "permission_denied",
            ReasonCode::ApprovalDenied => "approval_denied",
            ReasonCode::SafetyDenied => "safety_denied",
            ReasonCode::ReviewRequired => "review_required",
            ReasonCode::ErrorBudgetExhausted => "error_budget_exhausted",
            ReasonCode::Timeout => "timeout",
            ReasonCode::Cancelled => "cancelled",
            ReasonCode::Panicked => "panicked",
            ReasonCode::ToolError => "tool_error",
            ReasonCode::ModifierConflict => "modifier_conflict",
            ReasonCode::SandboxUnavailable => "sandbox_unavailable",
            ReasonCode::ResourceLimit => "resource_limit",
            ReasonCode::ApprovalStateInvalid => "approval_state_invalid",
            ReasonCode::ApprovalStateReplayed => "approval_state_replayed",
            ReasonCode::InputUnavailable => "input_unavailable",
            ReasonCode::InputRequired => "input_required",
            ReasonCode::InputInvalid => "input_invalid",
            ReasonCode::InputLimitExceeded => "input_limit_exceeded",
            ReasonCode::ClientQuotaExceeded => "client_quota_exceeded",
            ReasonCode::AuditTampered => "audit_tampered",
            ReasonCode::StoreUnavailable => "store_unavailable",
        }
    }

    /// `true` when the handler never ran (a refusal), `false` when it ran and failed.
    /// `sandbox_unavailable` counts as a refusal: the code that needed confinement never ran
    /// (a script tool is refused before its handler; a program is not started).
    pub fn is_refusal(self) -> bool {
        !matches!(
            self,
            ReasonCode::Timeout
                | ReasonCode::Cancelled
                | ReasonCode::Panicked
                | ReasonCode::ToolError
                | ReasonCode::ModifierConflict
                | ReasonCode::ResourceLimit
                | ReasonCode::InputUnavailable
                | ReasonCode::InputRequired
                | ReasonCode::InputInvalid
                | ReasonCode::InputLimitExceeded
        )
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_serialize_as_their_names() {
        for code in ReasonCode::ALL {
            let v = serde_json::to_value(code).expect("serializable");
            assert_eq!(v, serde_json::Value::String(code.as_str().to_owned()));
        }
    }
}
