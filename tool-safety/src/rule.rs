//! Custom rules: what they see of a script and what they must do.

use tree_sitter::Tree;

use crate::policy::SafetyPolicy;
use crate::report::{SafetyFinding, SafetyScanRequest};
use crate::sink::{CallView, CommandView};

/// What a custom rule sees: the request, the policy and the parsed script.
pub struct ScanContext<'a> {
    /// The request being scanned.
    pub request: &'a SafetyScanRequest,
    /// The policy in force.
    pub policy: &'a SafetyPolicy,
    /// The tree-sitter syntax tree of a bash script, when it parsed (`None` for Python, whose
    /// calls are in [`ScanContext::calls`]).
    pub tree: Option<&'a Tree>,
    /// Bash commands (empty for Python).
    pub commands: &'a [CommandView],
    /// Python calls (empty for bash).
    pub calls: &'a [CallView],
}

/// A custom rule: pure, deterministic, no side effects. It must only report findings whose rule
/// id is its own [`SafetyRule::id`] (the scanner enforces it); a panic becomes a `SCAN-ERROR` deny.
pub trait SafetyRule: Send + Sync {
    /// Stable id of the rule's findings, e.g. `CUSTOM-INTERNAL-BINARY`.
    fn id(&self) -> &str;
    /// Inspect one script.
    fn scan(&self, ctx: &ScanContext<'_>) -> Vec<SafetyFinding>;
}
