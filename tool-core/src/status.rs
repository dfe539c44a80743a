//! How a call ended ([`CallStatus`]) and where it stopped ([`Step`]): leaves the executor, the
//! audit log and every front end name.

use serde::{Deserialize, Serialize};

/// The three ways a call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The handler ran and reported success.
    Ok,
    /// The handler never ran.
    Refused,
    /// The handler ran (or started) and failed: error outcome, timeout, panic, cancellation.
    Failed,
}

impl CallStatus {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Refused => "refused",
            CallStatus::Failed => "failed",
        }
    }
}

/// A step of the executor's pipeline, in the order a call goes down them: the step where a call
/// was refused or failed is in its [`CallResult`](crate::executor::CallResult), its audit event
/// and its tracing span (`tool.step`). Each step has its module under `executor/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Step {
    /// The session's error budget is spent (`error_budget_exhausted`).
    Budget,
    /// The call could not be parsed (`malformed_call`).
    Parse,
    /// No tool has the name (`unknown_tool`).
    Lookup,
    /// A caller-supplied argument filter refused the arguments; trusted overrides and defaults are
    /// merged here too.
    Filters,
    /// The arguments do not match the tool's JSON Schema.
    Validate,
    /// A path argument is refused by the workspace guard.
    Guard,
    /// The tool's own permission rule refused the call.
    Permissions,
    /// The script gate (static safety scan) denied the call or blocked it for review.
    ScriptGate,
    /// Approval was denied, missing, or the edited arguments were refused.
    Approve,
    /// The handler was started: cancellation, timeout, panic, an error outcome, or arguments the
    /// handler could not take.
    Run,
    /// The call ran, but its result could not be kept (a context-modifier conflict in a batch).
    Outcome,
}

impl Step {
    /// Every step, in pipeline order.
    pub const ALL: [Step; 11] = [
        Step::Budget,
        Step::Parse,
        Step::Lookup,
        Step::Filters,
        Step::Validate,
        Step::Guard,
        Step::Permissions,
        Step::ScriptGate,
        Step::Approve,
        Step::Run,
        Step::Outcome,
    ];

    /// The stable snake_case name (the name of the step's module).
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Budget => "budget",
            Step::Parse => "parse",
            Step::Lookup => "lookup",
            Step::Filters => "filters",
            Step::Validate => "validate",
            Step::Guard => "guard",
            Step::Permissions => "permissions",
            Step::ScriptGate => "script_gate",
            Step::Approve => "approve",
            Step::Run => "run",
            Step::Outcome => "outcome",
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_serialize_as_their_names() {
        for step in Step::ALL {
            let v = serde_json::to_value(step).expect("serializable");
            assert_eq!(v, serde_json::Value::String(step.as_str().to_owned()));
        }
        let mut sorted = Step::ALL;
        sorted.sort();
        assert_eq!(sorted, Step::ALL, "ALL is in pipeline order");
    }
}
