//! The result of a tool call and the stable reason codes for refusals and failures.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::ContextModifier;

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
    /// Too many consecutive failures in this session; reset the budget to continue.
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
}

impl ReasonCode {
    /// Every reason code.
    pub const ALL: [ReasonCode; 14] = [
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
        }
    }

    /// `true` when the handler never ran (a refusal), `false` when it ran and failed.
    pub fn is_refusal(self) -> bool {
        !matches!(
            self,
            ReasonCode::Timeout
                | ReasonCode::Cancelled
                | ReasonCode::Panicked
                | ReasonCode::ToolError
                | ReasonCode::ModifierConflict
        )
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a handler reports. Success is decided by the variant, never by the text.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool did its work.
    Ok {
        /// The output shown to the model: a string for text, any JSON value for structured output.
        output: Value,
        /// A change to the session context, merged by the executor in call order.
        modifier: Option<ContextModifier>,
    },
    /// The tool ran and failed.
    Error {
        /// What went wrong, shown to the model.
        message: String,
    },
}

impl ToolOutcome {
    /// A successful outcome with this output.
    pub fn ok(output: impl Into<Value>) -> Self {
        ToolOutcome::Ok {
            output: output.into(),
            modifier: None,
        }
    }

    /// A failed outcome with this message.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutcome::Error {
            message: message.into(),
        }
    }

    /// Attach a context modifier to a successful outcome (an error outcome is returned unchanged:
    /// a failed call never changes the context).
    pub fn with_modifier(self, modifier: ContextModifier) -> Self {
        match self {
            ToolOutcome::Ok { output, .. } => ToolOutcome::Ok {
                output,
                modifier: Some(modifier),
            },
            err @ ToolOutcome::Error { .. } => err,
        }
    }

    /// `true` for [`ToolOutcome::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, ToolOutcome::Ok { .. })
    }
}

/// Structured output: serialized as JSON and described by an output schema in the declaration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// An output together with a change to the session context.
#[derive(Debug, Clone, PartialEq)]
pub struct Modified<T> {
    /// The output shown to the model.
    pub output: T,
    /// The change to merge into the session context.
    pub modifier: ContextModifier,
}

impl<T> Modified<T> {
    /// Pair an output with a context modifier.
    pub fn new(output: T, modifier: ContextModifier) -> Self {
        Modified { output, modifier }
    }
}

/// Conversion of a handler's return value into a [`ToolOutcome`].
///
/// Implemented for the return forms `#[tool]` accepts: [`ToolOutcome`], strings, `()`, numbers,
/// `bool`, [`serde_json::Value`], [`Json<T>`], [`Modified<T>`], `(T, ContextModifier)` and
/// `Result<T, E: Display>` of any of these.
pub trait IntoToolOutcome {
    /// Convert into an outcome.
    fn into_outcome(self) -> ToolOutcome;
}

impl IntoToolOutcome for ToolOutcome {
    fn into_outcome(self) -> ToolOutcome {
        self
    }
}

impl IntoToolOutcome for String {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

impl IntoToolOutcome for &'static str {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

impl IntoToolOutcome for () {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok("ok")
    }
}

impl IntoToolOutcome for Value {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

macro_rules! scalar_outcome {
    ($($t:ty),*) => {$(
        impl IntoToolOutcome for $t {
            fn into_outcome(self) -> ToolOutcome {
                ToolOutcome::ok(self)
            }
        }
    )*};
}
scalar_outcome!(bool, i32, i64, u32, u64, f64);

impl IntoToolOutcome for usize {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self as u64)
    }
}

impl<T: Serialize> IntoToolOutcome for Json<T> {
    fn into_outcome(self) -> ToolOutcome {
        match serde_json::to_value(&self.0) {
            Ok(v) => ToolOutcome::ok(v),
            Err(e) => ToolOutcome::error(format!("output could not be serialized: {e}")),
        }
    }
}

impl<T: IntoToolOutcome> IntoToolOutcome for Modified<T> {
    fn into_outcome(self) -> ToolOutcome {
        self.output.into_outcome().with_modifier(self.modifier)
    }
}

impl<T: IntoToolOutcome> IntoToolOutcome for (T, ContextModifier) {
    fn into_outcome(self) -> ToolOutcome {
        self.0.into_outcome().with_modifier(self.1)
    }
}

impl<T: IntoToolOutcome, E: fmt::Display> IntoToolOutcome for Result<T, E> {
    fn into_outcome(self) -> ToolOutcome {
        match self {
            Ok(v) => v.into_outcome(),
            Err(e) => ToolOutcome::error(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_serialize_as_their_names() {
        for code in ReasonCode::ALL {
            let v = serde_json::to_value(code).expect("serializable");
            assert_eq!(v, Value::String(code.as_str().to_owned()));
        }
    }

    #[test]
    fn result_error_is_an_error_outcome_whatever_the_text() {
        let r: Result<String, String> = Err("ok".into());
        assert!(!r.into_outcome().is_ok());
        let r: Result<String, String> = Ok("error: looks bad but is fine".into());
        assert!(r.into_outcome().is_ok());
    }

    #[test]
    fn modifier_is_dropped_from_errors() {
        let mut m = ContextModifier::new();
        m.set("k", 1);
        let out = ToolOutcome::error("x").with_modifier(m);
        assert_eq!(out, ToolOutcome::error("x"));
    }
}
