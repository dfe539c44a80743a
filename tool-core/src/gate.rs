//! The script gate's types, shared by the executor's `script_gate` and `outcome` steps, the
//! scanner glue (`tool_core::safety`, feature `safety`) and the audit log: the hook through which the static script
//! scan takes part in every call ([`ScriptGate`]), its verdict, the audit record a gate returns,
//! and the one rule for whether a call's script was blocked ([`script_blocked`]). The kernel
//! defines them; the scanner (`tool-safety`, feature `safety`) plugs in from outside and is never
//! imported here.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decl::ToolDecl;
use crate::reason::ReasonCode;

/// Judges a call's final arguments before approval: scripts, and whatever else a policy inspects
/// (cwd, environment variable names, timeouts).
///
/// The executor asks the gate about every call when one is configured. With the `safety`
/// feature the scanner is the default gate; without it, a registry with tools that declare
/// script arguments and no gate fails [`Executor::new`](crate::executor::Executor::new): unscanned scripts
/// never run.
pub trait ScriptGate: Send + Sync {
    /// Judge one call. Errors inside the scanner must come back as [`GateVerdict::Deny`].
    fn check(&self, decl: &ToolDecl, final_args: &Value) -> GateVerdict;

    /// Judge one call and return what the call's audit event records about the scan (decision,
    /// risk level, rule ids, scan duration, redaction, script hash, policy version; never the
    /// script). The executor adds `approval` and `blocked` once the call is decided.
    fn check_audited(
        &self,
        decl: &ToolDecl,
        final_args: &Value,
    ) -> (GateVerdict, Option<GateAudit>) {
        (self.check(decl, final_args), None)
    }

    /// Whether this gate may judge calls of `decl` by anything but allowing them with no audit
    /// record. `false` lets the executor skip asking it about such a tool's calls (its typed
    /// path, which has no JSON arguments to show); the default, `true`, always asks.
    fn inspects(&self, decl: &ToolDecl) -> bool {
        let _ = decl;
        true
    }

    /// This gate bound to the executor's canonical workspace root, so each scan judges what a
    /// script touches against the real workspace and working directory. The executor calls it
    /// once when it is built; `None` (the default) keeps the gate as configured.
    fn in_workspace(&self, root: &Path) -> Option<Arc<dyn ScriptGate>> {
        let _ = root;
        None
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

/// What a gate's scan tells the audit log about one call. Holds no script text, environment
/// values, headers or keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateAudit {
    /// The tool whose call was scanned.
    pub tool_name: String,
    /// The scan's strictest decision.
    pub decision: ScanDecision,
    /// The highest risk level of the findings.
    pub risk_level: GateRiskLevel,
    /// Distinct rule ids of the findings, in first-seen order.
    pub rule_ids: Vec<String>,
    /// Scan time in milliseconds.
    pub duration_ms: f64,
    /// Some evidence was masked.
    pub redacted: bool,
    /// SHA-256 (hex) of the script text.
    pub script_sha256: String,
    /// Version of the policy applied.
    pub policy_version: String,
    /// What the script will touch, as the scan judged it: the judged effects first, then the
    /// others, at most [`MAX_AUDIT_EFFECTS`], targets redacted and cut at
    /// [`MAX_AUDIT_TARGET_CHARS`].
    pub effects: Vec<GateEffect>,
    /// Effects the scan found beyond those listed.
    pub effects_dropped: usize,
    /// The judged effects and dynamic-execution findings in words, for the approver
    /// (`fetches https://host/x.html`, `kills processes named sshd`): short, redacted, at most a
    /// few. Shown in the [`ApprovalRequest`](crate::approval::ApprovalRequest); not written to
    /// the audit log, which records [`effects`](Self::effects).
    #[serde(skip)]
    pub described_effects: Vec<String>,
}

/// Most effects one audit event lists.
pub const MAX_AUDIT_EFFECTS: usize = 32;
/// Longest effect target an audit event records, in characters.
pub const MAX_AUDIT_TARGET_CHARS: usize = 200;

/// One effect of a scanned script as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateEffect {
    /// What it does (`file_read`, `file_delete`, `network`, `process_control`...).
    pub kind: String,
    /// What it does it to: a path, a set of paths (`a | b`), a host, or `unknown`.
    pub target: String,
    /// 1-based line in the script.
    pub line: u32,
    /// 1-based column in the script.
    pub column: u32,
    /// How the scan judged it.
    pub verdict: ScanDecision,
}

/// The scan layer's decision, as the kernel names it (the scanner's own `SafetyDecision`, one to
/// one, without depending on the scanner): what the audit log records. Ordered from the most
/// permissive to the strictest. The gate's answer to the executor is a [`GateVerdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanDecision {
    /// Nothing found that needs a human.
    Allow,
    /// A human must look first.
    NeedsHumanReview,
    /// Must not run.
    Deny,
}

impl ScanDecision {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ScanDecision::Allow => "allow",
            ScanDecision::NeedsHumanReview => "needs_human_review",
            ScanDecision::Deny => "deny",
        }
    }
}

impl fmt::Display for ScanDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much harm a scan's findings point at, as the audit log records it. Ordered from none to
/// critical.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum GateRiskLevel {
    /// No finding.
    #[default]
    None,
    /// Worth noting.
    Low,
    /// Could be misused.
    Medium,
    /// Likely harmful if misused.
    High,
    /// Destroys the machine, leaks credentials or hands over control.
    Critical,
}

impl GateRiskLevel {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GateRiskLevel::None => "none",
            GateRiskLevel::Low => "low",
            GateRiskLevel::Medium => "medium",
            GateRiskLevel::High => "high",
            GateRiskLevel::Critical => "critical",
        }
    }
}

impl fmt::Display for GateRiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a call whose script the gate judged was kept from running, from how the call ended:
/// refused by the gate (`safety_denied`, `review_required`), or refused by the human the gate's
/// `decision` asked (`approval_denied` after a review). The one rule: the outcome step applies
/// it to every audited call, and `safety::audit_fields` to a scan outside the executor.
pub fn script_blocked(code: Option<ReasonCode>, decision: ScanDecision) -> bool {
    match code {
        Some(ReasonCode::SafetyDenied | ReasonCode::ReviewRequired) => true,
        Some(ReasonCode::ApprovalDenied) => decision != ScanDecision::Allow,
        _ => false,
    }
}

/// Whether the script gate judges calls. Recorded in every audit event as `"scan": "on"|"off"`.
///
/// [`ScanMode::On`] is the default and fails closed: a tool with script arguments runs only after
/// the configured gate allowed it, and is refused when no gate is configured. [`ScanMode::Off`]
/// is an explicit choice (scripts confined by a container the user brings, or testing the kernel
/// confinement alone): the gate is not asked, and script tools run unscanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum ScanMode {
    /// Every call goes through the script gate; script tools without a gate are refused.
    #[default]
    On,
    /// The script gate is skipped; script tools run without a static scan.
    Off,
}

impl ScanMode {
    /// The stable name (`on`, `off`).
    pub fn as_str(self) -> &'static str {
        match self {
            ScanMode::On => "on",
            ScanMode::Off => "off",
        }
    }
}

impl fmt::Display for ScanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
