//! Effects in words, for the person asked to approve a script: "fetches https://host/x.html",
//! "kills processes named sshd". Short and redacted: a description never carries a secret.

use crate::decision::SafetyDecision;
use crate::effects::{human_bytes, Direction, Effect, EffectKind, EffectTarget, EVERY_PROCESS};
use crate::redact::redact_bounded;
use crate::report::SafetyReport;

/// Most descriptions [`SafetyReport::effects_summary`] lists before counting the rest.
pub const SUMMARY_MAX_EFFECTS: usize = 6;

/// Most known values of one target a description names.
const MAX_VALUES: usize = 3;

fn target_text(t: &EffectTarget, unknown: &str) -> String {
    match t {
        EffectTarget::Resolved(v) => v.clone(),
        EffectTarget::Set(vs) if vs.is_empty() => unknown.to_owned(),
        EffectTarget::Set(vs) => {
            let mut s = vs
                .iter()
                .take(MAX_VALUES)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if vs.len() > MAX_VALUES {
                s.push_str(&format!(" (+{} more)", vs.len() - MAX_VALUES));
            }
            s
        }
        EffectTarget::Unknown => unknown.to_owned(),
    }
}

impl Effect {
    /// What this effect does, in a few words, redacted and at most
    /// [`EVIDENCE_MAX_CHARS`](crate::EVIDENCE_MAX_CHARS) characters.
    pub fn describe(&self) -> String {
        let path = || target_text(&self.target, "a computed path");
        let text = match &self.kind {
            EffectKind::FileRead => format!("reads {}", path()),
            EffectKind::FileWrite => format!("writes {}", path()),
            EffectKind::FileCreate => format!("creates {}", path()),
            EffectKind::FileDelete => format!("deletes {}", path()),
            EffectKind::Chmod => format!("changes permissions of {}", path()),
            EffectKind::Link => format!("links {}", path()),
            EffectKind::DirList => format!("lists {}", path()),
            EffectKind::Network {
                url,
                host,
                port,
                direction,
                sends,
            } => {
                let place = match (url, host, port) {
                    (Some(u), _, _) => u.clone(),
                    (None, Some(h), Some(p)) => format!("{h}:{p}"),
                    (None, Some(h), None) => h.clone(),
                    (None, None, _) => target_text(&self.target, "a computed address"),
                };
                match direction {
                    Direction::Download => format!("fetches {place}"),
                    Direction::Upload => match sends {
                        Some(s) => format!("sends {s} to {place}"),
                        None => format!("sends data to {place}"),
                    },
                    Direction::Both => format!("connects to {place}"),
                }
            }
            EffectKind::ProcessSpawn => {
                format!("runs {}", target_text(&self.target, "a computed program"))
            }
            EffectKind::ProcessControl { target } => {
                if target.starts_with(EVERY_PROCESS) {
                    format!("kills {target}")
                } else if target.trim_start_matches('-').parse::<i64>().is_ok() {
                    format!("signals process {target}")
                } else {
                    format!("kills processes named {target}")
                }
            }
            EffectKind::EnvRead { name } if name == "*" => "reads the whole environment".into(),
            EffectKind::EnvRead { name } => format!("reads environment variable {name}"),
            EffectKind::Persistence => format!("installs {} to run later", path()),
            EffectKind::HostInfo { what } => format!("reads host information ({what})"),
            EffectKind::Deserialize { format, source } => {
                let from = match source {
                    crate::effects::DataSource::Literal => "a literal payload",
                    crate::effects::DataSource::LiteralCode => "a literal payload that runs code",
                    crate::effects::DataSource::Network => "the network",
                    crate::effects::DataSource::File => "a file",
                    crate::effects::DataSource::Unknown => "computed data",
                };
                format!("deserializes {format} from {from}")
            }
            EffectKind::Allocation { bytes: Some(b) } => format!("allocates {}", human_bytes(*b)),
            EffectKind::Allocation { bytes: None } => "allocates without bound".into(),
            EffectKind::DynamicExec { form } => format!("runs code the scan cannot see ({form})"),
        };
        redact_bounded(&text).0
    }
}

impl SafetyReport {
    /// The judged effects (review or deny) in words, one each, without repeats, in script order:
    /// what a person approving the script should know it does. At most
    /// [`SUMMARY_MAX_EFFECTS`], then `+N more`.
    pub fn effect_descriptions(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for e in self
            .effects
            .iter()
            .filter(|e| e.verdict != SafetyDecision::Allow)
        {
            let d = e.describe();
            if !seen.contains(&d) {
                seen.push(d);
            }
        }
        if seen.len() > SUMMARY_MAX_EFFECTS {
            let more = seen.len() - SUMMARY_MAX_EFFECTS;
            seen.truncate(SUMMARY_MAX_EFFECTS);
            seen.push(format!("+{more} more"));
        }
        seen
    }

    /// [`effect_descriptions`](Self::effect_descriptions) on one line, `; `-separated (empty
    /// when no effect was judged).
    pub fn effects_summary(&self) -> String {
        self.effect_descriptions().join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effects::DataSource;

    fn effect(kind: EffectKind, target: EffectTarget) -> Effect {
        Effect {
            kind,
            target,
            line: 1,
            column: 1,
            evidence: String::new(),
            verdict: SafetyDecision::NeedsHumanReview,
            rule_id: None,
        }
    }

    #[test]
    fn effects_read_as_short_phrases() {
        let fetch = effect(
            EffectKind::Network {
                url: Some("https://host.example/x.html".into()),
                host: Some("host.example".into()),
                port: None,
                direction: Direction::Download,
                sends: None,
            },
            EffectTarget::Unknown,
        );
        assert_eq!(fetch.describe(), "fetches https://host.example/x.html");
        let kill = effect(
            EffectKind::ProcessControl {
                target: "sshd".into(),
            },
            EffectTarget::Unknown,
        );
        assert_eq!(kill.describe(), "kills processes named sshd");
        let every = effect(
            EffectKind::ProcessControl {
                target: crate::effects::every_process(Some("sshd")),
            },
            EffectTarget::Unknown,
        );
        assert_eq!(every.describe(), "kills every process named sshd");
        let de = effect(
            EffectKind::Deserialize {
                format: "pickle".into(),
                source: DataSource::Network,
            },
            EffectTarget::Unknown,
        );
        assert_eq!(de.describe(), "deserializes pickle from the network");
        let alloc = effect(
            EffectKind::Allocation {
                bytes: Some(1 << 30),
            },
            EffectTarget::Unknown,
        );
        assert_eq!(alloc.describe(), "allocates 1.0 GiB");
        let chmod = effect(EffectKind::Chmod, EffectTarget::Resolved("/root/x".into()));
        assert_eq!(chmod.describe(), "changes permissions of /root/x");
    }

    #[test]
    fn descriptions_are_redacted() {
        let e = effect(
            EffectKind::Network {
                url: Some(
                    "https://x.example/?token=ghp_abcdefghijklmnopqrstuvwxyz0123456789".into(),
                ),
                host: Some("x.example".into()),
                port: None,
                direction: Direction::Download,
                sends: None,
            },
            EffectTarget::Unknown,
        );
        assert!(!e
            .describe()
            .contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    }
}
