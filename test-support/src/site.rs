//! A workspace with a canary next to it (outside it): the scene of every test that tries to
//! read, change or remove what lies beyond the workspace.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// What the canary file holds; a test that finds this text in a reply has leaked it.
pub const CANARY: &str = "CANARY-outside-the-workspace: must not be read, changed or removed";

/// `base/ws` is the workspace, `base/outside/secret.txt` the canary. Every path is canonical,
/// so a test can compare it with what a guard resolves. The directory goes when this drops.
pub struct Site {
    _dir: tempfile::TempDir,
    /// The directory that holds the workspace and the outside directory.
    pub base: PathBuf,
    /// The workspace, empty but for what [`Site::with_file`] and [`Site::with_dir`] add.
    pub ws: PathBuf,
    /// A sibling of the workspace that holds the canary.
    pub outside: PathBuf,
    /// The canary file, `outside/secret.txt`, holding [`CANARY`].
    pub canary: PathBuf,
}

impl Site {
    /// A fresh site in a new temporary directory.
    pub fn new() -> Site {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws).expect("workspace");
        std::fs::create_dir_all(&outside).expect("outside");
        let canary = outside.join("secret.txt");
        std::fs::write(&canary, CANARY).expect("canary");
        Site {
            _dir: dir,
            base,
            ws,
            outside,
            canary,
        }
    }

    /// Adds the file `rel` (and the directories above it) to the workspace.
    pub fn with_file(self, rel: &str, contents: impl AsRef<[u8]>) -> Site {
        let path = self.ws.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directories");
        }
        std::fs::write(&path, contents).expect("workspace file");
        self
    }

    /// Adds the directory `rel` (and those above it) to the workspace.
    pub fn with_dir(self, rel: &str) -> Site {
        std::fs::create_dir_all(self.ws.join(rel)).expect("workspace directory");
        self
    }

    /// Whether the canary still holds exactly what it was made with.
    pub fn canary_intact(&self) -> bool {
        intact(&self.canary)
    }

    /// This site with what `build(workspace)` makes to guard it (a path guard, an executor).
    pub fn guarded<G>(self, build: impl FnOnce(&Path) -> G) -> Guarded<G> {
        let guard = build(&self.ws);
        Guarded { site: self, guard }
    }
}

impl Default for Site {
    fn default() -> Self {
        Site::new()
    }
}

/// A [`Site`] with what guards its workspace; reads as the site itself.
pub struct Guarded<G> {
    site: Site,
    /// What was built over the workspace.
    pub guard: G,
}

impl<G> Deref for Guarded<G> {
    type Target = Site;
    fn deref(&self) -> &Site {
        &self.site
    }
}

/// Whether the file at `path` holds exactly [`CANARY`].
pub fn intact(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t == CANARY)
}

/// What a [`snapshot`] holds of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory (what it holds has entries of its own).
    Dir,
    /// A regular file (or anything not a directory or a link) and its bytes.
    File(Vec<u8>),
    /// A symbolic link and its target, not followed.
    Link(PathBuf),
}

/// Every path under `dir` with what it is: a snapshot to compare before and after, that sees a
/// file written, changed or removed, a directory made and a link planted or repointed.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("ls") {
            let path = entry.expect("entry").path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            if meta.is_dir() {
                stack.push(path.clone());
                out.insert(path, Entry::Dir);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("readlink");
                out.insert(path, Entry::Link(target));
            } else {
                let bytes = std::fs::read(&path).expect("read");
                out.insert(path, Entry::File(bytes));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canary_lies_outside_the_workspace_and_is_checked_by_content() {
        let s = Site::new().with_file("sub/a.txt", "a").with_dir("d");
        assert!(!s.canary.starts_with(&s.ws));
        assert!(s.canary.starts_with(&s.outside));
        assert_eq!(s.ws.parent(), Some(s.base.as_path()));
        assert!(s.canary_intact());
        std::fs::write(&s.canary, "changed").expect("write");
        assert!(!s.canary_intact());
        std::fs::remove_file(&s.canary).expect("remove");
        assert!(!s.canary_intact());
        assert!(s.ws.join("d").is_dir());
        assert_eq!(std::fs::read(s.ws.join("sub/a.txt")).expect("read"), b"a");
    }

    #[test]
    fn a_snapshot_sees_contents_and_link_targets() {
        let s = Site::new();
        let before = snapshot(&s.base);
        assert_eq!(
            before.get(&s.canary),
            Some(&Entry::File(CANARY.as_bytes().to_vec()))
        );
        assert_eq!(before.get(&s.ws), Some(&Entry::Dir));
        std::fs::create_dir(s.outside.join("made")).expect("mkdir");
        let after = snapshot(&s.base);
        assert_eq!(after.get(&s.outside.join("made")), Some(&Entry::Dir));
        assert_ne!(before, after);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("../outside", s.ws.join("door")).expect("link");
            assert_eq!(
                snapshot(&s.ws).get(&s.ws.join("door")),
                Some(&Entry::Link(PathBuf::from("../outside")))
            );
        }
    }

    #[test]
    fn guarded_keeps_the_site_alive_beside_what_was_built() {
        let w = Site::new().guarded(|ws| ws.join("built"));
        assert_eq!(w.guard, w.ws.join("built"));
        assert!(w.canary_intact());
    }
}
