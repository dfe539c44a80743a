//! Classifying paths: root, home, system directories, credential files, start-up files.

use std::borrow::Cow;

/// What a path points at, from the scanner's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum PathClass {
    /// `/` (or `/*`).
    Root,
    /// A home directory itself (`~`, `$HOME`, `/root`, `/home/x`).
    Home,
    /// A sensitive directory right under home (`~/.ssh`, `~/.aws`, `~/.gnupg`, `~/.config`).
    HomeSensitive,
    /// A top-level system directory (`/etc`, `/usr`, `/var`, ...).
    SystemTop,
    /// Something under a system directory.
    SystemSub,
    /// Anything else (workspace, /tmp, relative paths).
    #[default]
    Other,
}

const SYSTEM_TOP: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/local",
    "/usr/local/bin",
    "/usr/share",
    "/usr/include",
    "/var/lib",
    "/var/log",
    "/var/spool",
    "/System",
    "/Library",
    "/Applications",
    "/Users",
    "/private",
    "/private/etc",
    "/Volumes",
];

/// Under a system directory but harmless scratch space.
const SCRATCH: &[&str] = &[
    "/var/tmp",
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/fd",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
    "/private/tmp",
    "/run/user",
];

const HOME_SENSITIVE: &[&str] = &[
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config",
    "~/.kube",
    "~/.docker",
];

/// `true` when [`normalize`] would return `path` unchanged (most arguments are plain words).
fn is_normal(path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    if path.trim().len() != path.len() || path.starts_with('$') {
        return false;
    }
    let body = path.strip_prefix('/').unwrap_or(path);
    if body.is_empty() {
        return false;
    }
    let mut last = "";
    for seg in body.split('/') {
        if matches!(seg, "" | "." | "..") {
            return false;
        }
        last = seg;
    }
    !matches!(last, "*" | ".*" | "{*,.*}")
}

/// Lexically normalize: `$HOME`/`${HOME}` to `~`, collapse `//`, `.` and `..`, drop trailing `/`,
/// `/*` and `/.`. Relative paths stay relative.
pub(crate) fn normalize(path: &str) -> Cow<'_, str> {
    if is_normal(path) {
        return Cow::Borrowed(path);
    }
    Cow::Owned(normalize_owned(path))
}

fn normalize_owned(path: &str) -> String {
    let mut p = path.trim().to_owned();
    for home in ["${HOME}", "$HOME", "$home"] {
        if let Some(rest) = p.strip_prefix(home) {
            p = format!("~{rest}");
        }
    }
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != ".." && *l != "~") {
                    parts.pop();
                } else if !absolute {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    // A trailing glob over a directory deletes the directory's contents: treat as the directory.
    while parts
        .last()
        .is_some_and(|l| matches!(*l, "*" | ".*" | "{*,.*}"))
    {
        parts.pop();
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

fn under(path: &str, dir: &str) -> bool {
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// Classify a path (already or not yet normalized).
pub(crate) fn classify(path: &str) -> PathClass {
    let p = normalize(path);
    if p == "/" {
        return PathClass::Root;
    }
    if p == "~" || (p.starts_with('~') && !p.contains('/')) {
        return PathClass::Home;
    }
    if p == "/root"
        || (p.starts_with("/home/") && p.matches('/').count() == 2)
        || (p.starts_with("/Users/") && p.matches('/').count() == 2)
    {
        return PathClass::Home;
    }
    if HOME_SENSITIVE.iter().any(|h| p == *h) {
        return PathClass::HomeSensitive;
    }
    if !p.starts_with('/') {
        return PathClass::Other;
    }
    if SCRATCH.iter().any(|s| under(&p, s)) {
        return PathClass::Other;
    }
    if SYSTEM_TOP.contains(&&*p) {
        return PathClass::SystemTop;
    }
    // Home directories of other users are system-owned territory, the user's own is not.
    if p.starts_with("/home/") || p.starts_with("/Users/") {
        return PathClass::Other;
    }
    if SYSTEM_TOP.iter().any(|s| under(&p, s)) {
        return PathClass::SystemSub;
    }
    PathClass::Other
}

/// `true` when deleting or chmod-ing this path recursively wrecks the machine or the user.
pub(crate) fn is_catastrophic(class: PathClass) -> bool {
    matches!(
        class,
        PathClass::Root | PathClass::Home | PathClass::HomeSensitive | PathClass::SystemTop
    )
}

/// `true` when the path is under home (`~/...`, `/root/...`, `/home/x/...`).
fn home_relative(p: &str) -> Option<&str> {
    if let Some(rest) = p.strip_prefix("~/") {
        return Some(rest);
    }
    if let Some(rest) = p.strip_prefix("/root/") {
        return Some(rest);
    }
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = p.strip_prefix(base) {
            return rest.split_once('/').map(|(_, r)| r);
        }
    }
    None
}

/// Shell start-up and login files, and autostart locations, under home.
pub(crate) fn is_startup_file(path: &str) -> bool {
    let p = normalize(path);
    let Some(rel) = home_relative(&p) else {
        return false;
    };
    const FILES: &[&str] = &[
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".inputrc",
        ".config/fish/config.fish",
        ".xprofile",
        ".xinitrc",
        ".pam_environment",
    ];
    FILES.contains(&rel)
        || rel.starts_with(".config/autostart/")
        || rel.starts_with(".config/systemd/")
}

/// `authorized_keys` (anywhere).
pub(crate) fn is_authorized_keys(path: &str) -> bool {
    let b = basename(path);
    b == "authorized_keys" || b == "authorized_keys2"
}

/// Cron tables and directories.
pub(crate) fn is_cron_path(path: &str) -> bool {
    let p = normalize(path);
    p.starts_with("/etc/cron")
        || p == "/etc/anacrontab"
        || under(&p, "/var/spool/cron")
        || under(&p, "/var/spool/cron/crontabs")
        || under(&p, "/etc/periodic")
}

/// Shell history files.
pub(crate) fn is_history_file(path: &str) -> bool {
    matches!(
        basename(path),
        ".bash_history" | ".zsh_history" | ".history" | ".sh_history" | ".python_history"
    )
}

/// Files that hold credentials or private keys.
pub(crate) fn is_credential_file(path: &str) -> bool {
    let p = normalize(path.trim_start_matches(['@', '<']));
    let b = basename(&p);
    if (b.starts_with("id_rsa")
        || b.starts_with("id_ed25519")
        || b.starts_with("id_ecdsa")
        || b.starts_with("id_dsa"))
        && !b.ends_with(".pub")
    {
        return true;
    }
    if matches!(
        b,
        ".netrc"
            | "_netrc"
            | ".pgpass"
            | ".git-credentials"
            | ".pypirc"
            | "shadow"
            | "gshadow"
            | ".npmrc"
    ) && ((b != "shadow" && b != "gshadow") || p.starts_with("/etc/"))
    {
        return true;
    }
    const PARTS: &[&str] = &[
        ".aws/credentials",
        ".aws/config",
        ".docker/config.json",
        ".kube/config",
        ".gnupg/",
        ".config/gcloud/",
        ".azure/",
        "/etc/sudoers",
        ".vault-token",
    ];
    PARTS.iter().any(|part| p.contains(part)) || p.ends_with("/.gnupg") || p == "~/.ssh"
}

/// `.env` files: only a credential when sent somewhere.
pub(crate) fn is_dotenv(path: &str) -> bool {
    let b = basename(path.trim_start_matches('@'));
    b == ".env" || b.starts_with(".env.")
}

/// Block devices and kernel memory.
pub(crate) fn is_disk_device(path: &str) -> bool {
    let p = normalize(path);
    let Some(dev) = p.strip_prefix("/dev/") else {
        return false;
    };
    const PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "loop", "md", "dm-", "mapper/",
        "sr", "mem", "kmem", "port", "nbd", "zd",
    ];
    PREFIXES.iter().any(|x| dev.starts_with(x))
}

/// `/dev/tcp/..` and `/dev/udp/..`: bash's network pseudo-files.
pub(crate) fn is_dev_net(text: &str) -> bool {
    text.contains("/dev/tcp/") || text.contains("/dev/udp/")
}

pub(crate) fn basename(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    p.rsplit('/').next().unwrap_or(p)
}

/// `true` when `path` lies under one of the allowlisted directories.
pub(crate) fn allowlisted(path: &str, allow: &[String]) -> bool {
    let p = normalize(path);
    allow.iter().any(|a| under(&p, &normalize(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_roots_homes_and_system_paths() {
        for p in ["/", "/*", "//", "/.", "/tmp/../", "/usr/.."] {
            assert_eq!(classify(p), PathClass::Root, "{p}");
        }
        for p in ["~", "~/", "$HOME", "${HOME}/*", "/root", "/home/alice"] {
            assert_eq!(classify(p), PathClass::Home, "{p}");
        }
        assert_eq!(classify("/etc"), PathClass::SystemTop);
        assert_eq!(classify("/etc/nginx/x.conf"), PathClass::SystemSub);
        assert_eq!(classify("/tmp/build"), PathClass::Other);
        assert_eq!(classify("/var/tmp/x"), PathClass::Other);
        assert_eq!(classify("target"), PathClass::Other);
        assert_eq!(classify("~/.ssh"), PathClass::HomeSensitive);
        assert_eq!(classify("/home/alice/project/target"), PathClass::Other);
    }

    #[test]
    fn fast_path_agrees_with_full_normalization() {
        for p in [
            "",
            "/",
            "//",
            "/.",
            "a",
            "a/b",
            "/a/b",
            "a/",
            "/a/",
            "./a",
            "a/./b",
            "a/../b",
            "../a",
            "~",
            "~/",
            "~/.ssh",
            "$HOME",
            "${HOME}/x",
            "$home/.bashrc",
            " /etc",
            "/etc ",
            "/tmp/*",
            "/tmp/.*",
            "/tmp/{*,.*}",
            "*",
            ".*",
            "a//b",
            "/dev/tcp/1.2.3.4/80",
            "-rf",
            "x=1",
        ] {
            assert_eq!(normalize(p), normalize_owned(p), "{p:?}");
            if is_normal(p) {
                assert_eq!(normalize_owned(p), p, "{p:?} is not already normal");
            }
        }
    }

    #[test]
    fn recognizes_sensitive_files() {
        assert!(is_credential_file("~/.ssh/id_rsa"));
        assert!(!is_credential_file("~/.ssh/id_rsa.pub"));
        assert!(is_credential_file("@/home/u/.aws/credentials"));
        assert!(is_credential_file("/etc/shadow"));
        assert!(!is_credential_file("src/shadow.rs"));
        assert!(is_startup_file("$HOME/.bashrc"));
        assert!(!is_startup_file("dotfiles/.bashrc"));
        assert!(is_disk_device("/dev/sda1"));
        assert!(!is_disk_device("/dev/null"));
    }
}
