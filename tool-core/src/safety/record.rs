//! A scan as the audit log records it: the gate's record, the approval state, whether it blocked.

use tool_safety::{RiskLevel, SafetyDecision, SafetyReport, SafetyScanRequest};

use crate::approval::ApprovalStatus;
use crate::audit::SafetyAudit;
use crate::executor::{GateAudit, GateDecision, GateRiskLevel};

/// What an audit event records about a scan (the name it had when the scanner lived here).
pub type SafetyAuditFields = SafetyAudit;

/// The gate's audit record of `report`, the scan of `request`: facts, never the script.
pub fn gate_audit(report: &SafetyReport, request: &SafetyScanRequest) -> GateAudit {
    GateAudit {
        tool_name: report.tool_name.clone(),
        decision: decision(report.decision),
        risk_level: risk_level(report.risk_level),
        rule_ids: report.rule_ids().into_iter().map(str::to_owned).collect(),
        duration_ms: report.duration_ms(),
        redacted: report.redacted,
        script_sha256: tool_safety::script_sha256(&request.script),
        policy_version: report.policy_version.clone(),
    }
}

/// The audit fields of `report` for `request`, given whether the policy blocks on review and how
/// approval went: blocked unless allowed, or reviewed and approved without `block_on_review`.
pub fn audit_fields(
    report: &SafetyReport,
    request: &SafetyScanRequest,
    block_on_review: bool,
    approval: ApprovalStatus,
) -> SafetyAudit {
    let approved = matches!(
        approval,
        ApprovalStatus::Approved | ApprovalStatus::ApprovedForSession
    );
    SafetyAudit {
        gate: gate_audit(report, request),
        blocked: report.blocked(block_on_review, approved),
        approval,
    }
}

fn decision(d: SafetyDecision) -> GateDecision {
    match d {
        SafetyDecision::Allow => GateDecision::Allow,
        SafetyDecision::NeedsHumanReview => GateDecision::NeedsHumanReview,
        SafetyDecision::Deny => GateDecision::Deny,
    }
}

fn risk_level(r: RiskLevel) -> GateRiskLevel {
    match r {
        RiskLevel::None => GateRiskLevel::None,
        RiskLevel::Low => GateRiskLevel::Low,
        RiskLevel::Medium => GateRiskLevel::Medium,
        RiskLevel::High => GateRiskLevel::High,
        RiskLevel::Critical => GateRiskLevel::Critical,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's audit vocabulary names the scanner's decisions and levels the same way.
    #[test]
    fn names_agree_with_the_scanner() {
        for d in [
            SafetyDecision::Allow,
            SafetyDecision::NeedsHumanReview,
            SafetyDecision::Deny,
        ] {
            assert_eq!(decision(d).as_str(), d.as_str());
        }
        for r in [
            RiskLevel::None,
            RiskLevel::Low,
            RiskLevel::Medium,
            RiskLevel::High,
            RiskLevel::Critical,
        ] {
            assert_eq!(risk_level(r).as_str(), r.as_str());
        }
    }
}
