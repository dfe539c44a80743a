//! The ids of the built-in rules, as typed constants: a misspelt id is a compile error.

/// The id of a built-in rule: one of the constants of this module, so a misspelt id is a compile
/// error rather than a finding of the wrong rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RuleId(&'static str);

impl RuleId {
    /// The id as reports and policies spell it.
    pub(crate) const fn as_str(self) -> &'static str {
        self.0
    }
}

pub(crate) const SCAN_ERROR: RuleId = RuleId("SCAN-ERROR");
pub(crate) const SCAN_INPUT: RuleId = RuleId("SCAN-INPUT");
pub(crate) const REQ_TIMEOUT: RuleId = RuleId("REQ-TIMEOUT");
pub(crate) const REQ_CWD: RuleId = RuleId("REQ-CWD");
pub(crate) const REQ_ENV: RuleId = RuleId("REQ-ENV");
pub(crate) const REQ_ENV_PATH: RuleId = RuleId("REQ-ENV-PATH");
pub(crate) const BASH_SYNTAX: RuleId = RuleId("BASH-SYNTAX");
pub(crate) const BASH_RM_ROOT: RuleId = RuleId("BASH-RM-ROOT");
pub(crate) const BASH_RM_SYSTEM: RuleId = RuleId("BASH-RM-SYSTEM");
pub(crate) const BASH_CURL_PIPE_SHELL: RuleId = RuleId("BASH-CURL-PIPE-SHELL");
pub(crate) const BASH_DECODE_EXEC: RuleId = RuleId("BASH-DECODE-EXEC");
pub(crate) const BASH_EVAL: RuleId = RuleId("BASH-EVAL");
pub(crate) const BASH_INDIRECT_EXEC: RuleId = RuleId("BASH-INDIRECT-EXEC");
pub(crate) const BASH_REVERSE_SHELL: RuleId = RuleId("BASH-REVERSE-SHELL");
pub(crate) const BASH_FORK_BOMB: RuleId = RuleId("BASH-FORK-BOMB");
pub(crate) const BASH_DISK: RuleId = RuleId("BASH-DISK");
pub(crate) const BASH_CHMOD_SYSTEM: RuleId = RuleId("BASH-CHMOD-SYSTEM");
pub(crate) const BASH_SETUID: RuleId = RuleId("BASH-SETUID");
pub(crate) const BASH_WRITE_RC: RuleId = RuleId("BASH-WRITE-RC");
pub(crate) const BASH_WRITE_SSH_KEYS: RuleId = RuleId("BASH-WRITE-SSH-KEYS");
pub(crate) const BASH_CRONTAB: RuleId = RuleId("BASH-CRONTAB");
pub(crate) const BASH_WRITE_SYSTEM: RuleId = RuleId("BASH-WRITE-SYSTEM");
pub(crate) const BASH_CRED_READ: RuleId = RuleId("BASH-CRED-READ");
pub(crate) const BASH_CRED_EXFIL: RuleId = RuleId("BASH-CRED-EXFIL");
pub(crate) const BASH_HISTORY: RuleId = RuleId("BASH-HISTORY");
pub(crate) const BASH_FIREWALL: RuleId = RuleId("BASH-FIREWALL");
pub(crate) const BASH_ENV_PRELOAD: RuleId = RuleId("BASH-ENV-PRELOAD");
pub(crate) const BASH_ENV_PATH: RuleId = RuleId("BASH-ENV-PATH");
pub(crate) const BASH_SUDO: RuleId = RuleId("BASH-SUDO");
pub(crate) const BASH_OBFUSCATION: RuleId = RuleId("BASH-OBFUSCATION");
pub(crate) const PY_SYNTAX: RuleId = RuleId("PY-SYNTAX");
pub(crate) const PY_OS_EXEC: RuleId = RuleId("PY-OS-EXEC");
pub(crate) const PY_SUBPROCESS_SHELL: RuleId = RuleId("PY-SUBPROCESS-SHELL");
pub(crate) const PY_EVAL: RuleId = RuleId("PY-EVAL");
pub(crate) const PY_DYNAMIC_IMPORT: RuleId = RuleId("PY-DYNAMIC-IMPORT");
pub(crate) const PY_REFLECTION: RuleId = RuleId("PY-REFLECTION");
pub(crate) const PY_DESERIALIZE: RuleId = RuleId("PY-DESERIALIZE");
pub(crate) const PY_NATIVE: RuleId = RuleId("PY-NATIVE");
pub(crate) const PY_SOCKET: RuleId = RuleId("PY-SOCKET");
pub(crate) const PY_REVERSE_SHELL: RuleId = RuleId("PY-REVERSE-SHELL");
pub(crate) const PY_RM_ROOT: RuleId = RuleId("PY-RM-ROOT");
pub(crate) const PY_RM_SYSTEM: RuleId = RuleId("PY-RM-SYSTEM");
pub(crate) const PY_WRITE_SYSTEM: RuleId = RuleId("PY-WRITE-SYSTEM");
pub(crate) const PY_CRED_READ: RuleId = RuleId("PY-CRED-READ");
pub(crate) const PY_CRED_EXFIL: RuleId = RuleId("PY-CRED-EXFIL");
pub(crate) const PY_DOWNLOAD_EXEC: RuleId = RuleId("PY-DOWNLOAD-EXEC");
pub(crate) const PY_FORK_BOMB: RuleId = RuleId("PY-FORK-BOMB");
pub(crate) const PY_DECODE_EXEC: RuleId = RuleId("PY-DECODE-EXEC");
pub(crate) const PY_RESOURCE: RuleId = RuleId("PY-RESOURCE");
pub(crate) const EFFECT_OUTSIDE_WORKSPACE: RuleId = RuleId("EFFECT-OUTSIDE-WORKSPACE");
pub(crate) const EFFECT_WRITE_OUTSIDE: RuleId = RuleId("EFFECT-WRITE-OUTSIDE");
pub(crate) const EFFECT_SENSITIVE_READ: RuleId = RuleId("EFFECT-SENSITIVE-READ");
pub(crate) const EFFECT_EXFIL: RuleId = RuleId("EFFECT-EXFIL");
pub(crate) const EFFECT_DOWNLOAD_EXEC: RuleId = RuleId("EFFECT-DOWNLOAD-EXEC");
pub(crate) const EFFECT_NETWORK: RuleId = RuleId("EFFECT-NETWORK");
pub(crate) const EFFECT_KILL: RuleId = RuleId("EFFECT-KILL");
pub(crate) const EFFECT_KILL_ALL: RuleId = RuleId("EFFECT-KILL-ALL");
pub(crate) const EFFECT_ENV_SECRET: RuleId = RuleId("EFFECT-ENV-SECRET");
pub(crate) const DYNAMIC_EXEC: RuleId = RuleId("DYNAMIC-EXEC");
pub(crate) const DYNAMIC_EXEC_SENSITIVE: RuleId = RuleId("DYNAMIC-EXEC-SENSITIVE");
pub(crate) const HOST_INFO: RuleId = RuleId("HOST-INFO");
pub(crate) const DESERIALIZE: RuleId = RuleId("DESERIALIZE");
pub(crate) const DESERIALIZE_UNTRUSTED: RuleId = RuleId("DESERIALIZE-UNTRUSTED");
pub(crate) const ALLOC_LARGE: RuleId = RuleId("ALLOC-LARGE");

/// Every constant above, for the test that each has its catalog entry.
#[cfg(test)]
pub(crate) const ALL: &[RuleId] = &[
    SCAN_ERROR,
    SCAN_INPUT,
    REQ_TIMEOUT,
    REQ_CWD,
    REQ_ENV,
    REQ_ENV_PATH,
    BASH_SYNTAX,
    BASH_RM_ROOT,
    BASH_RM_SYSTEM,
    BASH_CURL_PIPE_SHELL,
    BASH_DECODE_EXEC,
    BASH_EVAL,
    BASH_INDIRECT_EXEC,
    BASH_REVERSE_SHELL,
    BASH_FORK_BOMB,
    BASH_DISK,
    BASH_CHMOD_SYSTEM,
    BASH_SETUID,
    BASH_WRITE_RC,
    BASH_WRITE_SSH_KEYS,
    BASH_CRONTAB,
    BASH_WRITE_SYSTEM,
    BASH_CRED_READ,
    BASH_CRED_EXFIL,
    BASH_HISTORY,
    BASH_FIREWALL,
    BASH_ENV_PRELOAD,
    BASH_ENV_PATH,
    BASH_SUDO,
    BASH_OBFUSCATION,
    PY_SYNTAX,
    PY_OS_EXEC,
    PY_SUBPROCESS_SHELL,
    PY_EVAL,
    PY_DYNAMIC_IMPORT,
    PY_REFLECTION,
    PY_DESERIALIZE,
    PY_NATIVE,
    PY_SOCKET,
    PY_REVERSE_SHELL,
    PY_RM_ROOT,
    PY_RM_SYSTEM,
    PY_WRITE_SYSTEM,
    PY_CRED_READ,
    PY_CRED_EXFIL,
    PY_DOWNLOAD_EXEC,
    PY_FORK_BOMB,
    PY_DECODE_EXEC,
    PY_RESOURCE,
    EFFECT_OUTSIDE_WORKSPACE,
    EFFECT_WRITE_OUTSIDE,
    EFFECT_SENSITIVE_READ,
    EFFECT_EXFIL,
    EFFECT_DOWNLOAD_EXEC,
    EFFECT_NETWORK,
    EFFECT_KILL,
    EFFECT_KILL_ALL,
    EFFECT_ENV_SECRET,
    DYNAMIC_EXEC,
    DYNAMIC_EXEC_SENSITIVE,
    HOST_INFO,
    DESERIALIZE,
    DESERIALIZE_UNTRUSTED,
    ALLOC_LARGE,
];
