//! The hook through which the static script scan (step 7) takes part in every call.

use serde_json::Value;

use crate::decl::ToolDecl;

/// Judges a call's final arguments before approval: scripts, and whatever else a policy inspects
/// (cwd, environment variable names, timeouts).
///
/// The executor asks the gate about every call when one is configured. A tool that declares
/// script arguments is refused (`safety_denied`) when no gate is configured: unscanned scripts
/// never run.
pub trait ScriptGate: Send + Sync {
    /// Judge one call. Errors inside the scanner must come back as [`GateVerdict::Deny`].
    fn check(&self, decl: &ToolDecl, final_args: &Value) -> GateVerdict;

    /// Judge one call and return the scan's audit fields (decision, risk level, rule ids, scan
    /// duration, redaction, script hash, policy version; never the script) for the call's audit
    /// event. The executor fills in `approval` and `blocked` once the call is decided.
    fn check_audited(&self, decl: &ToolDecl, final_args: &Value) -> (GateVerdict, Option<Value>) {
        (self.check(decl, final_args), None)
    }
}

/// A gate's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateVerdict {
    /// Nothing found.
    Allow,
    /// A human must look: the call goes to the approver with these findings, whatever the tool's
    /// risk, and is refused (`review_required`) when no approver is configured.
    Review {
        /// The findings, summarized for a human (redacted: no secrets).
        summary: String,
        /// The rule ids that fired.
        rule_ids: Vec<String>,
    },
    /// A human review was needed and the policy blocks on review instead of asking
    /// (`review_required`).
    ReviewBlocked {
        /// The rule ids that fired.
        rule_ids: Vec<String>,
        /// Why, shown to the model.
        message: String,
    },
    /// Refused (`safety_denied`).
    Deny {
        /// The rule ids that fired.
        rule_ids: Vec<String>,
        /// Why, shown to the model.
        message: String,
    },
}
