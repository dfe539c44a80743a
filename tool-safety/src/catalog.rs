//! The built-in rules: id, category, default risk and decision, recommendation.

use crate::decision::SafetyDecision as D;
pub(crate) use crate::id::{self, RuleId};
use crate::report::{RiskCategory as C, RiskLevel as L, SafetyFinding};

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
    id: RuleId,
    category: C,
    level: L,
    decision: D,
    recommendation: &'static str,
) -> RuleInfo {
    RuleInfo {
        id: id.as_str(),
        category,
        level,
        decision,
        recommendation,
    }
}

const RULES: &[RuleInfo] = &[
    r(id::SCAN_ERROR, C::Scanner, L::Critical, D::Deny, "The scanner could not vouch for this script; simplify it or run it in a sandbox after manual review."),
    r(id::SCAN_INPUT, C::Scanner, L::High, D::Deny, "Send a smaller script without NUL bytes."),
    r(id::REQ_TIMEOUT, C::Request, L::High, D::Deny, "Request a timeout no larger than the policy maximum."),
    r(id::REQ_CWD, C::Request, L::High, D::Deny, "Run the script from the workspace, not from / or a system directory."),
    r(id::REQ_ENV, C::Environment, L::High, D::Deny, "Do not set loader or shell start-up variables (LD_PRELOAD, BASH_ENV, ...) for a tool call."),
    r(id::REQ_ENV_PATH, C::Environment, L::Medium, D::NeedsHumanReview, "Setting PATH or library paths for a tool call changes which programs run; confirm the value."),
    r(id::BASH_SYNTAX, C::Scanner, L::High, D::Deny, "Fix the shell syntax error; an unparseable script is never run."),
    r(id::BASH_RM_ROOT, C::DestructiveFilesystem, L::Critical, D::Deny, "Delete only paths inside the workspace, never /, the home directory or a system directory."),
    r(id::BASH_RM_SYSTEM, C::DestructiveFilesystem, L::High, D::NeedsHumanReview, "Deleting under a system directory needs a human; prefer the package manager."),
    r(id::BASH_CURL_PIPE_SHELL, C::RemoteCode, L::Critical, D::Deny, "Download to a file, verify its checksum or signature, review it, then run it."),
    r(id::BASH_DECODE_EXEC, C::CodeExecution, L::Critical, D::Deny, "Do not run decoded payloads; write the script in plain text."),
    r(id::BASH_EVAL, C::CodeExecution, L::High, D::NeedsHumanReview, "Avoid eval; call the command directly."),
    r(id::BASH_INDIRECT_EXEC, C::CodeExecution, L::High, D::NeedsHumanReview, "Name the command literally instead of running a variable or generated code."),
    r(id::BASH_REVERSE_SHELL, C::ReverseShell, L::Critical, D::Deny, "Never connect a shell to a network socket."),
    r(id::BASH_FORK_BOMB, C::ResourceExhaustion, L::Critical, D::Deny, "Remove the self-replicating function."),
    r(id::BASH_DISK, C::Disk, L::Critical, D::Deny, "Raw disk and filesystem tools are not for agents; use an image file in a sandbox."),
    r(id::BASH_CHMOD_SYSTEM, C::Permissions, L::High, D::Deny, "Change permissions only on files in the workspace."),
    r(id::BASH_SETUID, C::Permissions, L::High, D::Deny, "Do not set the setuid/setgid bit."),
    r(id::BASH_WRITE_RC, C::Persistence, L::High, D::Deny, "Do not modify shell start-up files; set variables for this command only."),
    r(id::BASH_WRITE_SSH_KEYS, C::Persistence, L::Critical, D::Deny, "Never write authorized_keys from a tool call."),
    r(id::BASH_CRONTAB, C::Persistence, L::High, D::Deny, "Do not install or remove cron jobs from a tool call."),
    r(id::BASH_WRITE_SYSTEM, C::Persistence, L::High, D::Deny, "Write only inside the workspace, never to /etc or other system paths."),
    r(id::BASH_CRED_READ, C::CredentialAccess, L::High, D::NeedsHumanReview, "Do not read credential files; pass the needed value through a secret manager."),
    r(id::BASH_CRED_EXFIL, C::CredentialAccess, L::Critical, D::Deny, "Never send credential files over the network."),
    r(id::BASH_HISTORY, C::DefenseEvasion, L::High, D::NeedsHumanReview, "Leave shell history alone."),
    r(id::BASH_FIREWALL, C::DefenseEvasion, L::High, D::Deny, "Do not turn off the firewall, SELinux, AppArmor or auditing."),
    r(id::BASH_ENV_PRELOAD, C::Environment, L::High, D::Deny, "Do not inject libraries or shell start-up files through the environment."),
    r(id::BASH_ENV_PATH, C::Environment, L::High, D::Deny, "Keep PATH and library paths absolute and out of temporary directories."),
    r(id::BASH_SUDO, C::PrivilegeEscalation, L::High, D::NeedsHumanReview, "Run without elevated privileges."),
    r(id::BASH_OBFUSCATION, C::Obfuscation, L::High, D::NeedsHumanReview, "Write command names plainly, without quotes, escapes or look-alike characters."),
    r(id::PY_SYNTAX, C::Scanner, L::High, D::Deny, "Fix the Python syntax error; an unparseable script is never run."),
    r(id::PY_OS_EXEC, C::ProcessExecution, L::High, D::NeedsHumanReview, "Use subprocess.run with a literal argument list instead of a shell string or exec."),
    r(id::PY_SUBPROCESS_SHELL, C::ProcessExecution, L::High, D::NeedsHumanReview, "Pass a literal argument list and leave shell=False."),
    r(id::PY_EVAL, C::CodeExecution, L::High, D::NeedsHumanReview, "Do not eval/exec/compile computed code; use ast.literal_eval or json for data."),
    r(id::PY_DYNAMIC_IMPORT, C::CodeExecution, L::High, D::NeedsHumanReview, "Import modules by literal name."),
    r(id::PY_REFLECTION, C::CodeExecution, L::High, D::NeedsHumanReview, "Avoid computed attribute access on modules and builtins."),
    r(id::PY_DESERIALIZE, C::Deserialization, L::High, D::NeedsHumanReview, "Load data with json or yaml.safe_load, not pickle/marshal/unsafe YAML."),
    r(id::PY_NATIVE, C::NativeCode, L::High, D::NeedsHumanReview, "Avoid calling native code through ctypes/cffi."),
    r(id::PY_SOCKET, C::Network, L::Medium, D::NeedsHumanReview, "Use a high-level HTTP client to a known host instead of raw sockets."),
    r(id::PY_REVERSE_SHELL, C::ReverseShell, L::Critical, D::Deny, "Never connect a shell or standard streams to a socket."),
    r(id::PY_RM_ROOT, C::DestructiveFilesystem, L::Critical, D::Deny, "Delete only paths inside the workspace, never /, the home directory or a system directory."),
    r(id::PY_RM_SYSTEM, C::DestructiveFilesystem, L::High, D::NeedsHumanReview, "Deleting under a system directory needs a human."),
    r(id::PY_WRITE_SYSTEM, C::Persistence, L::High, D::Deny, "Write only inside the workspace, never to system paths, shell rc files, cron or SSH keys."),
    r(id::PY_CRED_READ, C::CredentialAccess, L::High, D::NeedsHumanReview, "Do not read credential files; pass the needed value through a secret manager."),
    r(id::PY_CRED_EXFIL, C::CredentialAccess, L::Critical, D::Deny, "Never send credential files over the network."),
    r(id::PY_DOWNLOAD_EXEC, C::RemoteCode, L::Critical, D::Deny, "Never execute downloaded content."),
    r(id::PY_FORK_BOMB, C::ResourceExhaustion, L::Critical, D::Deny, "Do not fork in a loop; use a bounded process pool."),
    r(id::PY_DECODE_EXEC, C::CodeExecution, L::Critical, D::Deny, "Do not run decoded payloads; write the code in plain text."),
    r(id::PY_RESOURCE, C::ResourceExhaustion, L::High, D::NeedsHumanReview, "Keep allocations and the recursion limit bounded; process data in chunks."),
    r(id::EFFECT_OUTSIDE_WORKSPACE, C::DestructiveFilesystem, L::Medium, D::NeedsHumanReview, "Keep the files a script touches inside the workspace."),
    r(id::EFFECT_WRITE_OUTSIDE, C::DestructiveFilesystem, L::High, D::Deny, "Write, move, delete or re-permission files only inside the workspace, never in system or home directories."),
    r(id::EFFECT_SENSITIVE_READ, C::CredentialAccess, L::High, D::Deny, "Do not read password hashes, keys or tokens; pass the needed value through a secret manager."),
    r(id::EFFECT_EXFIL, C::CredentialAccess, L::Critical, D::Deny, "Never send a file or its content over the network from a tool call."),
    r(id::EFFECT_DOWNLOAD_EXEC, C::RemoteCode, L::Critical, D::Deny, "Download to a file, verify its checksum or signature, review it, then run it."),
    r(id::EFFECT_NETWORK, C::Network, L::Medium, D::NeedsHumanReview, "Declare the tool open_world or list the host in the policy's network allow-list."),
    r(id::EFFECT_KILL, C::ProcessExecution, L::High, D::NeedsHumanReview, "Signal only processes the script started itself ($!)."),
    r(id::EFFECT_KILL_ALL, C::ProcessExecution, L::Critical, D::Deny, "Never signal every process or PID 1."),
    r(id::EFFECT_ENV_SECRET, C::CredentialAccess, L::High, D::NeedsHumanReview, "Do not read credentials from the environment or dump it; pass only the values the tool needs."),
    r(id::DYNAMIC_EXEC, C::CodeExecution, L::High, D::NeedsHumanReview, "Run the code directly, in plain text, so its effects can be read before it runs."),
    r(id::DYNAMIC_EXEC_SENSITIVE, C::CodeExecution, L::Critical, D::Deny, "Code the scan cannot see, in a script that also does something sensitive: write both plainly."),
    r(id::HOST_INFO, C::Reconnaissance, L::Medium, D::NeedsHumanReview, "Read only the host information the task needs, and say why."),
    r(id::DESERIALIZE, C::Deserialization, L::High, D::NeedsHumanReview, "Load data with json or a safe loader (yaml.safe_load, torch.load(weights_only=True))."),
    r(id::DESERIALIZE_UNTRUSTED, C::Deserialization, L::Critical, D::Deny, "Never decode network data or a payload that runs code with a code-running format (pickle, marshal, unsafe YAML)."),
    r(id::ALLOC_LARGE, C::ResourceExhaustion, L::Medium, D::NeedsHumanReview, "Bound the allocation and process data in chunks."),
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

/// A finding of built-in rule `id`. Every [`RuleId`] constant has its catalog entry (unit test
/// `every_id_constant_is_in_catalog`); the `SCAN-ERROR` fallback is never taken.
pub(crate) fn finding(id: RuleId, evidence: &str) -> SafetyFinding {
    let info = info(id.as_str()).unwrap_or(&RULES[0]);
    SafetyFinding::new(
        info.id,
        info.category,
        info.level,
        info.decision,
        evidence,
        info.recommendation,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_constant_is_in_catalog() {
        for rule in id::ALL {
            assert!(
                info(rule.as_str()).is_some(),
                "{} has no catalog entry",
                rule.as_str()
            );
        }
        assert_eq!(
            id::ALL.len(),
            RULES.len(),
            "a catalog entry has no id constant"
        );
    }
}
