//! Workspace path guard: every declared path argument must stay inside the workspace.

use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A path the guard has checked: absolute, normalized, inside the workspace.
///
/// Only the path guard can make one, so a handler that takes a `WorkspacePath` knows the check ran.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkspacePath {
    abs: PathBuf,
}

impl WorkspacePath {
    /// Only the guard calls this, after the checks.
    #[allow(dead_code)] // used by the guard
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
