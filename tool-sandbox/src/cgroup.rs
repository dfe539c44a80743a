//! A pids cgroup and a memory cgroup per confined process tree: the process limit that also binds
//! root, and a memory bound over all of a run's processes.
//!
//! `RLIMIT_NPROC` counts the processes of a user and the kernel exempts uid 0, so a fork bomb run
//! by a root executor is not stopped by it. A cgroup's `pids.max` counts the processes in the
//! cgroup, whoever they run as. `RLIMIT_AS` bounds one process; a tree of processes each under it
//! can still take the machine's memory, and a memory cgroup bounds them together (page cache and
//! tmpfs pages of the run included).
//!
//! Each spare of the helper (see [`crate::helper`]) creates a child cgroup of its own in each
//! hierarchy (cgroup v2 when the controllers are delegated to children, else cgroup v1's `pids`
//! and `memory` hierarchies), named after its pid (nothing a caller chooses), and moves itself into
//! them before it forks anything, so every descendant is counted; it does so before a request
//! comes, because a migration between cgroups costs milliseconds. It keeps the control files
//! open (`Tree`), since the program's minimal root has no `/sys`. Its init sets `pids.max` and
//! the memory limit from the program's spec, and reads after the program ended whether either
//! was hit. After the tree is gone the helper's zygote removes the cgroups; cgroups of processes
//! that died before (killed) are swept.
//!
//! Where no writable hierarchy exists for a controller (no root, no delegation, no controller),
//! nothing is created for it: [`available`] and [`memory_available`] say which, and the
//! enforcement label carries `+pids` and `+mem` only for the cgroups that were joined.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Prefix of every cgroup this crate creates.
const PREFIX: &str = "tool-sandbox-";

/// Which cgroup version a hierarchy is: the memory controller's files differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

/// The directories new cgroups are created in, per controller, probed once per process.
#[derive(Debug, Default)]
pub(crate) struct Bases {
    pub(crate) pids: Option<PathBuf>,
    pub(crate) memory: Option<(PathBuf, Version)>,
}

impl Bases {
    /// Every base directory, once (cgroup v2 holds both controllers in one).
    pub(crate) fn dirs(&self) -> Vec<&Path> {
        let mut dirs: Vec<&Path> = Vec::new();
        for dir in [
            self.pids.as_deref(),
            self.memory.as_ref().map(|(d, _)| d.as_path()),
        ]
        .into_iter()
        .flatten()
        {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs
    }

    fn is_empty(&self) -> bool {
        self.pids.is_none() && self.memory.is_none()
    }
}

/// The bases of this machine, or `None` where no controller is writable.
pub(crate) fn bases() -> Option<&'static Bases> {
    static BASES: OnceLock<Bases> = OnceLock::new();
    let bases = BASES.get_or_init(|| {
        let (Ok(mountinfo), Ok(own)) = (
            std::fs::read_to_string("/proc/self/mountinfo"),
            std::fs::read_to_string("/proc/self/cgroup"),
        ) else {
            return Bases::default();
        };
        let bases = Bases {
            pids: find_base(&mountinfo, &own, "pids").map(|(dir, _)| dir),
            memory: find_base(&mountinfo, &own, "memory"),
        };
        for dir in bases.dirs() {
            sweep(dir);
        }
        bases
    });
    (!bases.is_empty()).then_some(bases)
}

/// Whether confined programs get a pids cgroup on this machine (for `doctor` and probes).
pub fn available() -> bool {
    bases().is_some_and(|b| b.pids.is_some())
}

/// Whether confined programs get a memory cgroup on this machine.
pub fn memory_available() -> bool {
    bases().is_some_and(|b| b.memory.is_some())
}

/// The directory this crate makes its pids cgroups in (`tool-sandbox-PID-0`, one per spare of the
/// helper), if this machine offers a writable pids hierarchy.
pub fn hierarchy() -> Option<&'static Path> {
    bases().and_then(|b| b.pids.as_deref())
}

/// The cgroup directory of the process tree kept by `owner` (a spare's pid) under `base`.
pub(crate) fn dir_of_owner(base: &Path, owner: u32) -> PathBuf {
    base.join(format!("{PREFIX}{owner}-0"))
}

/// A limit of the tree's cgroups that the run reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    /// The memory limit: the kernel killed a process of the tree.
    Memory,
    /// `pids.max`: a fork failed.
    Processes,
}

/// The open control files of one tree's cgroups (opened by the spare, used by its init after the
/// program's root replaced the host's).
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pids_max: Option<File>,
    pids_events: Option<File>,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1).
    memory_max: Option<File>,
    /// `memory.swap.max` (v2) or `memory.memsw.limit_in_bytes` (v1), where swap is accounted.
    swap_max: Option<(File, Version)>,
    /// `memory.events` (v2) or `memory.oom_control` (v1): both count `oom_kill`.
    memory_events: Option<File>,
}

impl Tree {
    /// Creates the calling process's own cgroups under `bases` and moves it in (done by a spare
    /// before its init takes a request). The limits are left at `max` until the spec says.
    pub(crate) fn create_and_join(bases: &Bases) -> std::io::Result<Tree> {
        let me = std::process::id();
        let mut tree = Tree::default();
        let mut made: Vec<PathBuf> = Vec::new();
        let result = (|| {
            for base in bases.dirs() {
                let dir = dir_of_owner(base, me);
                std::fs::create_dir(&dir)?;
                made.push(dir.clone());
                join(&dir)?;
            }
            let write = |dir: &Path, name: &str| File::options().write(true).open(dir.join(name));
            if let Some(base) = &bases.pids {
                let dir = dir_of_owner(base, me);
                tree.pids_max = Some(write(&dir, "pids.max")?);
                tree.pids_events = File::open(dir.join("pids.events")).ok();
            }
            if let Some((base, version)) = &bases.memory {
                let dir = dir_of_owner(base, me);
                let (max, swap, events) = match version {
                    Version::V2 => ("memory.max", "memory.swap.max", "memory.events"),
                    Version::V1 => (
                        "memory.limit_in_bytes",
                        "memory.memsw.limit_in_bytes",
                        "memory.oom_control",
                    ),
                };
                tree.memory_max = Some(write(&dir, max)?);
                tree.swap_max = write(&dir, swap).ok().map(|f| (f, *version));
                tree.memory_events = Some(File::open(dir.join(events))?);
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(tree),
            Err(e) => {
                for dir in made.iter().rev() {
                    let _ = std::fs::remove_dir(dir);
                }
                Err(e)
            }
        }
    }

    /// Whether the tree has a pids cgroup.
    pub(crate) fn has_pids(&self) -> bool {
        self.pids_max.is_some()
    }

    /// Whether the tree has a memory cgroup.
    pub(crate) fn has_memory(&self) -> bool {
        self.memory_max.is_some()
    }

    /// Sets the tree's process cap.
    pub(crate) fn set_pids_max(&mut self, max: u64) -> std::io::Result<()> {
        match &mut self.pids_max {
            Some(f) => f.write_all(max.to_string().as_bytes()),
            None => Ok(()),
        }
    }

    /// Sets the tree's memory bound, and keeps it from spilling into swap where swap is
    /// accounted.
    pub(crate) fn set_memory_max(&mut self, bytes: u64) -> std::io::Result<()> {
        let Some(max) = &mut self.memory_max else {
            return Ok(());
        };
        max.write_all(bytes.to_string().as_bytes())?;
        match &mut self.swap_max {
            // v2 counts swap apart from memory; v1 counts memory and swap together.
            Some((f, Version::V2)) => f.write_all(b"0"),
            Some((f, Version::V1)) => f.write_all(bytes.to_string().as_bytes()),
            None => Ok(()),
        }
    }

    /// The limits the tree reached so far.
    pub(crate) fn hits(&mut self) -> Vec<Hit> {
        let mut hits = Vec::new();
        if self
            .memory_events
            .as_mut()
            .and_then(|f| counter(f, "oom_kill"))
            .is_some_and(|n| n > 0)
        {
            hits.push(Hit::Memory);
        }
        if self
            .pids_events
            .as_mut()
            .and_then(|f| counter(f, "max"))
            .is_some_and(|n| n > 0)
        {
            hits.push(Hit::Processes);
        }
        hits
    }
}

/// The value of `key` in a flat-keyed cgroup file (`key value` lines), read again from its start.
fn counter(file: &mut File, key: &str) -> Option<u64> {
    file.rewind().ok()?;
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
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

/// The writable directory of this process's own cgroup in a hierarchy of `controller`: cgroup v2
/// when the controller is enabled for its children, else the cgroup v1 hierarchy of the
/// controller.
fn find_base(mountinfo: &str, own: &str, controller: &str) -> Option<(PathBuf, Version)> {
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
                .any(|c| c == controller)
                .then_some((dir, Version::V2))
        });
    let v1 = || {
        let path = own.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == controller)
                .then_some(path)
        })?;
        let m = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller))?;
        m.dir_of(path).map(|dir| (dir, Version::V1))
    };
    v2.or_else(v1).filter(|(dir, _)| writable(dir))
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
            find_base("garbage", "8:pids:/", "pids"),
            None,
            "no mount, no cgroup: nothing is created"
        );
    }
}
