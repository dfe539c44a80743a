//! The safety policy: limits, per-rule actions and allowlists, loaded from YAML or TOML.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::decision::SafetyDecision;
use crate::report::RiskLevel;

/// What a policy does with a rule's findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    /// Drop the rule's findings from the decision (they stay in the report as `allow`).
    Allow,
    /// Ask a human.
    NeedsHumanReview,
    /// Refuse.
    Deny,
}

impl RuleAction {
    pub(crate) fn decision(self) -> SafetyDecision {
        match self {
            RuleAction::Allow => SafetyDecision::Allow,
            RuleAction::NeedsHumanReview => SafetyDecision::NeedsHumanReview,
            RuleAction::Deny => SafetyDecision::Deny,
        }
    }
}

/// Commands and paths exempted from some findings.
///
/// `commands`: `needs_human_review` findings about these command names are dropped (a `deny` is
/// never dropped). `paths`: findings about a path under one of these absolute directories are
/// dropped (never `/` itself, refused at load).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Allowlist {
    /// Command names (basenames), e.g. `sudo` in a disposable container.
    pub commands: Vec<String>,
    /// Absolute directories, e.g. `/opt/cache`.
    pub paths: Vec<String>,
}

/// How strict the scan is. Unknown keys are refused, so a typo cannot silently weaken it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyPolicy {
    /// Policy version, copied into reports and audit events.
    pub version: String,
    /// Largest timeout a call may request; above it the scan denies (`REQ-TIMEOUT`).
    #[serde(default = "default_max_timeout")]
    pub max_timeout_seconds: u64,
    /// Block `needs_human_review` instead of asking an approver.
    #[serde(default)]
    pub block_on_review: bool,
    /// Largest script accepted, in bytes (`SCAN-INPUT` above it).
    #[serde(default = "default_max_script_bytes")]
    pub max_script_bytes: usize,
    /// Per-rule action overrides: rule id → action.
    #[serde(default)]
    pub rules: BTreeMap<String, RuleAction>,
    /// Exemptions.
    #[serde(default)]
    pub allowlist: Allowlist,
    /// Hosts (and their subdomains) a tool that is not `open_world` may reach without review
    /// (`EFFECT-NETWORK`).
    #[serde(default)]
    pub network_allow_hosts: Vec<String>,
}

fn default_max_timeout() -> u64 {
    120
}

fn default_max_script_bytes() -> usize {
    256 * 1024
}

impl Default for SafetyPolicy {
    /// The built-in policy: 120 s max timeout, review goes to the approver, no overrides.
    fn default() -> Self {
        SafetyPolicy {
            version: "builtin-1".to_owned(),
            max_timeout_seconds: default_max_timeout(),
            block_on_review: false,
            max_script_bytes: default_max_script_bytes(),
            rules: BTreeMap::new(),
            allowlist: Allowlist::default(),
            network_allow_hosts: Vec::new(),
        }
    }
}

/// A policy that cannot be loaded or would weaken the guard in a forbidden way.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file could not be read.
    #[error("cannot read policy `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file extension is not `.yaml`, `.yml` or `.toml`.
    #[error("policy `{0}` must end in .yaml, .yml or .toml")]
    UnknownFormat(String),
    /// The YAML or TOML does not match the policy shape (unknown key, wrong type).
    #[error("invalid policy: {0}")]
    Parse(String),
    /// An override names a rule that does not exist.
    #[error("policy overrides unknown rule `{0}`")]
    UnknownRule(String),
    /// An override touches a rule no policy may change.
    #[error("rule `{0}` cannot be overridden: it is the scanner's own verdict")]
    LockedRule(String),
    /// An override turns a critical rule into `allow`.
    #[error("rule `{0}` is critical; it may be lowered to needs_human_review, never to allow")]
    CriticalAllow(String),
    /// An allowlisted path is relative or `/`.
    #[error("allowlisted path `{0}` must be absolute and not `/`")]
    BadAllowPath(String),
    /// The version is empty.
    #[error("policy `version` must not be empty")]
    EmptyVersion,
}

impl PolicyError {
    /// Stable reason code for CLI and logs.
    pub fn code(&self) -> &'static str {
        match self {
            PolicyError::Read { .. } => "policy_unreadable",
            PolicyError::UnknownFormat(_) => "policy_unknown_format",
            PolicyError::Parse(_) => "policy_invalid",
            PolicyError::UnknownRule(_) => "policy_unknown_rule",
            PolicyError::LockedRule(_) => "policy_locked_rule",
            PolicyError::CriticalAllow(_) => "policy_critical_allow",
            PolicyError::BadAllowPath(_) => "policy_bad_allow_path",
            PolicyError::EmptyVersion => "policy_empty_version",
        }
    }
}

impl SafetyPolicy {
    /// Parse a YAML policy and check it against the built-in rules.
    pub fn from_yaml_str(text: &str) -> Result<Self, PolicyError> {
        let p: SafetyPolicy =
            serde_norway::from_str(text).map_err(|e| PolicyError::Parse(e.to_string()))?;
        p.validate(&[])?;
        Ok(p)
    }

    /// Parse a TOML policy and check it against the built-in rules.
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyError> {
        let p: SafetyPolicy =
            toml::from_str(text).map_err(|e| PolicyError::Parse(e.to_string()))?;
        p.validate(&[])?;
        Ok(p)
    }

    /// Load a policy file; the format follows the extension (`.yaml`/`.yml` or `.toml`).
    ///
    /// Overrides of custom rules are only accepted through [`SafetyPolicy::from_file_with_rules`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        Self::from_file_with_rules(path, &[])
    }

    /// Load a policy file that may override the custom rules named in `custom_ids`.
    pub fn from_file_with_rules(
        path: impl AsRef<Path>,
        custom_ids: &[&str],
    ) -> Result<Self, PolicyError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: shown.clone(),
            source,
        })?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let p: SafetyPolicy = match ext {
            "yaml" | "yml" => {
                serde_norway::from_str(&text).map_err(|e| PolicyError::Parse(e.to_string()))?
            }
            "toml" => toml::from_str(&text).map_err(|e| PolicyError::Parse(e.to_string()))?,
            _ => return Err(PolicyError::UnknownFormat(shown)),
        };
        p.validate(custom_ids)?;
        Ok(p)
    }

    /// Check overrides and allowlists. `custom_ids` are rule ids of custom rules that may be
    /// overridden as well.
    pub fn validate(&self, custom_ids: &[&str]) -> Result<(), PolicyError> {
        if self.version.trim().is_empty() {
            return Err(PolicyError::EmptyVersion);
        }
        for (id, action) in &self.rules {
            if catalog::is_locked(id) {
                return Err(PolicyError::LockedRule(id.clone()));
            }
            match catalog::info(id) {
                Some(info) => {
                    if info.level == RiskLevel::Critical && *action == RuleAction::Allow {
                        return Err(PolicyError::CriticalAllow(id.clone()));
                    }
                }
                None if custom_ids.contains(&id.as_str()) => {}
                None => return Err(PolicyError::UnknownRule(id.clone())),
            }
        }
        for p in &self.allowlist.paths {
            let n = crate::paths::normalize(p);
            if !n.starts_with('/') || n == "/" {
                return Err(PolicyError::BadAllowPath(p.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_toml_agree() {
        let y = SafetyPolicy::from_yaml_str(
            "version: v2\nmax_timeout_seconds: 60\nblock_on_review: true\nrules:\n  BASH-SUDO: allow\nallowlist:\n  paths: [/opt/cache]\n",
        )
        .expect("valid yaml policy");
        let t = SafetyPolicy::from_toml_str(
            "version = \"v2\"\nmax_timeout_seconds = 60\nblock_on_review = true\n[rules]\nBASH-SUDO = \"allow\"\n[allowlist]\npaths = [\"/opt/cache\"]\n",
        )
        .expect("valid toml policy");
        assert_eq!(y, t);
    }

    #[test]
    fn refuses_unknown_keys_rules_and_forbidden_overrides() {
        assert!(matches!(
            SafetyPolicy::from_yaml_str("version: v\nmax_timeout: 3\n"),
            Err(PolicyError::Parse(_))
        ));
        assert!(matches!(
            SafetyPolicy::from_yaml_str("version: v\nrules: {NOPE: deny}\n"),
            Err(PolicyError::UnknownRule(_))
        ));
        assert!(matches!(
            SafetyPolicy::from_yaml_str("version: v\nrules: {BASH-RM-ROOT: allow}\n"),
            Err(PolicyError::CriticalAllow(_))
        ));
        assert!(matches!(
            SafetyPolicy::from_yaml_str("version: v\nrules: {SCAN-ERROR: needs_human_review}\n"),
            Err(PolicyError::LockedRule(_))
        ));
        assert!(matches!(
            SafetyPolicy::from_yaml_str("version: v\nallowlist: {paths: [/]}\n"),
            Err(PolicyError::BadAllowPath(_))
        ));
        assert!(SafetyPolicy::from_yaml_str(
            "version: v\nrules: {BASH-RM-ROOT: needs_human_review}\n"
        )
        .is_ok());
    }
}
