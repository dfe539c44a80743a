//! A pids cgroup per confined process tree: the process limit that also binds root.
//!
//! `RLIMIT_NPROC` counts the processes of a user and the kernel exempts uid 0, so a fork bomb run
//! by a root executor is not stopped by it. A cgroup's `pids.max` counts the processes in the
//! cgroup, whoever they run as. Each spare of the helper (see [`crate::helper`])
//! creates a child cgroup of its own in the pids hierarchy (cgroup v2 when the `pids` controller
//! is delegated to children, else cgroup v1's `pids` hierarchy), named after its pid (nothing a
//! caller chooses), and moves itself into it before it forks anything, so every descendant is
//! counted; it does so before a request comes, because a migration between cgroups costs
//! milliseconds. Its init sets `pids.max` from the program's spec. After the tree is gone the helper's
//! zygote removes the cgroup; cgroups of processes that died before (killed) are swept.
//!
//! Where no writable pids hierarchy exists (no root, no delegation, no controller), nothing is
//! created and the process limit is `RLIMIT_NPROC` alone: [`available`] says which, and the
//! enforcement label carries `+pids` only when the cgroup was joined.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Prefix of every cgroup this crate creates.
const PREFIX: &str = "tool-sandbox-";

/// The directory new cgroups are created in, probed once per process.
pub(crate) fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = find_base(
            &std::fs::read_to_string("/proc/self/mountinfo").ok()?,
            &std::fs::read_to_string("/proc/self/cgroup").ok()?,
        )?;
        sweep(&dir);
        Some(dir)
    })
    .as_deref()
}

/// Whether confined programs get a pids cgroup on this machine (for `doctor` and probes).
pub fn available() -> bool {
    base().is_some()
}

/// The directory this crate makes its cgroups in (`tool-sandbox-PID-0`, one per spare of the helper),
/// if this machine offers a writable pids hierarchy.
pub fn hierarchy() -> Option<&'static Path> {
    base()
}

/// The cgroup directory of the process tree kept by `owner` (a spare's pid).
pub(crate) fn dir_of_owner(base: &Path, owner: u32) -> PathBuf {
    base.join(format!("{PREFIX}{owner}-0"))
}

/// Creates the calling process's own cgroup under `base` and moves it in (done by a spare
/// spare before its init takes a request). `pids.max` is left at `max` until the spec says.
pub(crate) fn create_and_join(base: &Path) -> std::io::Result<PathBuf> {
    let dir = dir_of_owner(base, std::process::id());
    std::fs::create_dir(&dir)?;
    if let Err(e) = join(&dir) {
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(dir)
}

/// Sets the cap of the cgroup at `dir`.
pub(crate) fn set_max(dir: &Path, max: u64) -> std::io::Result<()> {
    std::fs::write(dir.join("pids.max"), max.to_string())
}

/// Moves the calling process into the cgroup at `dir` (done by a spare, before it forks).
pub(crate) fn join(dir: &Path) -> std::io::Result<()> {
    // `0` is the writing process, in cgroup v1 and v2 alike.
    std::fs::write(dir.join("cgroup.procs"), "0")
}

/// Removes cgroups left by processes of this crate that died before they could clean up (only
/// empty ones can be removed; a live tree keeps its cgroup).
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if owner != std::process::id() && !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// The writable directory of this process's own cgroup in a pids hierarchy: cgroup v2 when the
/// `pids` controller is enabled for its children, else the cgroup v1 `pids` hierarchy.
fn find_base(mountinfo: &str, own: &str) -> Option<PathBuf> {
    let mounts: Vec<Mount> = mountinfo.lines().filter_map(Mount::parse).collect();
    let v2 = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .and_then(|path| {
            let m = mounts.iter().find(|m| m.fstype == "cgroup2")?;
            let dir = m.dir_of(path)?;
            let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
            enabled
                .split_whitespace()
                .any(|c| c == "pids")
                .then_some(dir)
        });
    let v1 = || {
        let path = own.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers.split(',').any(|c| c == "pids").then_some(path)
        })?;
        let m = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "pids"))?;
        m.dir_of(path)
    };
    v2.or_else(v1).filter(|dir| writable(dir))
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
        && dir.join("cgroup.procs").exists()
}

/// One line of `/proc/self/mountinfo` (only what is needed here).
struct Mount {
    root: String,
    mount_point: PathBuf,
    fstype: String,
    options: String,
}

impl Mount {
    /// `36 35 98:0 /root /mnt rw,noatime master:1 - cgroup cgroup rw,pids`
    fn parse(line: &str) -> Option<Mount> {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let mut after = after.split(' ');
        let fstype = after.next()?.to_owned();
        let _source = after.next()?;
        let options = after.next().unwrap_or("").to_owned();
        Some(Mount {
            root: unescape(fields.get(3)?),
            mount_point: PathBuf::from(unescape(fields.get(4)?)),
            fstype,
            options,
        })
    }

    /// Where the cgroup at `path` (as `/proc/self/cgroup` names it) lies under this mount.
    fn dir_of(&self, path: &str) -> Option<PathBuf> {
        let rel = if self.root == "/" {
            path
        } else {
            path.strip_prefix(self.root.as_str())?
        };
        let rel = rel.trim_start_matches('/');
        if rel.split('/').any(|c| c == "..") {
            return None;
        }
        Some(if rel.is_empty() {
            self.mount_point.clone()
        } else {
            self.mount_point.join(rel)
        })
    }
}

/// Mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let code = rest
            .get(i + 1..i + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(c) => {
                out.push(c as char);
                rest = &rest[i + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
36 30 0:32 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
40 30 0:33 /sub /mnt/my\\040pids rw - cgroup cgroup rw,pids";

    #[test]
    fn mountinfo_lines_are_parsed_and_unescaped() {
        let mounts: Vec<Mount> = MOUNTS.lines().filter_map(Mount::parse).collect();
        assert_eq!(mounts.len(), 5);
        assert_eq!(mounts[2].fstype, "cgroup");
        assert_eq!(mounts[2].options, "rw,pids");
        assert_eq!(mounts[4].mount_point, PathBuf::from("/mnt/my pids"));
        assert_eq!(
            mounts[4].dir_of("/sub/a/b"),
            Some(PathBuf::from("/mnt/my pids/a/b"))
        );
        assert_eq!(mounts[4].dir_of("/other"), None, "outside the mount's root");
        assert_eq!(mounts[2].dir_of("/../x"), None, "no climbing out");
        assert_eq!(
            mounts[2].dir_of("/"),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
    }

    #[test]
    fn the_v1_pids_hierarchy_is_found_from_the_own_cgroup_line() {
        // Only the path logic: the directory must also be writable, which a made-up path is not.
        let mounts: Vec<Mount> = MOUNTS.lines().filter_map(Mount::parse).collect();
        let m = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "pids"))
            .expect("pids mount");
        assert_eq!(
            m.dir_of("/job/7"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/job/7"))
        );
        assert_eq!(
            find_base("garbage", "8:pids:/"),
            None,
            "no mount, no cgroup: nothing is created"
        );
    }
}
