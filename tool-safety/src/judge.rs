//! Effects weighed against the workspace: where a script reads, writes, sends and signals.
//!
//! A path is placed once (workspace, temporary, read-only system, system, home, elsewhere) after
//! resolving it against the tracked working directory; each rule then looks at the places.

use crate::catalog::{finding, id};
use crate::decision::SafetyDecision;
use crate::effects::{
    human_bytes, is_secret_env, DataSource, Direction, Effect, EffectKind, EffectTarget,
    ALLOCATION_REVIEW_BYTES, EVERY_PROCESS, QUIET_HOST_INFO,
};
use crate::paths::{self, PathClass};
use crate::report::{RiskCategory, SafetyFinding};

/// What the judge knows of where the script runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Workspace<'a> {
    /// Workspace root (absolute), if known.
    pub(crate) root: Option<&'a str>,
    /// Working directory (absolute), if known.
    pub(crate) cwd: Option<&'a str>,
    /// The tool may reach the open world: network use alone is no finding.
    pub(crate) open_world: bool,
    /// Hosts network use may reach without review.
    pub(crate) allowed_hosts: &'a [String],
}

/// Where a path lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Workspace,
    Temp,
    /// System files every build reads (`/usr`, `/opt`, `/lib`, `/bin`).
    ReadOnlySystem,
    System,
    Home,
    Elsewhere,
}

const TEMP: &[&str] = &[
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd",
    "/dev/tty",
    "/dev/urandom",
    "/dev/random",
    "/proc/self",
];
const READ_ONLY_SYSTEM: &[&str] = &[
    "/usr",
    "/opt",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/snap",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/hostname",
    "/etc/timezone",
    "/etc/localtime",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/loadavg",
    "/proc/version",
];

fn under(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir || (path.starts_with(dir) && path[dir.len()..].starts_with('/')) || dir.is_empty()
}

/// Join `rel` onto `base` and fold `.` and `..` (never above `/`).
pub(crate) fn join_norm(base: &str, rel: &str) -> String {
    let full = if rel.starts_with('/') || base.is_empty() {
        rel.to_owned()
    } else {
        format!("{}/{rel}", base.trim_end_matches('/'))
    };
    let absolute = full.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in full.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            _ => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_owned()
    } else {
        joined
    }
}

impl Workspace<'_> {
    /// The absolute (or, with no known base, workspace-relative) form of `path`.
    pub(crate) fn resolve(&self, path: &str) -> String {
        if path.starts_with('~') {
            return path.to_owned();
        }
        let base = self.cwd.or(self.root).unwrap_or("");
        join_norm(base, path)
    }

    /// Where `path` (as the script names it) lies.
    pub(crate) fn place(&self, path: &str) -> Place {
        let p = self.resolve(path);
        if p.starts_with('~') {
            return Place::Home;
        }
        if !p.starts_with('/') {
            // Relative to an unknown base: inside unless it climbs out.
            return if p.starts_with("..") {
                Place::Elsewhere
            } else {
                Place::Workspace
            };
        }
        if let Some(root) = self.root {
            if under(&p, root) {
                return Place::Workspace;
            }
        }
        if TEMP.iter().any(|d| under(&p, d)) {
            return Place::Temp;
        }
        match paths::classify(&p) {
            PathClass::Home | PathClass::HomeSensitive => return Place::Home,
            PathClass::Root => return Place::System,
            _ => {}
        }
        if p.starts_with("/home/") || p.starts_with("/root") || p.starts_with("/Users/") {
            return Place::Home;
        }
        if READ_ONLY_SYSTEM.iter().any(|d| under(&p, d)) {
            return Place::ReadOnlySystem;
        }
        if matches!(
            paths::classify(&p),
            PathClass::SystemTop | PathClass::SystemSub
        ) {
            return Place::System;
        }
        if self.root.is_some() {
            Place::Elsewhere
        } else {
            // No workspace known: an absolute path outside system and home is the caller's.
            Place::Workspace
        }
    }
}

/// `true` for files whose reading alone is a leak: password hashes, keys, tokens.
pub(crate) fn is_sensitive(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    paths::is_credential_file(&p)
        || [
            "/etc/shadow",
            "/etc/gshadow",
            "/etc/sudoers",
            "/etc/master.passwd",
        ]
        .iter()
        .any(|s| {
            p.strip_prefix(s)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.']))
        })
        || (p.starts_with("/etc/ssh/") && p.contains("key") && !p.ends_with(".pub"))
        || p.ends_with("/.ssh")
        || (p.contains("/.ssh/id_") && !p.ends_with(".pub"))
        || p.ends_with("/.netrc")
        || p.ends_with(".pem") && (p.contains("private") || p.starts_with("/etc/"))
        || p.contains("/.aws/")
        || p.contains("/.kube/config")
        || p.contains("/.docker/config.json")
        || p.contains("/.config/gcloud")
        || p.contains("/.git-credentials")
        || p.ends_with("/.bash_history")
        || p.ends_with("/.pgpass")
        || (p.starts_with("/proc/") && p.ends_with("/environ"))
}

/// `true` for directories whose listing shows what is worth stealing: `/etc/ssh`, `/root`,
/// other users' homes, and the key and cloud credential directories of any home
/// (`~/.ssh`, `~/.aws`, `~/.gnupg`...), with a glob (`/root/*`) standing for its directory.
pub(crate) fn is_sensitive_dir(path: &str) -> bool {
    let mut p = path.to_ascii_lowercase();
    while let Some((dir, last)) = p.rsplit_once('/') {
        if !last.contains(['*', '?', '[']) && !last.is_empty() {
            break;
        }
        p = if dir.is_empty() {
            "/".to_owned()
        } else {
            dir.to_owned()
        };
        if p == "/" {
            break;
        }
    }
    let p = p.trim_end_matches('/');
    matches!(p, "/etc/ssh" | "/root" | "/home")
        || p.starts_with("/root/")
        || [
            ".ssh",
            ".aws",
            ".gnupg",
            ".kube",
            ".docker",
            ".config/gcloud",
            ".password-store",
        ]
        .iter()
        .any(|d| p.ends_with(&format!("/{d}")) || p == format!("~/{d}"))
        || is_sensitive(p)
}

/// What a network effect `sends` when the data came from reading a file outside the workspace
/// or a sensitive one.
pub(crate) const CONTENT_OF_OUTSIDE: &str = "content of a file outside the workspace";

fn values(t: &EffectTarget) -> &[String] {
    t.values()
}

/// A finding the judge calls for: at its effect's position, with the effect's index.
pub(crate) type Judged = (SafetyFinding, Option<(u32, u32)>, usize);

/// The findings the effects call for, each with the position of its effect. Paths under
/// `allow` (the policy's allow-listed paths) are not judged.
pub(crate) fn judge(effects: &[Effect], ws: &Workspace<'_>, allow: &[String]) -> Vec<Judged> {
    let mut out: Vec<Judged> = Vec::new();
    let mut downloaded: Vec<String> = Vec::new();
    for e in effects {
        // Files written by the same operation that downloads are downloaded files.
        if let EffectKind::Network {
            direction: Direction::Download,
            ..
        } = e.kind
        {
            for w in effects.iter().filter(|w| {
                w.line == e.line && w.column == e.column && w.kind == EffectKind::FileWrite
            }) {
                downloaded.extend(values(&w.target).iter().map(|v| ws.resolve(v)));
            }
        }
    }
    for (i, e) in effects.iter().enumerate() {
        let at = |f: SafetyFinding, e: &Effect| (f, Some((e.line, e.column)), i);
        match &e.kind {
            // A job installed with `at`, `batch` or `crontab`: it lands in the system's spool.
            EffectKind::Persistence
                if values(&e.target)
                    .iter()
                    .any(|v| matches!(v.as_str(), "at" | "batch" | "crontab")) =>
            {
                out.push(at(finding(id::EFFECT_WRITE_OUTSIDE, &e.evidence), e));
            }
            k if k.on_path() => {
                for v in values(&e.target) {
                    if paths::allowlisted(&ws.resolve(v), allow) {
                        continue;
                    }
                    let place = ws.place(v);
                    let resolved = ws.resolve(v);
                    let ev = format!("{} {resolved}", e.evidence);
                    if k.mutates() {
                        match place {
                            Place::System | Place::Home => {
                                out.push(at(finding(id::EFFECT_WRITE_OUTSIDE, &ev), e));
                            }
                            // Software installs (`/usr/local`, `/opt`) are a human's call.
                            Place::ReadOnlySystem | Place::Elsewhere => {
                                out.push(at(finding(id::EFFECT_OUTSIDE_WORKSPACE, &ev), e));
                            }
                            Place::Workspace | Place::Temp => {}
                        }
                    } else {
                        let listing = *k == EffectKind::DirList;
                        if !listing && (is_sensitive(&resolved) || is_sensitive(v)) {
                            out.push(at(finding(id::EFFECT_SENSITIVE_READ, &ev), e));
                        } else if (ws.root.is_some()
                            || listing && (is_sensitive(&resolved) || is_sensitive_dir(&resolved)))
                            && matches!(place, Place::System | Place::Home | Place::Elsewhere)
                        {
                            out.push(at(finding(id::EFFECT_OUTSIDE_WORKSPACE, &ev), e));
                        }
                    }
                }
            }
            EffectKind::Network {
                host,
                direction,
                sends,
                ..
            } => {
                let leaks = sends.as_deref().is_some_and(|s| {
                    s == CONTENT_OF_OUTSIDE
                        || is_sensitive(&ws.resolve(s))
                        || !matches!(ws.place(s), Place::Workspace | Place::Temp)
                });
                let local = host.as_deref().is_some_and(|h| {
                    matches!(h, "localhost" | "127.0.0.1" | "::1" | "[::1]" | "0.0.0.0")
                });
                if *direction == Direction::Upload && leaks {
                    out.push(at(finding(id::EFFECT_EXFIL, &e.evidence), e));
                } else if !local
                    && (!ws.open_world || *direction == Direction::Both)
                    && !host.as_deref().is_some_and(|h| {
                        ws.allowed_hosts.iter().any(|a| {
                            h == a || h.strip_suffix(a.as_str()).is_some_and(|p| p.ends_with('.'))
                        })
                    })
                {
                    out.push(at(finding(id::EFFECT_NETWORK, &e.evidence), e));
                }
            }
            EffectKind::ProcessSpawn => {
                for v in values(&e.target) {
                    if downloaded.contains(&ws.resolve(v)) {
                        out.push(at(finding(id::EFFECT_DOWNLOAD_EXEC, &e.evidence), e));
                    }
                }
            }
            EffectKind::EnvRead { name } if is_secret_env(name) => {
                out.push(at(finding(id::EFFECT_ENV_SECRET, &e.evidence), e));
            }
            EffectKind::ProcessControl { target } => {
                let t = target.trim_start_matches('-');
                let all = target == "-1"
                    || t == "1"
                    || target == "killall5"
                    || target.starts_with(EVERY_PROCESS);
                let rule = if all {
                    id::EFFECT_KILL_ALL
                } else {
                    id::EFFECT_KILL
                };
                out.push(at(finding(rule, &e.evidence), e));
            }
            EffectKind::HostInfo { what } if !QUIET_HOST_INFO.contains(&what.as_str()) => {
                let ev = format!("reads {what}: {}", e.evidence);
                out.push(at(
                    finding(id::HOST_INFO, &ev).with_metadata("what", what),
                    e,
                ));
            }
            EffectKind::Deserialize { format, source } => {
                let rule = match source {
                    DataSource::Network | DataSource::LiteralCode => id::DESERIALIZE_UNTRUSTED,
                    DataSource::Literal | DataSource::File | DataSource::Unknown => id::DESERIALIZE,
                };
                let f = finding(rule, &e.evidence)
                    .with_metadata("format", format)
                    .with_metadata("source", source.as_str());
                out.push(at(f, e));
            }
            EffectKind::Allocation { bytes }
                if bytes.is_none_or(|b| b >= ALLOCATION_REVIEW_BYTES) =>
            {
                let size = bytes.map_or_else(|| "unbounded".to_owned(), human_bytes);
                let ev = format!("allocates {size}: {}", e.evidence);
                out.push(at(
                    finding(id::ALLOC_LARGE, &ev).with_metadata("size", &size),
                    e,
                ));
            }
            EffectKind::DynamicExec { form } => {
                let ev = format!("{form}: {}", e.evidence);
                out.push(at(
                    finding(id::DYNAMIC_EXEC, &ev).with_metadata("form", form),
                    e,
                ));
            }
            _ => {}
        }
    }
    sharpen_dynamic(effects, &mut out);
    out
}

/// Code the scan cannot see is denied where the same script also does something the judge
/// reviews or denies: what is hidden may be what makes the rest harmful.
fn sharpen_dynamic(effects: &[Effect], out: &mut [Judged]) {
    let dynamic = |i: usize| {
        effects
            .get(i)
            .is_some_and(|e| matches!(e.kind, EffectKind::DynamicExec { .. }))
    };
    let sensitive = out
        .iter()
        .any(|(f, _, i)| !dynamic(*i) && f.decision >= SafetyDecision::NeedsHumanReview);
    if !sensitive {
        return;
    }
    for (f, _, i) in out.iter_mut() {
        if dynamic(*i) && f.rule_id == id::DYNAMIC_EXEC.as_str() {
            let mut g = finding(id::DYNAMIC_EXEC_SENSITIVE, &f.evidence);
            g.metadata = std::mem::take(&mut f.metadata);
            *f = g;
        }
    }
}

/// `true` for the findings of code the scan cannot see (`DYNAMIC-EXEC`, sharpened or not).
pub(crate) fn is_hidden_code(rule_id: &str) -> bool {
    rule_id == id::DYNAMIC_EXEC.as_str() || rule_id == id::DYNAMIC_EXEC_SENSITIVE.as_str()
}

/// [`sharpen_dynamic`] over every finding of the script, the built-in rules' too: a
/// `DYNAMIC-EXEC` is denied where any other finding asks at least for review. Findings that only
/// say code is hidden (code execution, native calls, obfuscated names: `BASH-INDIRECT-EXEC`,
/// `BASH-EVAL`, `PY-EVAL`, `PY-NATIVE`, beside the `DYNAMIC-EXEC` they describe) are not an
/// effect and do not count. The effects judged by a sharpened finding take its rule and verdict.
pub(crate) fn sharpen_hidden(findings: &mut [SafetyFinding], effects: &mut [Effect]) {
    let sensitive = findings.iter().any(|f| {
        f.decision >= SafetyDecision::NeedsHumanReview
            && !is_hidden_code(&f.rule_id)
            && !matches!(
                f.category,
                RiskCategory::CodeExecution | RiskCategory::NativeCode | RiskCategory::Obfuscation
            )
    });
    if !sensitive {
        return;
    }
    let plain = id::DYNAMIC_EXEC.as_str();
    let sharp = id::DYNAMIC_EXEC_SENSITIVE.as_str();
    for f in findings.iter_mut().filter(|f| f.rule_id == plain) {
        let mut g = finding(id::DYNAMIC_EXEC_SENSITIVE, &f.evidence);
        g.metadata = std::mem::take(&mut f.metadata);
        g.evidence_redacted = f.evidence_redacted;
        (g.line, g.column) = (f.line, f.column);
        for e in effects.iter_mut() {
            if e.rule_id.as_deref() == Some(plain)
                && f.line == Some(e.line)
                && f.column == Some(e.column)
            {
                e.rule_id = Some(sharp.to_owned());
                e.verdict = e.verdict.max(g.decision);
            }
        }
        *f = g;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fold_against_the_base() {
        assert_eq!(join_norm("/w/a", "../../etc/passwd"), "/etc/passwd");
        assert_eq!(join_norm("/", "../.."), "/");
        assert_eq!(join_norm("", "../x"), "../x");
        assert_eq!(join_norm("", "./a/./b"), "a/b");
    }

    #[test]
    fn places_against_a_workspace() {
        let ws = Workspace {
            root: Some("/w"),
            cwd: Some("/w/src"),
            ..Workspace::default()
        };
        assert_eq!(ws.place("main.rs"), Place::Workspace);
        assert_eq!(ws.place("../../etc/passwd"), Place::System);
        assert_eq!(ws.place("/tmp/x"), Place::Temp);
        assert_eq!(ws.place("~/.bashrc"), Place::Home);
        assert_eq!(ws.place("/data/x"), Place::Elsewhere);
        assert_eq!(ws.place("/usr/include/stdio.h"), Place::ReadOnlySystem);
    }

    fn effect(kind: EffectKind) -> Effect {
        Effect {
            kind,
            target: EffectTarget::Unknown,
            line: 1,
            column: 1,
            evidence: "x".into(),
            verdict: SafetyDecision::Allow,
            rule_id: None,
        }
    }

    fn rules(effects: &[Effect]) -> Vec<String> {
        judge(effects, &Workspace::default(), &[])
            .into_iter()
            .map(|(f, _, _)| f.rule_id)
            .collect()
    }

    #[test]
    fn hidden_code_is_denied_beside_a_sensitive_effect() {
        let dynamic = effect(EffectKind::DynamicExec {
            form: "eval of built text".into(),
        });
        assert_eq!(rules(std::slice::from_ref(&dynamic)), ["DYNAMIC-EXEC"]);
        let host = effect(EffectKind::HostInfo {
            what: "process list".into(),
        });
        assert_eq!(
            rules(&[dynamic, host]),
            ["DYNAMIC-EXEC-SENSITIVE", "HOST-INFO"]
        );
    }

    #[test]
    fn decoders_of_untrusted_data_are_denied() {
        let de = |source| {
            effect(EffectKind::Deserialize {
                format: "pickle".into(),
                source,
            })
        };
        assert_eq!(rules(&[de(DataSource::File)]), ["DESERIALIZE"]);
        assert_eq!(rules(&[de(DataSource::Literal)]), ["DESERIALIZE"]);
        assert_eq!(rules(&[de(DataSource::Network)]), ["DESERIALIZE-UNTRUSTED"]);
        assert_eq!(
            rules(&[de(DataSource::LiteralCode)]),
            ["DESERIALIZE-UNTRUSTED"]
        );
    }

    #[test]
    fn large_allocations_are_reviewed_with_their_size() {
        let alloc = |bytes| effect(EffectKind::Allocation { bytes });
        assert!(rules(&[alloc(Some(1 << 20))]).is_empty());
        assert_eq!(rules(&[alloc(None)]), ["ALLOC-LARGE"]);
        let judged = judge(&[alloc(Some(2 << 30))], &Workspace::default(), &[]);
        assert_eq!(judged[0].0.metadata["size"], "2.0 GiB");
    }

    #[test]
    fn killing_every_process_is_denied() {
        let kill = |t: &str| {
            effect(EffectKind::ProcessControl {
                target: t.to_owned(),
            })
        };
        assert_eq!(rules(&[kill("sshd")]), ["EFFECT-KILL"]);
        assert_eq!(
            rules(&[kill(&crate::effects::every_process(Some("sshd")))]),
            ["EFFECT-KILL-ALL"]
        );
    }

    #[test]
    fn network_is_reviewed_unless_open_world() {
        let net = effect(EffectKind::Network {
            url: Some("https://example.com/x".into()),
            host: Some("example.com".into()),
            port: None,
            direction: Direction::Download,
            sends: None,
        });
        assert_eq!(rules(std::slice::from_ref(&net)), ["EFFECT-NETWORK"]);
        let open = Workspace {
            open_world: true,
            ..Workspace::default()
        };
        assert!(judge(&[net], &open, &[]).is_empty());
    }
}
