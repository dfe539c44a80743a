//! The minimal root a confined program sees: a mount namespace of its own, in which the host's
//! file system is reduced to what the policy names.
//!
//! Landlock decides what a program may read and write, but it has no access right for metadata
//! (`chmod`, `chown`, `utime`, extended attributes) nor for connecting to pathname UNIX sockets,
//! and the program's user namespace maps its root to the caller, the owner of every root-owned
//! host file. So the program does not get the host's file system at all. Its root is an empty
//! tmpfs holding, as bubblewrap builds it:
//!
//! - the system read paths, each a bind mount made **read-only** (so no owner-only operation can
//!   change them: `chmod`, `utime`, `setxattr` fail with `EROFS`), `nosuid` and `nodev`;
//!   top-level links such as `/bin -> usr/bin` stay links;
//! - `/dev` with only the device nodes of the policy (read-only binds of the host's nodes, which
//!   can still be read and written: the mount flag guards the node, not the device);
//! - an empty `/tmp` (programs get `TMPDIR` in the workspace);
//! - at the request: the workspace (read-only for [`FsAccess::ReadOnly`]), and the UNIX sockets
//!   the tool declares; nothing else of the host, so no `/root`, `/home`, `/run`, `/var/run`,
//!   `/dev/shm`, `/proc`, `/sys`, nor any other user's socket.
//!
//! Then the root itself is made read-only and the host's tree is detached. The helper's init
//! builds all but the workspace before a request comes (`prepare`) and adds the workspace at
//! the request (`Prepared::finish`), after which it loads the mount filter (no `mount`,
//! `mount_setattr`, `umount2`, … for the program) and restricts itself with Landlock, which the
//! program inherits.
//!
//! Sources are resolved inside the host's tree (`RESOLVE_IN_ROOT`), so a link among them can
//! never point outside it; each bind is a clone of its source's mount (`open_tree`) moved into
//! place. Read-only is set with a remount that keeps the flags the host's mount locked (`nosuid`,
//! `noexec`, atime).

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{openat2, Mode as FileMode, OFlags, ResolveFlags, StatVfsMountFlags, CWD};
use rustix::mount::{
    mount, mount_change, mount_remount, move_mount, open_tree, unmount, MountFlags,
    MountPropagationFlags, MoveMountFlags, OpenTreeFlags, UnmountFlags,
};

use crate::error::SandboxError;
use crate::policy::{FsAccess, SandboxPolicy, DEV_READ, DEV_READ_WRITE};
use crate::protocol::setup;

/// Where the host's tree hangs in the new root until the request (then it is detached).
const HOST: &str = "/.tool-sandbox-host";
/// Directories the new root may be staged on, the first that exists (any directory will do: the
/// namespace is private and the stage is moved to `/`).
const STAGES: [&str; 3] = ["/tmp", "/mnt", "/usr"];

/// A minimal root built ahead of the request: the host's tree still reachable under [`HOST`].
#[derive(Debug)]
pub(crate) struct Prepared {
    host: OwnedFd,
    /// The system read paths already in place.
    placed: Vec<PathBuf>,
}

/// Builds the root in the calling process's mount namespace, which must be its own (it unshared
/// `CLONE_NEWNS` inside its user namespace): `read_paths`, the devices and an empty `/tmp`; keeps
/// the host's tree for [`Prepared::finish`].
pub(crate) fn prepare(read_paths: &[PathBuf]) -> Result<Prepared, SandboxError> {
    let fail = |what: &str, e: rustix::io::Errno| setup(&format!("mount namespace: {what}"), e);
    // Nothing done here may reach the host's namespace.
    mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(|e| fail("private propagation", e))?;
    let stage = STAGES
        .iter()
        .find(|s| Path::new(s).is_dir())
        .ok_or_else(|| setup("mount namespace", "no directory to stage the new root on"))?;
    mount(
        "tool-sandbox",
        *stage,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        c"mode=0755,size=4m",
    )
    .map_err(|e| fail("root tmpfs", e))?;
    let put_old = format!("{stage}{HOST}");
    std::fs::create_dir(&put_old).map_err(|e| setup("mount namespace: host mount point", e))?;
    rustix::process::pivot_root(*stage, put_old.as_str()).map_err(|e| fail("pivot_root", e))?;
    rustix::process::chdir("/").map_err(|e| fail("chdir", e))?;
    let host = rustix::fs::open(
        HOST,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        FileMode::empty(),
    )
    .map_err(|e| fail("host tree", e))?;
    let mut placed = Vec::new();
    for path in read_paths {
        if place_read_only(&host, path, read_paths)? {
            placed.push(path.clone());
        }
    }
    std::fs::create_dir("/dev").map_err(|e| setup("mount namespace: /dev", e))?;
    for dev in DEV_READ_WRITE.iter().chain(DEV_READ) {
        place_read_only(&host, Path::new(dev), &[])?;
    }
    for (link, target) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, link)
            .map_err(|e| setup("mount namespace: /dev links", e))?;
    }
    // An empty `/tmp`, not the host's: programs get `TMPDIR` in the workspace.
    std::fs::create_dir_all("/tmp").map_err(|e| setup("mount namespace: /tmp", e))?;
    Ok(Prepared { host, placed })
}

impl Prepared {
    /// Adds what the request names (the workspace, the declared UNIX sockets, the granted paths,
    /// read paths the
    /// policy adds to those prepared), detaches the host's tree and makes the root read-only.
    pub(crate) fn finish(self, policy: &SandboxPolicy) -> Result<(), SandboxError> {
        let fail = |what: &str, e: rustix::io::Errno| setup(&format!("mount namespace: {what}"), e);
        for path in &policy.system_read_paths {
            if !self.placed.contains(path) {
                place_read_only(&self.host, path, &policy.system_read_paths)?;
            }
        }
        let mut flags = MountFlags::NOSUID | MountFlags::NODEV;
        if policy.access == FsAccess::ReadOnly {
            flags |= MountFlags::RDONLY;
        }
        bind(&self.host, &policy.workspace, flags, Kind::Dir)?;
        for socket in &policy.unix_sockets {
            // Read-only guards the socket's metadata; connecting to it still works.
            bind(
                &self.host,
                socket,
                MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
                Kind::Socket,
            )?;
        }
        for grant in &policy.granted_paths {
            let mut flags = MountFlags::NOSUID | MountFlags::NODEV;
            if grant.access == FsAccess::ReadOnly {
                flags |= MountFlags::RDONLY;
            }
            bind(&self.host, &grant.path, flags, Kind::Granted)?;
        }
        drop(self.host);
        unmount(HOST, UnmountFlags::DETACH).map_err(|e| fail("detach the host tree", e))?;
        std::fs::remove_dir(HOST).map_err(|e| setup("mount namespace: host mount point", e))?;
        mount_remount(
            "/",
            MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        )
        .map_err(|e| fail("read-only root", e))
    }
}

/// What a bind's source must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Whatever it is (a system path or device).
    Any,
    Dir,
    Socket,
    /// A granted path: a directory or a regular file.
    Granted,
}

/// Puts the host's `path` into the new root, read-only: a link whose target lies beneath
/// another of `read_paths` stays a link (so `/bin -> usr/bin` is one tree, not two); anything
/// else is bound. Returns `false` for a path the host does not have (skipped, as the policy
/// says of missing system paths).
fn place_read_only(
    host: &OwnedFd,
    path: &Path,
    read_paths: &[PathBuf],
) -> Result<bool, SandboxError> {
    let Some(rel) = relative(path) else {
        return Err(SandboxError::InvalidPolicy(format!(
            "read path {} is not a normal absolute path",
            path.display()
        )));
    };
    let leaf = match openat2(
        host,
        &rel,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        FileMode::empty(),
        ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(setup(&format!("mount namespace: {}", path.display()), e)),
    };
    let stat = rustix::fs::fstat(&leaf)
        .map_err(|e| setup(&format!("mount namespace: {}", path.display()), e))?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Symlink {
        let target = rustix::fs::readlinkat(&leaf, "", Vec::new())
            .map_err(|e| setup(&format!("mount namespace: {}", path.display()), e))?;
        let target = PathBuf::from(
            <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(target.into_bytes()),
        );
        let resolved = lexical(&path.parent().unwrap_or(Path::new("/")).join(&target));
        let inside = read_paths
            .iter()
            .any(|p| p != path && resolved.starts_with(p) && p.is_absolute());
        if inside {
            make_parents(path)?;
            std::os::unix::fs::symlink(&target, path)
                .map_err(|e| setup(&format!("mount namespace: link {}", path.display()), e))?;
            return Ok(true);
        }
    }
    match bind(
        host,
        path,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        Kind::Any,
    ) {
        Ok(()) => Ok(true),
        // A link to nothing.
        Err(BindError::Missing) => Ok(false),
        Err(BindError::Other(e)) => Err(e),
    }
}

enum BindError {
    Missing,
    Other(SandboxError),
}

impl From<BindError> for SandboxError {
    fn from(e: BindError) -> Self {
        match e {
            BindError::Missing => setup("mount namespace", "a bind source vanished"),
            BindError::Other(e) => e,
        }
    }
}

/// Binds the host's `path` (resolved inside the host's tree) at the same path of the new root,
/// with `flags` on top of those the host's mount locks. The device flag is dropped for device
/// nodes, which would not open otherwise.
fn bind(host: &OwnedFd, path: &Path, flags: MountFlags, kind: Kind) -> Result<(), BindError> {
    let other = |what: &str, e: rustix::io::Errno| {
        BindError::Other(setup(
            &format!("mount namespace: {what} {}", path.display()),
            e,
        ))
    };
    let rel = relative(path).ok_or_else(|| {
        BindError::Other(SandboxError::InvalidPolicy(format!(
            "{} is not a normal absolute path",
            path.display()
        )))
    })?;
    let source = match openat2(
        host,
        &rel,
        OFlags::PATH | OFlags::CLOEXEC,
        FileMode::empty(),
        ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) if kind == Kind::Any => return Err(BindError::Missing),
        Err(e) => return Err(other("open", e)),
    };
    let stat = rustix::fs::fstat(&source).map_err(|e| other("stat", e))?;
    let file_type = rustix::fs::FileType::from_raw_mode(stat.st_mode);
    let mut flags = flags;
    match (kind, file_type) {
        (Kind::Dir, rustix::fs::FileType::Directory)
        | (Kind::Socket, rustix::fs::FileType::Socket)
        | (Kind::Granted, rustix::fs::FileType::Directory | rustix::fs::FileType::RegularFile)
        | (Kind::Any, _) => {}
        _ => {
            return Err(BindError::Other(SandboxError::InvalidPolicy(format!(
                "{} is a {file_type:?}, not a {kind:?}",
                path.display()
            ))))
        }
    }
    if matches!(
        file_type,
        rustix::fs::FileType::CharacterDevice | rustix::fs::FileType::BlockDevice
    ) {
        flags.remove(MountFlags::NODEV);
    }
    make_mount_point(path, file_type == rustix::fs::FileType::Directory)
        .map_err(BindError::Other)?;
    let tree = open_tree(
        &source,
        "",
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_EMPTY_PATH,
    )
    .map_err(|e| other("clone the mount of", e))?;
    let locked = rustix::fs::fstatvfs(&tree)
        .map(|st| locked_flags(st.f_flag))
        .map_err(|e| other("statvfs", e))?;
    move_mount(
        tree.as_fd(),
        "",
        CWD,
        path,
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )
    .map_err(|e| other("move the mount to", e))?;
    mount_remount(path, MountFlags::BIND | flags | locked, "").map_err(|e| other("remount", e))?;
    Ok(())
}

/// The flags of a mount that a remount must keep (a mount namespace owned by a user namespace
/// may not clear what the host's mount set).
fn locked_flags(flags: StatVfsMountFlags) -> MountFlags {
    let mut out = MountFlags::empty();
    for (theirs, ours) in [
        (StatVfsMountFlags::RDONLY, MountFlags::RDONLY),
        (StatVfsMountFlags::NOSUID, MountFlags::NOSUID),
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if flags.contains(theirs) {
            out |= ours;
        }
    }
    out
}

/// Creates what a bind of `path` is mounted on in the new root: a directory, or an empty file
/// (for files, devices and sockets). What exists already (beneath an earlier bind) is used as
/// it is.
fn make_mount_point(path: &Path, dir: bool) -> Result<(), SandboxError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Ok(());
    }
    let made = if dir {
        std::fs::create_dir_all(path)
    } else {
        make_parents(path)?;
        File::create(path).map(drop)
    };
    made.map_err(|e| {
        setup(
            &format!("mount namespace: mount point {}", path.display()),
            e,
        )
    })
}

fn make_parents(path: &Path) -> Result<(), SandboxError> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent)
            .map_err(|e| setup(&format!("mount namespace: {}", parent.display()), e)),
        None => Ok(()),
    }
}

/// `path` without its root, if it is absolute and has no `..`, `.` or prefix.
fn relative(path: &Path) -> Option<PathBuf> {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return None;
    }
    let rest: PathBuf = components
        .map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!rest.as_os_str().is_empty()).then_some(rest)
}

/// `path` with `.` and `..` resolved by name alone (never above `/`).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_normal_absolute_paths_have_a_relative_form() {
        assert_eq!(
            relative(Path::new("/usr/bin")),
            Some(PathBuf::from("usr/bin"))
        );
        assert_eq!(relative(Path::new("usr/bin")), None);
        assert_eq!(relative(Path::new("/usr/../etc")), None);
        assert_eq!(relative(Path::new("/")), None);
    }

    #[test]
    fn links_are_resolved_by_name_never_above_the_root() {
        assert_eq!(lexical(Path::new("/usr/bin")), PathBuf::from("/usr/bin"));
        assert_eq!(lexical(Path::new("/etc/../run/x")), PathBuf::from("/run/x"));
        assert_eq!(lexical(Path::new("/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn remounts_keep_what_the_host_locked() {
        let locked = locked_flags(StatVfsMountFlags::NOSUID | StatVfsMountFlags::NOEXEC);
        assert!(locked.contains(MountFlags::NOSUID | MountFlags::NOEXEC));
        assert!(!locked.contains(MountFlags::RDONLY));
    }
}
