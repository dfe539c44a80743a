//! The built-in rules: id, category, default risk and decision, recommendation.

use crate::report::{RiskCategory as C, RiskLevel as L, SafetyDecision as D, SafetyFinding};

/// What a built-in rule is about and what it decides by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// Stable id, e.g. `BASH-RM-ROOT`.
    pub id: &'static str,
    /// Kind of harm.
    pub category: C,
    /// Default risk level.
    pub level: L,
    /// Default decision.
    pub decision: D,
    /// What to do instead.
    pub recommendation: &'static str,
}

const fn r(
    id: &'static str,
    category: C,
    level: L,
    decision: D,
    recommendation: &'static str,
) -> RuleInfo {
    RuleInfo {
        id,
        category,
        level,
        decision,
        recommendation,
    }
}

const RULES: &[RuleInfo] = &[
    r("SCAN-ERROR", C::Scanner, L::Critical, D::Deny, "The scanner could not vouch for this script; simplify it or run it in a sandbox after manual review."),
    r("SCAN-INPUT", C::Scanner, L::High, D::Deny, "Send a smaller script without NUL bytes."),
    r("REQ-TIMEOUT", C::Request, L::High, D::Deny, "Request a timeout no larger than the policy maximum."),
    r("REQ-CWD", C::Request, L::High, D::Deny, "Run the script from the workspace, not from / or a system directory."),
    r("REQ-ENV", C::Environment, L::High, D::Deny, "Do not set loader or shell start-up variables (LD_PRELOAD, BASH_ENV, ...) for a tool call."),
    r("REQ-ENV-PATH", C::Environment, L::Medium, D::NeedsHumanReview, "Setting PATH or library paths for a tool call changes which programs run; confirm the value."),
    r("BASH-SYNTAX", C::Scanner, L::High, D::Deny, "Fix the shell syntax error; an unparseable script is never run."),
    r("BASH-RM-ROOT", C::DestructiveFilesystem, L::Critical, D::Deny, "Delete only paths inside the workspace, never /, the home directory or a system directory."),
    r("BASH-RM-SYSTEM", C::DestructiveFilesystem, L::High, D::NeedsHumanReview, "Deleting under a system directory needs a human; prefer the package manager."),
    r("BASH-CURL-PIPE-SHELL", C::RemoteCode, L::Critical, D::Deny, "Download to a file, verify its checksum or signature, review it, then run it."),
    r("BASH-DECODE-EXEC", C::CodeExecution, L::Critical, D::Deny, "Do not run decoded payloads; write the script in plain text."),
    r("BASH-EVAL", C::CodeExecution, L::High, D::NeedsHumanReview, "Avoid eval; call the command directly."),
    r("BASH-INDIRECT-EXEC", C::CodeExecution, L::High, D::NeedsHumanReview, "Name the command literally instead of running a variable or generated code."),
    r("BASH-REVERSE-SHELL", C::ReverseShell, L::Critical, D::Deny, "Never connect a shell to a network socket."),
    r("BASH-FORK-BOMB", C::ResourceExhaustion, L::Critical, D::Deny, "Remove the self-replicating function."),
    r("BASH-DISK", C::Disk, L::Critical, D::Deny, "Raw disk and filesystem tools are not for agents; use an image file in a sandbox."),
    r("BASH-CHMOD-SYSTEM", C::Permissions, L::High, D::Deny, "Change permissions only on files in the workspace."),
    r("BASH-SETUID", C::Permissions, L::High, D::Deny, "Do not set the setuid/setgid bit."),
    r("BASH-WRITE-RC", C::Persistence, L::High, D::Deny, "Do not modify shell start-up files; set variables for this command only."),
    r("BASH-WRITE-SSH-KEYS", C::Persistence, L::Critical, D::Deny, "Never write authorized_keys from a tool call."),
    r("BASH-CRONTAB", C::Persistence, L::High, D::Deny, "Do not install or remove cron jobs from a tool call."),
    r("BASH-WRITE-SYSTEM", C::Persistence, L::High, D::Deny, "Write only inside the workspace, never to /etc or other system paths."),
    r("BASH-CRED-READ", C::CredentialAccess, L::High, D::NeedsHumanReview, "Do not read credential files; pass the needed value through a secret manager."),
    r("BASH-CRED-EXFIL", C::CredentialAccess, L::Critical, D::Deny, "Never send credential files over the network."),
    r("BASH-HISTORY", C::DefenseEvasion, L::High, D::NeedsHumanReview, "Leave shell history alone."),
    r("BASH-FIREWALL", C::DefenseEvasion, L::High, D::Deny, "Do not turn off the firewall, SELinux, AppArmor or auditing."),
    r("BASH-ENV-PRELOAD", C::Environment, L::High, D::Deny, "Do not inject libraries or shell start-up files through the environment."),
    r("BASH-ENV-PATH", C::Environment, L::High, D::Deny, "Keep PATH and library paths absolute and out of temporary directories."),
    r("BASH-SUDO", C::PrivilegeEscalation, L::High, D::NeedsHumanReview, "Run without elevated privileges."),
    r("BASH-OBFUSCATION", C::Obfuscation, L::High, D::NeedsHumanReview, "Write command names plainly, without quotes, escapes or look-alike characters."),
    r("PY-SYNTAX", C::Scanner, L::High, D::Deny, "Fix the Python syntax error; an unparseable script is never run."),
    r("PY-OS-EXEC", C::ProcessExecution, L::High, D::NeedsHumanReview, "Use subprocess.run with a literal argument list instead of a shell string or exec."),
    r("PY-SUBPROCESS-SHELL", C::ProcessExecution, L::High, D::NeedsHumanReview, "Pass a literal argument list and leave shell=False."),
    r("PY-EVAL", C::CodeExecution, L::High, D::NeedsHumanReview, "Do not eval/exec/compile computed code; use ast.literal_eval or json for data."),
    r("PY-DYNAMIC-IMPORT", C::CodeExecution, L::High, D::NeedsHumanReview, "Import modules by literal name."),
    r("PY-REFLECTION", C::CodeExecution, L::High, D::NeedsHumanReview, "Avoid computed attribute access on modules and builtins."),
    r("PY-DESERIALIZE", C::Deserialization, L::High, D::NeedsHumanReview, "Load data with json or yaml.safe_load, not pickle/marshal/unsafe YAML."),
    r("PY-NATIVE", C::NativeCode, L::High, D::NeedsHumanReview, "Avoid calling native code through ctypes/cffi."),
    r("PY-SOCKET", C::Network, L::Medium, D::NeedsHumanReview, "Use a high-level HTTP client to a known host instead of raw sockets."),
    r("PY-REVERSE-SHELL", C::ReverseShell, L::Critical, D::Deny, "Never connect a shell or standard streams to a socket."),
    r("PY-RM-ROOT", C::DestructiveFilesystem, L::Critical, D::Deny, "Delete only paths inside the workspace, never /, the home directory or a system directory."),
    r("PY-RM-SYSTEM", C::DestructiveFilesystem, L::High, D::NeedsHumanReview, "Deleting under a system directory needs a human."),
    r("PY-WRITE-SYSTEM", C::Persistence, L::High, D::Deny, "Write only inside the workspace, never to system paths, shell rc files, cron or SSH keys."),
    r("PY-CRED-READ", C::CredentialAccess, L::High, D::NeedsHumanReview, "Do not read credential files; pass the needed value through a secret manager."),
    r("PY-CRED-EXFIL", C::CredentialAccess, L::Critical, D::Deny, "Never send credential files over the network."),
    r("PY-DOWNLOAD-EXEC", C::RemoteCode, L::Critical, D::Deny, "Never execute downloaded content."),
    r("PY-FORK-BOMB", C::ResourceExhaustion, L::Critical, D::Deny, "Do not fork in a loop; use a bounded process pool."),
];

/// Every built-in rule, in a stable order.
pub fn builtin_rules() -> &'static [RuleInfo] {
    RULES
}

/// The built-in rule with this id.
pub(crate) fn info(id: &str) -> Option<&'static RuleInfo> {
    RULES.iter().find(|r| r.id == id)
}

/// Rules no policy may override: the scanner's own verdicts.
pub(crate) fn is_locked(id: &str) -> bool {
    matches!(
        id,
        "SCAN-ERROR" | "SCAN-INPUT" | "BASH-SYNTAX" | "PY-SYNTAX"
    )
}

/// A finding of built-in rule `id`. Panics are impossible: ids are compile-time constants checked
/// by a unit test (`every_emitted_id_is_in_catalog`); an unknown id falls back to `SCAN-ERROR`.
pub(crate) fn finding(id: &'static str, evidence: &str) -> SafetyFinding {
    let info = info(id).unwrap_or(&RULES[0]);
    SafetyFinding::new(
        info.id,
        info.category,
        info.level,
        info.decision,
        evidence,
        info.recommendation,
    )
}
