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
        /// The process id, name or pattern signalled.
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
    .any(|p| v.len() > p.len() && v[..p.len()].eq_ignore_ascii_case(p))
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
            let v = serde_json::to_value(Effect {
                kind: k.clone(),
                target: EffectTarget::Unknown,
                line: 1,
                column: 1,
                evidence: String::new(),
                verdict: SafetyDecision::Allow,
                rule_id: None,
            })
            .expect("serializes");
            assert_eq!(v["kind"], k.name());
        }
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
    fn braces_expand_to_the_set_of_words() {
        assert_eq!(
            brace_expand("/etc/{passwd,shadow}"),
            ["/etc/passwd", "/etc/shadow"]
        );
        assert_eq!(brace_expand("a{b"), ["a{b"]);
    }
}
