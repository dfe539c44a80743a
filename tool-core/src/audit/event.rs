//! The audit event, what records it ([`AuditSink`]) and the sinks that need no file.

use std::io;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::approval::ApprovalStatus;
use crate::decl::Risk;
use crate::gate::{script_blocked, GateAudit, GateEffect, GateRiskLevel, ScanDecision, ScanMode};
use crate::reason::ReasonCode;
use crate::status::{CallStatus, Step};

/// What the audit log records about one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// When the call finished, RFC 3339 UTC with milliseconds.
    pub timestamp: String,
    /// The session id.
    pub session: String,
    /// The tool name, when the call parsed.
    pub tool: Option<String>,
    /// The call id, as [`audit_call_id`](super::audit_call_id) records it: as given when it has a known id shape,
    /// its hash otherwise.
    pub call_id: String,
    /// `ok`, `refused` or `failed`.
    pub status: CallStatus,
    /// Why the call was refused or failed.
    pub code: Option<ReasonCode>,
    /// The tool's own error code, when it failed with a valid
    /// [`ToolError`](crate::outcome::ToolError) code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The step that refused the call or where it failed (`None` when `ok`).
    pub step: Option<Step>,
    /// The tool's declared risk, when the tool is known.
    pub risk: Option<Risk>,
    /// How approval went.
    pub approval: ApprovalStatus,
    /// Safety rule ids that fired (review or deny).
    pub rule_ids: Vec<String>,
    /// Wall-clock time from receipt to result, in milliseconds.
    pub duration_ms: u64,
    /// SHA-256 (hex) of the canonical bytes of the final arguments, when the call parsed.
    pub args_sha256: Option<String>,
    /// SHA-256 of the registry's canonical dump: which tool set served the call.
    pub registry_fingerprint: String,
    /// `true` when the output was cut at the output cap.
    pub truncated: bool,
    /// Whether the static script scan was on for the call (`on`, `off`).
    pub scan: ScanMode,
    /// What enforced the call (see [`crate::sandbox`]): the kernel confinement of its handler,
    /// e.g. `landlock-v7+seccomp` (a handler on a confined worker or runtime) or `none` (a
    /// dynamic handler, an async one with `sandbox_async(false)`, `Mode::Off`, a kernel without
    /// support); with `; process: <label>` when the handler started a confined program (e.g.
    /// `landlock-v7+seccomp; process: landlock-v7+seccomp+pidns+netns`); `not_run` when the
    /// handler never started.
    #[serde(default = "unknown_enforcement")]
    pub enforced: String,
    /// The safety scan's audit fields, for calls the script gate judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety: Option<SafetyAudit>,
}

/// What an event written before the `enforced` field existed says.
fn unknown_enforcement() -> String {
    "unknown".to_owned()
}

/// What an audit event records about the script gate's scan of a call: the gate's own record and
/// how the call was decided. Serialized flat, in the order `tool_name, decision, risk_level,
/// rule_ids, duration_ms, redacted, blocked, approval, script_sha256, policy_version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "SafetyAuditWire", into = "SafetyAuditWire")]
pub struct SafetyAudit {
    /// What the gate reported (never the script).
    pub gate: GateAudit,
    /// The script was kept from running (denied, review refused or blocked by policy).
    pub blocked: bool,
    /// How approval went for the call.
    pub approval: ApprovalStatus,
}

impl SafetyAudit {
    /// The audit fields of a call the gate judged, from the gate's record, the reason the call
    /// was refused (if it was) and how approval went; `blocked` by [`script_blocked`], the one
    /// rule. The only place these fields are filled.
    pub fn of_call(gate: GateAudit, code: Option<ReasonCode>, approval: ApprovalStatus) -> Self {
        SafetyAudit {
            blocked: script_blocked(code, gate.decision),
            gate,
            approval,
        }
    }
}

/// The serialized shape of [`SafetyAudit`].
#[derive(Serialize, Deserialize)]
struct SafetyAuditWire {
    tool_name: String,
    decision: ScanDecision,
    risk_level: GateRiskLevel,
    rule_ids: Vec<String>,
    duration_ms: f64,
    redacted: bool,
    blocked: bool,
    approval: ApprovalStatus,
    script_sha256: String,
    policy_version: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    effects: Vec<GateEffect>,
    #[serde(default, skip_serializing_if = "is_zero")]
    effects_dropped: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl From<SafetyAudit> for SafetyAuditWire {
    fn from(a: SafetyAudit) -> Self {
        let g = a.gate;
        SafetyAuditWire {
            tool_name: g.tool_name,
            decision: g.decision,
            risk_level: g.risk_level,
            rule_ids: g.rule_ids,
            duration_ms: g.duration_ms,
            redacted: g.redacted,
            blocked: a.blocked,
            approval: a.approval,
            script_sha256: g.script_sha256,
            policy_version: g.policy_version,
            effects: g.effects,
            effects_dropped: g.effects_dropped,
        }
    }
}

impl From<SafetyAuditWire> for SafetyAudit {
    fn from(w: SafetyAuditWire) -> Self {
        SafetyAudit {
            gate: GateAudit {
                tool_name: w.tool_name,
                decision: w.decision,
                risk_level: w.risk_level,
                rule_ids: w.rule_ids,
                duration_ms: w.duration_ms,
                redacted: w.redacted,
                script_sha256: w.script_sha256,
                policy_version: w.policy_version,
                effects: w.effects,
                effects_dropped: w.effects_dropped,
                described_effects: Vec::new(),
            },
            blocked: w.blocked,
            approval: w.approval,
        }
    }
}

/// Where audit events go. Implementations must be safe to call from concurrent calls.
pub trait AuditSink: Send + Sync {
    /// Record one event; return only once it is durable enough for this sink (written and
    /// flushed for files).
    fn record(&self, event: &AuditEvent) -> io::Result<()>;

    /// `false` when events are dropped anyway, so the executor can skip preparing them.
    fn is_enabled(&self) -> bool {
        true
    }
}

/// Drops every event (the default when no sink is configured).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopAuditSink;

impl AuditSink for NoopAuditSink {
    fn record(&self, _event: &AuditEvent) -> io::Result<()> {
        Ok(())
    }

    fn is_enabled(&self) -> bool {
        false
    }
}

/// Keeps events in memory (tests, embedding applications that ship events elsewhere).
#[derive(Debug, Default)]
pub struct MemoryAuditSink {
    events: Mutex<Vec<AuditEvent>>,
}

impl MemoryAuditSink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every event recorded so far, in order.
    pub fn events(&self) -> Vec<AuditEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl AuditSink for MemoryAuditSink {
    fn record(&self, event: &AuditEvent) -> io::Result<()> {
        self.events
            .lock()
            .map_err(|_| io::Error::other("audit sink lock poisoned"))?
            .push(event.clone());
        Ok(())
    }
}

/// Now, as RFC 3339 UTC with milliseconds (`2024-05-01T12:00:00.123Z`).
pub fn timestamp_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_rfc3339(since.as_secs(), since.subsec_millis())
}

/// Format seconds since the epoch as RFC 3339 UTC.
fn format_rfc3339(secs: u64, millis: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safety_audit_serializes_flat_in_a_fixed_order() {
        let audit = SafetyAudit {
            gate: GateAudit {
                tool_name: "run_bash".into(),
                decision: ScanDecision::NeedsHumanReview,
                risk_level: GateRiskLevel::High,
                rule_ids: vec!["BASH-SUDO".into()],
                duration_ms: 0.25,
                redacted: false,
                script_sha256: "ab".repeat(32),
                policy_version: "builtin-1".into(),
                effects: Vec::new(),
                effects_dropped: 0,
                described_effects: Vec::new(),
            },
            blocked: true,
            approval: ApprovalStatus::Denied,
        };
        let json = serde_json::to_string(&audit).expect("serializable");
        let keys = [
            "tool_name",
            "decision",
            "risk_level",
            "rule_ids",
            "duration_ms",
            "redacted",
            "blocked",
            "approval",
            "script_sha256",
            "policy_version",
        ];
        let at: Vec<usize> = keys
            .iter()
            .map(|k| json.find(&format!("\"{k}\":")).expect(k))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");
        assert!(
            json.contains(r#""decision":"needs_human_review""#),
            "{json}"
        );
        assert!(json.contains(r#""approval":"denied""#), "{json}");
        let back: SafetyAudit = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, audit);
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(format_rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(
            format_rfc3339(1_700_000_000, 999),
            "2023-11-14T22:13:20.999Z"
        );
    }
}
