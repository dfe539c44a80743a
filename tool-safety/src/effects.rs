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
