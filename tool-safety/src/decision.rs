//! A scan's or a finding's outcome: a leaf, shared by the report and the effects it lists.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The outcome of a scan or of one finding. Ordered from the most permissive to the strictest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum SafetyDecision {
    /// Nothing found that needs a human: the script may run.
    #[default]
    Allow,
    /// A human must approve the script first (or it is blocked when `block_on_review` is set).
    NeedsHumanReview,
    /// The script must not run.
    Deny,
}

impl SafetyDecision {
    /// The stable snake_case name used in reports, audit events and span attributes.
    pub fn as_str(self) -> &'static str {
        match self {
            SafetyDecision::Allow => "allow",
            SafetyDecision::NeedsHumanReview => "needs_human_review",
            SafetyDecision::Deny => "deny",
        }
    }
}

impl fmt::Display for SafetyDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
