//! Workspace path guard: every declared path argument must stay inside the workspace.
//!
//! The guard resolves a path the model wrote against the configured workspace root (never the
//! process working directory) and refuses it when it could reach anything outside that root:
//! empty paths, NUL bytes, `..` that climbs out, absolute paths elsewhere, and symlinks, including
//! dangling ones (a write through a dangling link would create its target).
//!
//! The check is on paths, so on its own it cannot stop a symlink swapped in after it (a TOCTOU
//! race). The guard therefore also opens the workspace root once as a directory handle, and every
//! [`WorkspacePath`] it hands out carries that handle: the file operations on a `WorkspacePath`
//! (see [`crate::guard::workspace`]) resolve beneath the handle, with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)` semantics, whatever the file system does between the check and the
//! use. A handler that opens paths by itself (through `std::fs`, or a program it spawns) is not
//! covered by either.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::io;
use std::ops::Deref;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::guard::handle::Workspace;
use crate::reason::ReasonCode;

/// Most symlinks followed while resolving one dangling link chain, as the kernel's own limit.
const MAX_LINK_HOPS: u32 = 40;

/// A path the guard has checked: absolute, normalized, inside the workspace.
///
/// Only the path guard can make one, so a handler that takes a `WorkspacePath` knows the check ran.
/// It carries the workspace's directory handle: use its file operations ([`WorkspacePath::read`],
/// [`WorkspacePath::write_atomic`], [`WorkspacePath::read_dir`], …), which cannot leave the
/// workspace even if the file system changes after the check. The plain path (through
/// [`WorkspacePath::as_path`] or `Deref`) was checked, but opening it with `std::fs` is open to
/// that race.
#[derive(Clone)]
pub struct WorkspacePath {
    abs: PathBuf,
    ws: Arc<Workspace>,
}

impl WorkspacePath {
    /// Only the guard calls this, after the checks.
    pub(crate) fn new_checked(abs: PathBuf, ws: Arc<Workspace>) -> Self {
        WorkspacePath { abs, ws }
    }

    /// The absolute path.
    pub fn as_path(&self) -> &Path {
        &self.abs
    }

    /// The absolute path, owned.
    pub fn into_path_buf(self) -> PathBuf {
        self.abs
    }

    /// The workspace this path belongs to (its root and directory handle).
    pub(crate) fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }
}

impl fmt::Debug for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WorkspacePath").field(&self.abs).finish()
    }
}

// Two checked paths are the same path when they name the same absolute location.
impl PartialEq for WorkspacePath {
    fn eq(&self, other: &Self) -> bool {
        self.abs == other.abs
    }
}

impl Eq for WorkspacePath {}

impl Hash for WorkspacePath {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.abs.hash(state);
    }
}

impl Deref for WorkspacePath {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.abs
    }
}

impl AsRef<Path> for WorkspacePath {
    fn as_ref(&self) -> &Path {
        &self.abs
    }
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.abs.display().fmt(f)
    }
}

/// Why a path was refused. Every variant maps to reason code `path_outside_workspace`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathGuardError {
    /// The path is the empty string.
    #[error("the path is empty")]
    Empty,
    /// The path contains a NUL byte, which the OS would silently cut at.
    #[error("the path contains a NUL byte")]
    NulByte,
    /// The path, taken literally, lies outside the workspace (`..` or an absolute path elsewhere).
    #[error("`{path}` is outside the workspace")]
    Outside {
        /// The path as written.
        path: String,
    },
    /// A symlink along the path leads outside the workspace.
    #[error("`{path}` goes through a symlink that leaves the workspace")]
    SymlinkEscape {
        /// The path as written.
        path: String,
    },
    /// A symlink chain is too long or loops.
    #[error("`{path}` goes through too many symlinks")]
    TooManyLinks {
        /// The path as written.
        path: String,
    },
    /// The path could not be inspected (permission denied, …); refused rather than guessed.
    #[error("`{path}` could not be checked: {source}")]
    Io {
        /// The path as written.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl PathGuardError {
    /// The reason code of every path refusal.
    pub fn code(&self) -> ReasonCode {
        ReasonCode::PathOutsideWorkspace
    }
}

/// The workspace root could not be used.
#[derive(Debug, thiserror::Error)]
#[error("workspace `{path}` is not usable: {reason}")]
pub struct WorkspaceError {
    /// The root as configured.
    pub path: PathBuf,
    /// Why it is not usable.
    pub reason: String,
}

/// Checks paths against one workspace root, and holds the root's directory handle that every
/// checked path carries.
#[derive(Debug, Clone)]
pub struct PathGuard {
    ws: Arc<Workspace>,
    // The canonical root, kept here too: every check reads it.
    root: PathBuf,
}

impl PathGuard {
    /// A guard for `root`, which must be an existing directory; it is canonicalized once here so
    /// later checks compare against its real location, and opened once as the directory handle
    /// that the file operations of every checked path resolve beneath.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let path = root.as_ref();
        let err = |reason: String| WorkspaceError {
            path: path.to_path_buf(),
            reason,
        };
        let root = std::fs::canonicalize(path).map_err(|e| err(e.to_string()))?;
        if !root.is_dir() {
            return Err(err("not a directory".to_owned()));
        }
        let ws = Workspace::open(&root).map_err(|e| err(e.to_string()))?;
        Ok(PathGuard {
            ws: Arc::new(ws),
            root,
        })
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Check `raw` (relative to the workspace, or absolute) and return its normalized absolute
    /// form.
    ///
    /// The returned path is the lexically normalized path as written (symlinks kept, so a handler
    /// that removes a link removes the link, not its target); every symlink on it has been
    /// followed and found to stay inside the workspace.
    pub fn check(&self, raw: &str) -> Result<WorkspacePath, PathGuardError> {
        if raw.is_empty() {
            return Err(PathGuardError::Empty);
        }
        if raw.contains('\0') {
            return Err(PathGuardError::NulByte);
        }
        let normalized = self.join_normalized(raw);
        if !self.contains(&normalized) {
            return Err(PathGuardError::Outside {
                path: raw.to_owned(),
            });
        }
        self.resolve_beneath(&normalized, raw)?;
        Ok(WorkspacePath::new_checked(normalized, Arc::clone(&self.ws)))
    }

    /// `raw` joined to the root (unless absolute) and lexically normalized: what
    /// `normalize(&root.join(raw))` gives, built in one buffer from the bytes on Unix.
    #[cfg(unix)]
    fn join_normalized(&self, raw: &str) -> PathBuf {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};

        let root = self.root.as_os_str().as_bytes();
        let mut out = Vec::with_capacity(root.len() + raw.len() + 1);
        if !raw.starts_with('/') {
            out.extend_from_slice(root);
        }
        for seg in raw.as_bytes().split(|&b| b == b'/') {
            match seg {
                b"" | b"." => {}
                b".." => {
                    // Drop the last component; `..` at `/` stays at `/`, as the OS does.
                    let cut = out.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    out.truncate(cut.max(1));
                }
                name => {
                    if out.last() != Some(&b'/') {
                        out.push(b'/');
                    }
                    out.extend_from_slice(name);
                }
            }
        }
        if out.is_empty() {
            out.push(b'/');
        }
        PathBuf::from(std::ffi::OsString::from_vec(out))
    }

    #[cfg(not(unix))]
    fn join_normalized(&self, raw: &str) -> PathBuf {
        let written = Path::new(raw);
        if written.is_absolute() {
            normalize(written)
        } else {
            normalize(&self.root.join(written))
        }
    }

    /// `true` when the normalized absolute `path` is the root or lies under it (a byte prefix
    /// ending at a separator; both sides are normalized, so this is `Path::starts_with`).
    #[cfg(unix)]
    fn contains(&self, path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;

        let root = self.root.as_os_str().as_bytes();
        let path = path.as_os_str().as_bytes();
        root == b"/"
            || (path.starts_with(root) && matches!(path.get(root.len()), None | Some(b'/')))
    }

    #[cfg(not(unix))]
    fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    /// The usual path, with no symlink on it, in one system call: `openat2` of the path below the
    /// workspace handle as `O_PATH` (which opens no file: a FIFO or a device is not touched) with
    /// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`. The kernel then walks every component and fails
    /// with `ELOOP` at the first symlink, the trailing one included (`O_NOFOLLOW` is left out: with
    /// `O_PATH` it would open a trailing link instead of refusing it).
    ///
    /// It decides as [`PathGuard::resolve_plain`] does, one `lstat` per component: an open that
    /// succeeds walked components that all exist and none a symlink; `ENOENT` or `ENOTDIR` came
    /// at the first missing component (or one under a file) with no symlink before it, where the
    /// walk stops too. Every other outcome (a symlink, an `openat2` the kernel lacks, a denied
    /// search) goes to that walk, which follows links and words the refusal. (`RESOLVE_BENEATH`
    /// alone would accept some links the walk refuses: a dangling `missing/../../out` stops the
    /// kernel at `missing` with `ENOENT`, while the walk reads where it points.)
    #[cfg(target_os = "linux")]
    fn resolve_beneath(&self, normalized: &Path, raw: &str) -> Result<(), PathGuardError> {
        use rustix::fs::{openat2, Mode, OFlags, ResolveFlags};
        use rustix::io::Errno;
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;

        let bytes = normalized.as_os_str().as_bytes();
        let root = self.root.as_os_str().as_bytes();
        // Below the root: what follows its separator (`contains` held, so the root is a prefix).
        let skip = if root == b"/" { 1 } else { root.len() + 1 };
        let Some(rel) = bytes.get(skip..).filter(|rel| !rel.is_empty()) else {
            return Ok(());
        };
        let opened = openat2(
            &self.ws.dir,
            OsStr::from_bytes(rel),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        );
        match opened {
            Ok(_fd) => Ok(()),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(()),
            Err(_) => self.resolve_plain(normalized, raw),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn resolve_beneath(&self, normalized: &Path, raw: &str) -> Result<(), PathGuardError> {
        self.resolve_plain(normalized, raw)
    }

    /// The walk of [`PathGuard::resolve_inside`] for the usual path with no symlink on it: one
    /// `lstat` per existing component below the root, on prefixes of `normalized` itself (no
    /// joins, no allocation). It stops at the first missing component, as the full walk does
    /// (nothing can exist under it), and hands over to the full walk, from the start, at the
    /// first symlink.
    #[cfg(unix)]
    fn resolve_plain(&self, normalized: &Path, raw: &str) -> Result<(), PathGuardError> {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;

        let bytes = normalized.as_os_str().as_bytes();
        let root = self.root.as_os_str().as_bytes();
        // Index of the separator before the next component (the root `/` is its own separator).
        let mut at = if root == b"/" { 0 } else { root.len() };
        while at < bytes.len() {
            let end = bytes[at + 1..]
                .iter()
                .position(|&b| b == b'/')
                .map_or(bytes.len(), |p| at + 1 + p);
            let prefix = Path::new(OsStr::from_bytes(&bytes[..end]));
            match std::fs::symlink_metadata(prefix) {
                Ok(md) if md.file_type().is_symlink() => {
                    let mut hops = 0;
                    return self.resolve_inside(normalized, raw, &mut hops);
                }
                Ok(_) => {}
                Err(e) if is_missing(&e) => return Ok(()),
                Err(source) => {
                    return Err(PathGuardError::Io {
                        path: raw.to_owned(),
                        source,
                    })
                }
            }
            at = end;
        }
        Ok(())
    }

    #[cfg(not(unix))]
    fn resolve_plain(&self, normalized: &Path, raw: &str) -> Result<(), PathGuardError> {
        let mut hops = 0;
        self.resolve_inside(normalized, raw, &mut hops)
    }

    /// Walk `normalized` (absolute, lexically normalized, under the root) one component at a time,
    /// following every symlink, and refuse as soon as the walk leaves the workspace.
    fn resolve_inside(
        &self,
        normalized: &Path,
        raw: &str,
        hops: &mut u32,
    ) -> Result<(), PathGuardError> {
        let Ok(rel) = normalized.strip_prefix(&self.root) else {
            return Err(PathGuardError::SymlinkEscape {
                path: raw.to_owned(),
            });
        };
        let mut resolved = self.root.clone();
        let mut exists = true;
        for comp in rel.components() {
            let Component::Normal(name) = comp else {
                // `normalize` leaves only normal components under the root.
                return Err(PathGuardError::Outside {
                    path: raw.to_owned(),
                });
            };
            let next = resolved.join(name);
            if !exists {
                resolved = next;
                continue;
            }
            match std::fs::symlink_metadata(&next) {
                Ok(md) if md.file_type().is_symlink() => match std::fs::canonicalize(&next) {
                    Ok(target) => resolved = target,
                    Err(e) if is_missing(&e) => {
                        // Dangling: whatever gets created through this link lands at its target.
                        *hops += 1;
                        if *hops > MAX_LINK_HOPS {
                            return Err(PathGuardError::TooManyLinks {
                                path: raw.to_owned(),
                            });
                        }
                        let target =
                            std::fs::read_link(&next).map_err(|source| PathGuardError::Io {
                                path: raw.to_owned(),
                                source,
                            })?;
                        let target = normalize(&resolved.join(target));
                        if !target.starts_with(&self.root) {
                            return Err(PathGuardError::SymlinkEscape {
                                path: raw.to_owned(),
                            });
                        }
                        self.resolve_inside(&target, raw, hops)?;
                        resolved = target;
                        exists = false;
                    }
                    Err(source) => {
                        return Err(PathGuardError::Io {
                            path: raw.to_owned(),
                            source,
                        })
                    }
                },
                Ok(_) => resolved = next,
                Err(e) if is_missing(&e) => {
                    resolved = next;
                    exists = false;
                }
                Err(source) => {
                    return Err(PathGuardError::Io {
                        path: raw.to_owned(),
                        source,
                    })
                }
            }
            if !resolved.starts_with(&self.root) {
                return Err(PathGuardError::SymlinkEscape {
                    path: raw.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// A missing component (or a component under a non-directory) means the rest does not exist yet.
fn is_missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory
}

/// Remove `.` and resolve `..` lexically. `..` at the root stays at the root, as the OS does.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(comp),
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` refuses to remove the root, which is what `/..` means.
                out.pop();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_lexically() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../x")), PathBuf::from("/x"));
        assert_eq!(normalize(Path::new("/a/b/../../..")), PathBuf::from("/"));
    }

    /// The byte-level join and normalization must agree with `normalize(root.join(raw))`.
    #[test]
    fn join_normalized_matches_the_component_walk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let g = PathGuard::new(dir.path()).expect("guard");
        let slash = PathGuard::new("/").expect("guard at /");
        let cases = [
            "a",
            "a/b",
            "a//b/",
            "./a/./b/.",
            "a/../b",
            "../x",
            "a/b/../../..",
            "..",
            ".",
            "/",
            "//",
            "/etc/passwd",
            "/a/./b/../c",
            "/../../x",
            "a/../../",
            "a\\b",
            "...",
            "a/.../b",
            ".hidden/x",
            "a/b/c/d/../../e",
        ];
        for guard in [&g, &slash] {
            for raw in cases {
                let written = Path::new(raw);
                let expected = if written.is_absolute() {
                    normalize(written)
                } else {
                    normalize(&guard.root.join(written))
                };
                let got = guard.join_normalized(raw);
                assert_eq!(got, expected, "{raw:?} under {:?}", guard.root);
                assert_eq!(
                    got.as_os_str(),
                    expected.as_os_str(),
                    "{raw:?} under {:?}",
                    guard.root
                );
                assert_eq!(
                    guard.contains(&got),
                    got.starts_with(&guard.root),
                    "{raw:?} under {:?}",
                    guard.root
                );
            }
        }
    }

    /// How the one-call check and the full walk decide `raw`, or `None` when it is lexically
    /// outside the root (refused before either runs).
    #[cfg(unix)]
    fn both_ways(g: &PathGuard, raw: &str) -> Option<(Result<(), String>, Result<(), String>)> {
        let normalized = g.join_normalized(raw);
        if !g.contains(&normalized) {
            return None;
        }
        let beneath = g
            .resolve_beneath(&normalized, raw)
            .map_err(|e| e.to_string());
        let full = g
            .resolve_inside(&normalized, raw, &mut 0)
            .map_err(|e| e.to_string());
        Some((beneath, full))
    }

    /// The walk without joins must decide exactly as the full walk does, symlinks or not.
    #[cfg(unix)]
    #[test]
    fn plain_walk_agrees_with_the_full_walk() {
        use std::os::unix::fs::symlink;

        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        let out = dir.path().join("out");
        std::fs::create_dir_all(ws.join("sub")).expect("dir");
        std::fs::create_dir_all(&out).expect("dir");
        std::fs::write(ws.join("sub/f.txt"), "x").expect("file");
        std::fs::write(ws.join("file"), "x").expect("file");
        symlink(&out, ws.join("esc")).expect("link");
        symlink("sub", ws.join("in")).expect("link");
        symlink(out.join("planted"), ws.join("dangle")).expect("link");
        symlink("sub/later.txt", ws.join("dangle_in")).expect("link");
        symlink(ws.join("sub"), ws.join("abs_in")).expect("link");
        symlink("../ws/sub", ws.join("up")).expect("link");
        symlink("in", ws.join("chain")).expect("link");
        #[cfg(target_os = "linux")]
        rustix::fs::mknodat(
            rustix::fs::CWD,
            ws.join("sub/fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("fifo");
        let g = PathGuard::new(&ws).expect("guard");
        let cases = [
            ".",
            "sub",
            "sub/f.txt",
            "sub/missing/x",
            "file",
            "file/x",
            "esc",
            "esc/x",
            "in",
            "in/f.txt",
            "in/missing",
            "dangle",
            "dangle_in",
            "missing/esc/x",
            "sub/../in/f.txt",
            "sub/f.txt/x",
            "abs_in",
            "abs_in/f.txt",
            "up/f.txt",
            "chain/f.txt",
            "chain/missing/esc",
            "sub/fifo",
        ];
        for raw in cases {
            let (beneath, full) = both_ways(&g, raw).expect(raw);
            let plain = g
                .resolve_plain(&g.join_normalized(raw), raw)
                .map_err(|e| e.to_string());
            assert_eq!(plain, full, "{raw:?}");
            assert_eq!(beneath, full, "{raw:?}");
        }
        assert!(g.check("esc/x").is_err());
        assert!(g.check("dangle").is_err());
        assert!(g.check("in/f.txt").is_ok());
        assert!(g.check("chain/f.txt").is_ok());
        // A FIFO is checked, not opened: the check returns without a writer on the other end.
        assert!(g.check("sub/fifo").is_ok());
    }

    /// Every path of up to three components over a tree of links of every kind (inside, out,
    /// dangling, absolute, chained, looping, through `..`) is decided alike by the one-call
    /// check and by the full walk.
    #[cfg(target_os = "linux")]
    #[test]
    fn beneath_agrees_with_the_walk_on_every_short_path() {
        use std::os::unix::fs::symlink;

        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        let out = dir.path().join("out");
        std::fs::create_dir_all(ws.join("sub/deep")).expect("dir");
        std::fs::create_dir_all(out.join("d")).expect("dir");
        std::fs::write(ws.join("sub/f"), "x").expect("file");
        std::fs::write(out.join("f"), "x").expect("file");
        for (target, link) in [
            (out.clone(), "esc"),
            (PathBuf::from("sub"), "in"),
            (ws.join("sub"), "abs"),
            (PathBuf::from("../ws/sub"), "up"),
            (PathBuf::from("../out"), "up_out"),
            (PathBuf::from("in"), "chain"),
            (out.join("new"), "dangle"),
            (PathBuf::from("sub/new"), "dangle_in"),
            (PathBuf::from("loop"), "loop"),
            (PathBuf::from("deep/.."), "sub/dots"),
            (PathBuf::from("../../out/d"), "sub/deep_out"),
            (PathBuf::from("missing/../../out/new"), "dangle_dots"),
        ] {
            symlink(target, ws.join(link)).expect("link");
        }
        let g = PathGuard::new(&ws).expect("guard");
        let names = [
            "sub",
            "deep",
            "f",
            "esc",
            "in",
            "abs",
            "up",
            "up_out",
            "chain",
            "dangle",
            "dangle_in",
            "dangle_dots",
            "loop",
            "dots",
            "deep_out",
            "missing",
            "d",
            "..",
            ".",
        ];
        let mut paths = vec![String::new()];
        let mut checked = 0;
        for _ in 0..3 {
            let mut longer = Vec::new();
            for p in &paths {
                for n in names {
                    let raw = if p.is_empty() {
                        n.to_owned()
                    } else {
                        format!("{p}/{n}")
                    };
                    if let Some((beneath, full)) = both_ways(&g, &raw) {
                        assert_eq!(beneath, full, "{raw:?}");
                        checked += 1;
                    }
                    longer.push(raw);
                }
            }
            paths = longer;
        }
        assert!(checked > 5000, "{checked}");
    }

    /// A guard rooted at `/` takes the same decisions through its fast path as through the walk.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_guard_at_the_file_system_root_decides_alike() {
        let g = PathGuard::new("/").expect("guard");
        for raw in [
            "/",
            "/proc/self/root/etc",
            "/etc",
            "/no/such/path",
            "tmp",
            "/proc/self/exe",
        ] {
            let (beneath, full) = both_ways(&g, raw).expect(raw);
            assert_eq!(beneath, full, "{raw:?}");
        }
    }

    #[test]
    fn refuses_empty_and_nul_before_touching_the_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let g = PathGuard::new(dir.path()).expect("guard");
        assert!(matches!(g.check(""), Err(PathGuardError::Empty)));
        assert!(matches!(g.check("a\0b"), Err(PathGuardError::NulByte)));
    }
}
