//! What a script will touch: files, directories, the network, processes, the environment.
//!
//! The language walks record an [`Effect`] for every operation they recognize, with its target
//! resolved as far as constant propagation gets; `judge` then weighs them against the workspace.

use serde::{Deserialize, Serialize};

use crate::decision::SafetyDecision;

/// Most effects kept per script (the first ones, in script order); more are dropped.
pub(crate) const MAX_EFFECTS: usize = 256;

/// Which way data goes over the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Fetches content (`curl URL`, `requests.get`).
    Download,
    /// Sends data (`curl --data`, `requests.post(data=…)`).
    Upload,
    /// A raw connection or listener: either way.
    Both,
}

/// The kind of an effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EffectKind {
    /// Reads a file.
    FileRead,
    /// Writes (or appends to) a file.
    FileWrite,
    /// Creates a file or directory.
    FileCreate,
    /// Deletes or moves away a file or directory.
    FileDelete,
    /// Changes permissions or ownership.
    Chmod,
    /// Creates a link.
    Link,
    /// Lists a directory.
    DirList,
    /// Uses the network.
    Network {
        /// The URL, when literal.
        url: Option<String>,
        /// Its host, when known.
        host: Option<String>,
        /// Its port, when given.
        port: Option<u16>,
        /// Which way the data goes.
        direction: Direction,
        /// What is sent: a file path or `content of PATH`, when known.
        sends: Option<String>,
    },
    /// Starts a program.
    ProcessSpawn,
    /// Signals or kills processes.
    ProcessControl {
        /// The process id, name or pattern signalled (`signalled` in JSON: the effect's own
        /// `target` field is beside it).
        #[serde(rename = "signalled")]
        target: String,
    },
    /// Reads an environment variable.
    EnvRead {
        /// Its name.
        name: String,
    },
    /// Installs something that runs later (start-up files, cron, services).
    Persistence,
    /// Reads information about the host: the process list, CPU, memory, network interfaces,
    /// the kernel and its users.
    HostInfo {
        /// What is read (`process list`, `network interfaces`, `cpu`, `memory`, `system`...).
        what: String,
    },
    /// Decodes data with a format that can run code while decoding (`pickle`, `marshal`,
    /// `yaml.load` without a safe loader...).
    Deserialize {
        /// The format or loader (`pickle`, `marshal`, `yaml`, `torch.load`...).
        format: String,
        /// Where the decoded data comes from.
        source: DataSource,
    },
    /// Allocates memory or disk on a large or unbounded scale (allocation in loops, large
    /// literal repetition, `fallocate -l 10G`, `dd count=…`).
    Allocation {
        /// The size the scan could estimate, in bytes (`None` when unbounded or unknown).
        bytes: Option<u64>,
    },
    /// Runs code the scan cannot see: a computed command name, `eval`/`exec` of built or decoded
    /// text, `bash -c "$x"`, a script written then run or sourced, an interpreter the scanner
    /// has no parser for (`perl -e`), calls into native code.
    DynamicExec {
        /// How the code is hidden, in a few words (`computed command name`, `eval of built
        /// text`, `perl -e`, `script written then run`, `ctypes into libc`...).
        form: String,
    },
}

/// Where data handed to a decoder comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataSource {
    /// A payload written in the script, with no sign of running code.
    Literal,
    /// A payload written in the script that names `os.system`, `eval`, `exec`, `subprocess`
    /// or the like ([`payload_runs_code`]).
    LiteralCode,
    /// Data fetched from the network.
    Network,
    /// A file.
    File,
    /// Computed at run time.
    Unknown,
}

impl DataSource {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            DataSource::Literal => "literal",
            DataSource::LiteralCode => "literal_code",
            DataSource::Network => "network",
            DataSource::File => "file",
            DataSource::Unknown => "unknown",
        }
    }
}

/// The target of a [`EffectKind::ProcessControl`] whose processes were found by iterating the
/// whole process list (`psutil.process_iter()`, `ps -e | …`): [`every_process`] builds it.
pub const EVERY_PROCESS: &str = "every process";

/// The signalled target for processes found by iterating every process, optionally filtered by
/// name (`every process named sshd`).
pub fn every_process(named: Option<&str>) -> String {
    match named {
        Some(n) => format!("{EVERY_PROCESS} named {n}"),
        None => EVERY_PROCESS.to_owned(),
    }
}

/// `true` when a decoder's literal payload names something that runs code on decoding
/// (`os.system`, `eval`, `exec`, `subprocess`, `__reduce__`...): such a payload is a program.
pub fn payload_runs_code(payload: &str) -> bool {
    // Source text spells a line end `\n`, decoded text has a real one: read both the same way.
    let p = payload.to_ascii_lowercase().replace("\\n", "\n");
    const MODULES: [&str; 6] = ["os", "posix", "nt", "subprocess", "builtins", "__builtin__"];
    const CALLS: [&str; 7] = [
        "system",
        "popen",
        "exec",
        "eval",
        "spawn",
        "check_output",
        "run",
    ];
    // Protocol 0 names a global `cMODULE\nNAME`; binary protocols hold both names as strings.
    let pickled = MODULES
        .iter()
        .any(|m| CALLS.iter().any(|f| p.contains(&format!("c{m}\n{f}"))))
        || (["posix", "subprocess", "builtins"]
            .iter()
            .any(|m| p.contains(m))
            && [
                "system",
                "popen",
                "eval",
                "exec",
                "check_output",
                "getoutput",
            ]
            .iter()
            .any(|f| p.contains(f)));
    pickled
        || [
            "os.system",
            "os.popen",
            "os.exec",
            "subprocess",
            "eval(",
            "exec(",
            "__reduce__",
            "__import__",
            "!!python/object/apply",
            "!!python/name",
        ]
        .iter()
        .any(|k| p.contains(k))
}

/// What of the host every build script reads (`uname`, `ps … | grep NAME`): a
/// [`EffectKind::HostInfo`] of these is listed, never reviewed.
pub const QUIET_HOST_INFO: &[&str] = &["kernel", "process lookup"];

/// Allocations the judge reviews from this many bytes on (smaller known sizes pass).
pub const ALLOCATION_REVIEW_BYTES: u64 = 256 * 1024 * 1024;

/// `bytes` as a short size (`1.0 GiB`, `512 MiB`, `4096 B`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024 && u + 1 < UNITS.len() {
        v /= 1024;
        u += 1;
    }
    if u == 0 {
        return format!("{bytes} B");
    }
    // One decimal from the unit below; integers only.
    let scale = 1024u64.pow(u32::try_from(u).unwrap_or(0));
    let tenths = (bytes % scale) * 10 / scale;
    format!("{}.{tenths} {}", bytes / scale, UNITS[u])
}

impl EffectKind {
    /// The stable snake_case name (`file_read`, `network`...), as reports spell the kind.
    pub fn name(&self) -> &'static str {
        match self {
            EffectKind::FileRead => "file_read",
            EffectKind::FileWrite => "file_write",
            EffectKind::FileCreate => "file_create",
            EffectKind::FileDelete => "file_delete",
            EffectKind::Chmod => "chmod",
            EffectKind::Link => "link",
            EffectKind::DirList => "dir_list",
            EffectKind::Network { .. } => "network",
            EffectKind::ProcessSpawn => "process_spawn",
            EffectKind::ProcessControl { .. } => "process_control",
            EffectKind::EnvRead { .. } => "env_read",
            EffectKind::Persistence => "persistence",
            EffectKind::HostInfo { .. } => "host_info",
            EffectKind::Deserialize { .. } => "deserialize",
            EffectKind::Allocation { .. } => "allocation",
            EffectKind::DynamicExec { .. } => "dynamic_exec",
        }
    }

    /// `true` for effects that change the file system.
    pub(crate) fn mutates(&self) -> bool {
        matches!(
            self,
            EffectKind::FileWrite
                | EffectKind::FileCreate
                | EffectKind::FileDelete
                | EffectKind::Chmod
                | EffectKind::Link
                | EffectKind::Persistence
        )
    }

    /// `true` for effects whose target is a path.
    pub(crate) fn on_path(&self) -> bool {
        self.mutates() || matches!(self, EffectKind::FileRead | EffectKind::DirList)
    }
}

/// What an effect applies to, as far as the scan could resolve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "resolution", content = "value", rename_all = "snake_case")]
pub enum EffectTarget {
    /// One known value (a path, a program, a host).
    Resolved(String),
    /// One of several known values (brace expansion, a glob, branches).
    Set(Vec<String>),
    /// Computed at run time.
    Unknown,
}

impl EffectTarget {
    /// The known values (none when unknown).
    pub fn values(&self) -> &[String] {
        match self {
            EffectTarget::Resolved(v) => std::slice::from_ref(v),
            EffectTarget::Set(v) => v,
            EffectTarget::Unknown => &[],
        }
    }
}

/// One thing a script will do, at a position of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effect {
    /// What it does.
    #[serde(flatten)]
    pub kind: EffectKind,
    /// What it does it to.
    pub target: EffectTarget,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The code that does it (redacted and bounded in reports).
    pub evidence: String,
    /// How the scan judged this effect: the decision of the finding it gave rise to, after the
    /// policy (`allow` when none).
    #[serde(default)]
    pub verdict: SafetyDecision,
    /// The rule that judged it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
}

/// The host and port of a URL (`scheme://[user@]host[:port]/…`), or of a bare `host:port`.
pub(crate) fn url_host(url: &str) -> (Option<String>, Option<u16>) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
    let auth = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    if auth.is_empty() || auth.contains('$') {
        return (None, None);
    }
    match auth.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => {
            (Some(h.to_ascii_lowercase()), p.parse().ok())
        }
        _ => (Some(auth.to_ascii_lowercase()), None),
    }
}

/// `true` when `v` looks like a URL the tools would fetch.
pub(crate) fn is_url(v: &str) -> bool {
    [
        "http://", "https://", "ftp://", "ftps://", "sftp://", "scp://", "tftp://",
    ]
    .iter()
    .any(|p| v.len() > p.len() && v.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p)))
}

/// Well-known paths a glob is matched against: what `/e?c/passwd` or `/et*` may stand for on any
/// machine (the scan never lists the real file system).
const KNOWN_PATHS: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/group",
    "/etc/sudoers",
    "/etc/hosts",
    "/etc/crontab",
    "/etc/cron.d",
    "/etc/ssh",
    "/etc/ssh/sshd_config",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/profile",
    "/etc/environment",
    "/etc/ld.so.preload",
    "/root/.ssh",
    "/root/.bashrc",
    "/usr/bin",
    "/usr/lib",
    "/usr/local",
    "/var/log",
    "/var/lib",
    "/proc/self/environ",
    "~",
    "~/.ssh",
    "~/.ssh/id_rsa",
    "~/.ssh/id_ed25519",
    "~/.ssh/id_ecdsa",
    "~/.ssh/authorized_keys",
    "~/.aws",
    "~/.aws/credentials",
    "~/.bashrc",
    "~/.profile",
    "~/.bash_profile",
    "~/.zshrc",
    "~/.bash_history",
    "~/.kube/config",
    "~/.netrc",
    "~/.git-credentials",
    "~/.gnupg",
    "~/.docker/config.json",
    "~/.config",
];

/// `true` when `word` holds an unquoted glob character.
pub(crate) fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The well-known paths the glob `pattern` (absolute or `~/…`) matches, segment by segment.
pub(crate) fn glob_candidates(pattern: &str) -> Vec<String> {
    if !has_glob(pattern) || !(pattern.starts_with('/') || pattern.starts_with("~/")) {
        return Vec::new();
    }
    let segs: Vec<&str> = pattern.split('/').collect();
    KNOWN_PATHS
        .iter()
        .filter(|k| {
            let ks: Vec<&str> = if **k == "/" {
                vec!["", ""]
            } else {
                k.split('/').collect()
            };
            ks.len() == segs.len()
                && segs
                    .iter()
                    .zip(&ks)
                    .all(|(p, k)| glob_match(p.as_bytes(), k.as_bytes()))
                && **k != pattern
        })
        .map(|k| (*k).to_owned())
        .collect()
}

/// Shell glob match of one path segment: `*`, `?` and `[…]` (with `!`/`^` negation and ranges).
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some(pi);
                    mark = si;
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class_match(&p[pi..], s[si]) {
                        if ok {
                            pi += next;
                            si += 1;
                            continue;
                        }
                    } else if s[si] == b'[' {
                        pi += 1;
                        si += 1;
                        continue;
                    }
                }
                c if c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some(st) => {
                pi = st + 1;
                mark += 1;
                si = mark;
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

/// Whether `c` is in the class at the start of `p` (`[…]`), and the class's length.
fn class_match(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let end = p.iter().skip(2).position(|b| *b == b']')? + 2;
    let mut body = &p[1..end];
    let negate = matches!(body.first(), Some(b'!' | b'^'));
    if negate {
        body = &body[1..];
    }
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == b'-' {
            hit |= body[i] <= c && c <= body[i + 2];
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    Some((hit != negate, end + 1))
}

/// `true` for environment variables that hold credentials (`AWS_SECRET_ACCESS_KEY`,
/// `GITHUB_TOKEN`, `DB_PASSWORD`...), and `*` (the whole environment dumped).
pub fn is_secret_env(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    n == "*"
        || [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "APIKEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
            "CREDENTIAL",
            "AUTH",
            "SESSION_KEY",
        ]
        .iter()
        .any(|k| n.contains(k))
            && !n.contains("AUTHOR")
}

/// Expand `{a,b}` groups (not nested, at most 64 results) into the set of words they stand for.
pub(crate) fn brace_expand(word: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (word.find('{'), word.find('}')) else {
        return vec![word.to_owned()];
    };
    let inner = &word[open + 1..close.max(open + 1)];
    if close < open || !inner.contains(',') || inner.contains('{') {
        return vec![word.to_owned()];
    }
    let (pre, post) = (&word[..open], &word[close + 1..]);
    let mut out = Vec::new();
    for alt in inner.split(',') {
        for tail in brace_expand(post) {
            if out.len() >= 64 {
                return out;
            }
            out.push(format!("{pre}{alt}{tail}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_match_the_serialized_tag() {
        for k in [
            EffectKind::FileRead,
            EffectKind::DirList,
            EffectKind::Persistence,
            EffectKind::EnvRead { name: "X".into() },
            EffectKind::ProcessControl { target: "1".into() },
            EffectKind::HostInfo {
                what: "process list".into(),
            },
            EffectKind::Deserialize {
                format: "pickle".into(),
                source: DataSource::Network,
            },
            EffectKind::Allocation {
                bytes: Some(1 << 30),
            },
            EffectKind::Allocation { bytes: None },
            EffectKind::DynamicExec {
                form: "eval of built text".into(),
            },
        ] {
            let e = Effect {
                kind: k.clone(),
                target: EffectTarget::Unknown,
                line: 1,
                column: 1,
                evidence: String::new(),
                verdict: SafetyDecision::Allow,
                rule_id: None,
            };
            let v = serde_json::to_value(&e).expect("serializes");
            assert_eq!(v["kind"], k.name());
            // No field of a kind collides with the effect's own (`target`): it reads back.
            let back: Effect = serde_json::from_value(v).expect("reads back");
            assert_eq!(back, e);
        }
    }

    #[test]
    fn sizes_read_short() {
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(4096), "4.0 KiB");
        assert_eq!(human_bytes(1 << 30), "1.0 GiB");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(10 << 30), "10.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16777215.9 TiB");
    }

    #[test]
    fn payloads_that_run_code() {
        assert!(payload_runs_code("cos\nsystem\n(S'id'\ntR."));
        assert!(payload_runs_code("cposix\nsystem\n"));
        assert!(payload_runs_code("!!python/object/apply:os.system ['id']"));
        assert!(payload_runs_code("__import__('subprocess')"));
        assert!(!payload_runs_code("(dp0\nS'name'\np1\nS'ada'\n"));
        assert!(!payload_runs_code("the system works"));
        assert!(!payload_runs_code("print\nrun"));
        assert!(payload_runs_code("\u{8c}\u{5}posix\u{94}\u{8c}\u{6}system"));
        assert!(payload_runs_code(r"cos\nsystem\n(S'id'\ntR."));
    }

    #[test]
    fn url_prefixes_never_cut_a_character() {
        // Found by fuzzing: a multi-byte character across the length of a scheme.
        assert!(!is_url("//me\t\u{fffd}T"));
        assert!(!is_url("htt\u{fffd}://x"));
        assert!(is_url("HTTPS://example.com"));
    }

    #[test]
    fn hosts_of_urls() {
        assert_eq!(
            url_host("https://user@Example.com:8443/x?y"),
            (Some("example.com".into()), Some(8443))
        );
        assert_eq!(
            url_host("http://10.0.0.1/a"),
            (Some("10.0.0.1".into()), None)
        );
        assert_eq!(url_host("http://$HOST/a"), (None, None));
    }

    #[test]
    fn globs_stand_for_the_known_paths_they_match() {
        assert_eq!(glob_candidates("/e?c/passwd"), ["/etc/passwd"]);
        assert_eq!(glob_candidates("/et*"), ["/etc"]);
        assert_eq!(
            glob_candidates("/etc/[ps][ah]*"),
            ["/etc/passwd", "/etc/shadow"]
        );
        assert!(glob_candidates("/*").contains(&"/usr".to_owned()));
        assert_eq!(
            glob_candidates("~/.ssh/id_*"),
            ["~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.ssh/id_ecdsa"]
        );
        assert!(glob_candidates("/work/project/build/*").is_empty());
        assert!(glob_candidates("*").is_empty());
        assert!(glob_candidates("/etc/passwd").is_empty());
        assert!(!glob_match(b"[!e]tc", b"etc"));
    }

    #[test]
    fn credential_names_of_the_environment() {
        assert!(is_secret_env("AWS_SECRET_ACCESS_KEY"));
        assert!(is_secret_env("GITHUB_TOKEN"));
        assert!(is_secret_env("db_password"));
        assert!(!is_secret_env("HOME"));
        assert!(!is_secret_env("GIT_AUTHOR_NAME"));
    }

    #[test]
    fn braces_expand_to_the_set_of_words() {
        assert_eq!(
            brace_expand("/etc/{passwd,shadow}"),
            ["/etc/passwd", "/etc/shadow"]
        );
        assert_eq!(brace_expand("a{b"), ["a{b"]);
    }
}
