//! The workspace directory handle, shared by the path guard and the workspace file operations.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

/// The workspace root: its canonical path and the directory handle that file operations resolve
/// beneath. One per path guard, shared by every path it checks.
pub(crate) struct Workspace {
    pub(crate) root: PathBuf,
    pub(crate) dir: Dir,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// Open the (canonical) root as a directory handle.
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Workspace {
            root: root.to_path_buf(),
            dir,
        })
    }
}
