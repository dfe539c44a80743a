//! What the audit log may hold of text it did not choose: every such string of an
//! [`AuditEvent`] passes [`AuditEvent::redacted`] before any sink sees it.
//!
//! Free text (session ids, tool names, effect targets, rule ids) goes through the workspace's
//! one redactor ([`tool_rules::redact`]), which masks secret-shaped tokens anywhere in a string.
//! A call id is kept only when it has the shape its source mints ids in (see [`audit_call_id`]);
//! any other id is recorded as its hash, since it is the one field a provider, a client or a
//! model may fill with anything at all.

use std::fmt;

use sha2::{Digest, Sha256};

use super::event::AuditEvent;

/// `text` as the audit log may record it: control characters as spaces, secrets masked.
pub fn redact_text(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    tool_rules::redact::redact(&one_line).0
}

/// A call id as the audit log records it: as is when it has a known id shape and holds nothing
/// secret-shaped, otherwise `sha256:` and the SHA-256 (hex) of the id.
///
/// Known shapes: the executor's own `call-N`; MCP request ids (an integer, a UUID) and the MCP
/// server's task calls (`task-` and 32 hex digits); OpenAI's `call_…` and Anthropic's
/// `toolu_…` / `srvtoolu_…` (8 to 40 letters and digits after the prefix); Gemini's and
/// agent frameworks' UUIDs (`adk-` and a UUID too); and an id already recorded as a hash.
pub fn audit_call_id(id: &str) -> String {
    if is_known_id(id) {
        id.to_owned()
    } else {
        hashed_id(id)
    }
}

/// Writes [`audit_call_id`] of an id, computed only when something formats it (a tracing span
/// field that no subscriber records costs nothing).
pub(crate) struct AuditId<'a>(pub(crate) &'a str);

impl fmt::Display for AuditId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_known_id(self.0) {
            f.write_str(self.0)
        } else {
            f.write_str(&hashed_id(self.0))
        }
    }
}

/// Writes [`redact_text`] of a string, computed only when something formats it.
pub(crate) struct AuditText<'a>(pub(crate) &'a str);

impl fmt::Display for AuditText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact_text(self.0))
    }
}

fn hashed_id(id: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(id.as_bytes())))
}

fn is_known_id(id: &str) -> bool {
    let alnum = |s: &str, min: usize, max: usize| {
        (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if let Some(n) = id.strip_prefix("call-") {
        return (1..=20).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit());
    }
    if let Some(n) = id.strip_prefix("task-") {
        return hex(n, 32);
    }
    if let Some(h) = id.strip_prefix("sha256:") {
        return hex(h, 64);
    }
    if let Some(u) = id.strip_prefix("adk-") {
        return is_uuid(u);
    }
    if is_uuid(id) {
        return true;
    }
    let digits = id.strip_prefix('-').unwrap_or(id);
    if (1..=19).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    // Provider ids: the body after the prefix is random letters and digits, so it must also
    // not hold a token shape (`call_AKIA…` is someone's key, not an OpenAI id).
    ["call_", "toolu_", "srvtoolu_"].iter().any(|prefix| {
        id.strip_prefix(prefix)
            .is_some_and(|body| alnum(body, 8, 40) && !tool_rules::redact::redact(body).1)
    })
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl AuditEvent {
    /// This event as the audit log may record it: every string that came from outside the
    /// executor (a model, a provider, a client, a script's text) redacted, the call id kept only
    /// in a known shape and hashed otherwise. The executor passes each event through here before
    /// any [`AuditSink`](super::AuditSink) sees it; a host that builds events itself should too.
    ///
    /// Left as they are: what the executor writes itself (timestamp, hashes, registry
    /// fingerprint, enforcement label, enums).
    #[must_use]
    pub fn redacted(mut self) -> Self {
        self.session = redact_text(&self.session);
        self.tool = self.tool.as_deref().map(redact_text);
        self.call_id = audit_call_id(&self.call_id);
        self.error_code = self.error_code.as_deref().map(redact_text);
        for id in &mut self.rule_ids {
            *id = redact_text(id);
        }
        if let Some(safety) = &mut self.safety {
            let gate = &mut safety.gate;
            gate.tool_name = redact_text(&gate.tool_name);
            gate.policy_version = redact_text(&gate.policy_version);
            for id in &mut gate.rule_ids {
                *id = redact_text(id);
            }
            for effect in &mut gate.effects {
                effect.kind = redact_text(&effect.kind);
                effect.target = redact_text(&effect.target);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalStatus;
    use crate::audit::SafetyAudit;
    use crate::gate::{GateAudit, GateEffect, GateRiskLevel, ScanDecision, ScanMode};
    use crate::status::CallStatus;
    use serde_json::Value;

    const KEY: &str = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe";

    /// Every string leaf of `v`, with its path.
    fn strings(v: &Value, path: String, out: &mut Vec<(String, String)>) {
        match v {
            Value::String(s) => out.push((path, s.clone())),
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    strings(x, format!("{path}[{i}]"), out);
                }
            }
            Value::Object(map) => {
                for (k, x) in map {
                    strings(x, format!("{path}.{k}"), out);
                }
            }
            _ => {}
        }
    }

    /// Structural: a secret in every string an event carries is gone after `redacted`, except in
    /// the fields the executor writes itself. A new string field fails here until it is either
    /// redacted or added to that list.
    #[test]
    fn no_string_of_an_event_escapes_redaction() {
        let planted = format!("/tmp/{KEY}/x");
        let effect = GateEffect {
            kind: planted.clone(),
            target: planted.clone(),
            line: 1,
            column: 1,
            verdict: ScanDecision::Deny,
        };
        let event = AuditEvent {
            timestamp: planted.clone(),
            session: planted.clone(),
            tool: Some(planted.clone()),
            call_id: planted.clone(),
            status: CallStatus::Refused,
            code: None,
            error_code: Some(planted.clone()),
            step: None,
            risk: None,
            approval: ApprovalStatus::Denied,
            rule_ids: vec![planted.clone()],
            duration_ms: 0,
            args_sha256: Some(planted.clone()),
            registry_fingerprint: planted.clone(),
            truncated: false,
            scan: ScanMode::On,
            enforced: planted.clone(),
            safety: Some(SafetyAudit {
                gate: GateAudit {
                    tool_name: planted.clone(),
                    decision: ScanDecision::Deny,
                    risk_level: GateRiskLevel::High,
                    rule_ids: vec![planted.clone()],
                    duration_ms: 0.0,
                    redacted: false,
                    script_sha256: planted.clone(),
                    policy_version: planted.clone(),
                    effects: vec![effect],
                    effects_dropped: 0,
                    described_effects: Vec::new(),
                },
                blocked: true,
                approval: ApprovalStatus::Denied,
            }),
        };
        // Written by the executor: a clock, hashes, a fingerprint, a label.
        let own = [
            ".timestamp",
            ".args_sha256",
            ".registry_fingerprint",
            ".enforced",
            ".safety.script_sha256",
        ];
        let json = serde_json::to_value(event.redacted()).expect("serializable");
        let mut leaves = Vec::new();
        strings(&json, String::new(), &mut leaves);
        assert!(leaves.len() >= 13, "{leaves:?}");
        for (path, value) in leaves {
            if own.contains(&path.as_str()) {
                continue;
            }
            assert!(!value.contains(KEY), "{path} kept the secret: {value}");
        }
    }

    #[test]
    fn call_ids_of_known_shapes_are_kept_and_others_hashed() {
        for id in [
            "call-0",
            "call-18446744073709551615",
            "call_abc123DEF456ghi789JKL0",
            "toolu_01A09q90qw90lq917835lq9",
            "srvtoolu_01A09q90qw90lq917835lq9",
            "7",
            "-3",
            "123e4567-e89b-12d3-a456-426614174000",
            "adk-123e4567-e89b-12d3-a456-426614174000",
            "task-0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(audit_call_id(id), id);
            assert_eq!(AuditId(id).to_string(), id);
        }
        for id in [
            "sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9",
            "call_AKIAIOSFODNN7EXAMPLE",
            "toolu_ghp_Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9",
            "call_",
            "hunter2",
            "call-1x",
            "",
        ] {
            let recorded = audit_call_id(id);
            assert!(recorded.starts_with("sha256:"), "{id} -> {recorded}");
            assert_eq!(AuditId(id).to_string(), recorded);
            // A hash is itself a known shape: redacting twice changes nothing.
            assert_eq!(audit_call_id(&recorded), recorded);
        }
    }
}
