//! The scan's vocabulary: requests, findings, reports and their decision and risk scales.
//!
//! A leaf: every other module of the scanner imports these types, and this file imports only the
//! redaction helpers.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decision::SafetyDecision;
use crate::effects::Effect;
use crate::redact;
pub use tool_rules::ScriptLang;

/// How much harm a finding points at. Ordered from none to critical.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// No finding (only used for an empty report).
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

impl RiskLevel {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::None => "none",
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of harm a finding is about; used to group and alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RiskCategory {
    /// Deleting files or directories.
    DestructiveFilesystem,
    /// Raw disk and filesystem tools.
    Disk,
    /// Fetching code from the network and running it.
    RemoteCode,
    /// Running dynamically built or decoded code.
    CodeExecution,
    /// Spawning processes or shells.
    ProcessExecution,
    /// Giving a remote party a shell.
    ReverseShell,
    /// Network access.
    Network,
    /// Exhausting processes, memory or CPU.
    ResourceExhaustion,
    /// Permissions, ownership, setuid.
    Permissions,
    /// Surviving the session: shell rc files, cron, SSH keys, system config.
    Persistence,
    /// Reading or sending secrets.
    CredentialAccess,
    /// Hiding traces or turning off protections.
    DefenseEvasion,
    /// Environment variables that change how programs load or resolve.
    Environment,
    /// Gaining privileges (`sudo`, `su`).
    PrivilegeEscalation,
    /// Names written to evade pattern matching.
    Obfuscation,
    /// Loading objects that run code while being decoded.
    Deserialization,
    /// Calling native code directly.
    NativeCode,
    /// Reading what runs on the host and how it is built: processes, CPU, memory, interfaces.
    Reconnaissance,
    /// The request around the script (cwd, timeout, env names).
    Request,
    /// The scanner itself could not vouch for the script.
    Scanner,
    /// A rule supplied by the embedding application.
    Custom,
}

/// One script to scan, with the context it will run in. Environment *values* are never held.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyScanRequest {
    /// The tool that will run the script (from the executor, never from the model).
    pub tool_name: String,
    /// The script text.
    pub script: String,
    /// Its language.
    #[serde(with = "script_lang_serde")]
    pub language: ScriptLang,
    /// Working directory the script will run in, if known.
    pub cwd: Option<String>,
    /// Names of environment variables the call sets (values stay out of the scanner).
    pub env_names: Vec<String>,
    /// Requested timeout in seconds, after defaults were merged in.
    pub timeout_seconds: Option<u64>,
    /// Workspace root (absolute) the script may touch, if known; effects outside it are judged.
    #[serde(default)]
    pub workspace: Option<String>,
    /// The tool is declared to reach the open world: network use alone is no finding. `true`
    /// unless the caller says otherwise (the executor's gate passes the declaration's value).
    #[serde(default = "yes")]
    pub open_world: bool,
}

fn yes() -> bool {
    true
}

impl SafetyScanRequest {
    /// A request for `script` in `language` run by `tool_name`, with no cwd, env or timeout.
    pub fn new(
        tool_name: impl Into<String>,
        language: ScriptLang,
        script: impl Into<String>,
    ) -> Self {
        SafetyScanRequest {
            tool_name: tool_name.into(),
            script: script.into(),
            language,
            cwd: None,
            env_names: Vec::new(),
            timeout_seconds: None,
            workspace: None,
            open_world: true,
        }
    }

    /// Set the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Set the workspace root the script's effects are judged against.
    pub fn with_workspace(mut self, root: impl Into<String>) -> Self {
        self.workspace = Some(root.into());
        self
    }

    /// Say whether the tool may reach the open world (network use is then no finding).
    pub fn with_open_world(mut self, yes: bool) -> Self {
        self.open_world = yes;
        self
    }

    /// Set the names of environment variables the call sets.
    pub fn with_env_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.env_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Set the requested timeout in seconds.
    pub fn with_timeout_seconds(mut self, seconds: u64) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
}

/// One reason a script is risky: what rule fired, where, and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyFinding {
    /// Stable rule id, e.g. `BASH-RM-ROOT`.
    pub rule_id: String,
    /// Kind of harm.
    pub category: RiskCategory,
    /// How much harm.
    pub risk_level: RiskLevel,
    /// What this finding alone asks for (after policy overrides).
    pub decision: SafetyDecision,
    /// The offending code, redacted (tokens, passwords, keys masked) and at most
    /// [`EVIDENCE_MAX_CHARS`](crate::EVIDENCE_MAX_CHARS) characters.
    pub evidence: String,
    /// What to do instead.
    pub recommendation: String,
    /// 1-based line in the scanned script (of the outer node for nested scripts).
    pub line: Option<u32>,
    /// 1-based column.
    pub column: Option<u32>,
    /// Extra facts (command name, path class); never secrets.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub metadata: BTreeMap<String, String>,
    /// `true` when the evidence had something masked.
    #[serde(skip)]
    pub(crate) evidence_redacted: bool,
    /// The command a finding is about, for the command allowlist.
    #[serde(skip)]
    pub(crate) subject_command: Option<String>,
    /// The path a finding is about, for the path allowlist.
    #[serde(skip)]
    pub(crate) subject_path: Option<String>,
}

impl SafetyFinding {
    /// A finding with redacted, length-bounded evidence (for custom rules).
    pub fn new(
        rule_id: impl Into<String>,
        category: RiskCategory,
        risk_level: RiskLevel,
        decision: SafetyDecision,
        evidence: &str,
        recommendation: impl Into<String>,
    ) -> Self {
        let (evidence, evidence_redacted) = redact::redact_bounded(evidence);
        SafetyFinding {
            rule_id: rule_id.into(),
            category,
            risk_level,
            decision,
            evidence,
            recommendation: recommendation.into(),
            line: None,
            column: None,
            metadata: BTreeMap::new(),
            evidence_redacted,
            subject_command: None,
            subject_path: None,
        }
    }

    /// Set the 1-based position.
    pub fn at(mut self, line: u32, column: u32) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Add a metadata entry; the value is redacted like evidence.
    pub fn with_metadata(mut self, key: impl Into<String>, value: &str) -> Self {
        let (v, r) = redact::redact_bounded(value);
        self.evidence_redacted |= r;
        self.metadata.insert(key.into(), v);
        self
    }
}

/// The result of scanning one script: the strictest decision and every finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SafetyReport {
    /// Strictest decision over the findings; `allow` when there are none.
    pub decision: SafetyDecision,
    /// Highest risk level over the findings.
    pub risk_level: RiskLevel,
    /// The tool that asked for the scan.
    pub tool_name: String,
    /// Language scanned.
    #[serde(with = "script_lang_serde")]
    pub language: ScriptLang,
    /// Every finding, in script order.
    pub findings: Vec<SafetyFinding>,
    /// What the script will touch, in script order (evidence redacted and bounded).
    #[serde(default)]
    pub effects: Vec<Effect>,
    /// Scan time in microseconds.
    pub duration_us: u64,
    /// `true` when some evidence was masked.
    pub redacted: bool,
    /// Parser that produced the syntax tree (`none` when the script was not parsed).
    pub parser: String,
    /// Version of the policy applied.
    pub policy_version: String,
}

impl SafetyReport {
    /// Distinct rule ids of the findings, in first-seen order.
    pub fn rule_ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        for f in &self.findings {
            if !ids.contains(&f.rule_id.as_str()) {
                ids.push(&f.rule_id);
            }
        }
        ids
    }

    /// Scan time in milliseconds.
    pub fn duration_ms(&self) -> f64 {
        // Microseconds fit f64 exactly far beyond any scan time.
        self.duration_us as f64 / 1000.0
    }

    /// `true` when the script must not run without more: `deny`, or review when `block_on_review`
    /// is set or no approval was given.
    pub fn blocked(&self, block_on_review: bool, approved: bool) -> bool {
        match self.decision {
            SafetyDecision::Allow => false,
            SafetyDecision::NeedsHumanReview => block_on_review || !approved,
            SafetyDecision::Deny => true,
        }
    }

    /// Rebuild `decision`, `risk_level` and `redacted` from the findings.
    pub(crate) fn recompute(&mut self) {
        self.decision = self
            .findings
            .iter()
            .map(|f| f.decision)
            .max()
            .unwrap_or(SafetyDecision::Allow);
        self.risk_level = self
            .findings
            .iter()
            .map(|f| f.risk_level)
            .max()
            .unwrap_or(RiskLevel::None);
        self.redacted = self.findings.iter().any(|f| f.evidence_redacted);
    }

    /// Fold another report (e.g. another code block) into this one.
    pub fn merge(&mut self, other: SafetyReport) {
        self.findings.extend(other.findings);
        let room = crate::effects::MAX_EFFECTS.saturating_sub(self.effects.len());
        self.effects.extend(other.effects.into_iter().take(room));
        self.duration_us = self.duration_us.saturating_add(other.duration_us);
        if self.parser != other.parser && !self.parser.contains(&other.parser) {
            self.parser = format!("{}+{}", self.parser, other.parser);
        }
        self.recompute();
    }
}

/// `ScriptLang` as its stable name (`bash`, `python`); the shared rules crate has no serde.
mod script_lang_serde {
    use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

    use tool_rules::ScriptLang;

    pub(super) fn serialize<S: Serializer>(lang: &ScriptLang, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(lang.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ScriptLang, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(D::Error::custom)
    }
}
