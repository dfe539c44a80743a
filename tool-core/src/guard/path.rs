//! Workspace path guard: every declared path argument must stay inside the workspace.
//!
//! The guard resolves a path the model wrote against the configured workspace root (never the
//! process working directory) and refuses it when it could reach anything outside that root:
//! empty paths, NUL bytes, `..` that climbs out, absolute paths elsewhere, and symlinks, including
//! dangling ones (a write through a dangling link would create its target).
//!
//! This is a check on paths, not an OS sandbox: a symlink swapped in after the check (a TOCTOU
//! race) or a handler that opens other paths by itself is not covered.

use std::fmt;
use std::io;
use std::ops::Deref;
use std::path::{Component, Path, PathBuf};

use crate::outcome::ReasonCode;

/// Most symlinks followed while resolving one dangling link chain, as the kernel's own limit.
const MAX_LINK_HOPS: u32 = 40;

/// A path the guard has checked: absolute, normalized, inside the workspace.
///
/// Only the path guard can make one, so a handler that takes a `WorkspacePath` knows the check ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkspacePath {
    abs: PathBuf,
}

impl WorkspacePath {
    /// Only the guard calls this, after the checks.
    pub(crate) fn new_checked(abs: PathBuf) -> Self {
        WorkspacePath { abs }
    }

    /// The absolute path.
    pub fn as_path(&self) -> &Path {
        &self.abs
    }

    /// The absolute path, owned.
    pub fn into_path_buf(self) -> PathBuf {
        self.abs
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

/// Checks paths against one workspace root.
#[derive(Debug, Clone)]
pub struct PathGuard {
    root: PathBuf,
}

impl PathGuard {
    /// A guard for `root`, which must be an existing directory; it is canonicalized once here so
    /// later checks compare against its real location.
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
        Ok(PathGuard { root })
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
        let written = Path::new(raw);
        let joined = if written.is_absolute() {
            written.to_path_buf()
        } else {
            self.root.join(written)
        };
        let normalized = normalize(&joined);
        if !normalized.starts_with(&self.root) {
            return Err(PathGuardError::Outside {
                path: raw.to_owned(),
            });
        }
        let mut hops = 0;
        self.resolve_inside(&normalized, raw, &mut hops)?;
        Ok(WorkspacePath::new_checked(normalized))
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

    #[test]
    fn refuses_empty_and_nul_before_touching_the_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let g = PathGuard::new(dir.path()).expect("guard");
        assert!(matches!(g.check(""), Err(PathGuardError::Empty)));
        assert!(matches!(g.check("a\0b"), Err(PathGuardError::NulByte)));
    }
}
