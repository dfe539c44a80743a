//! File operations on a [`WorkspacePath`] that cannot leave the workspace, whatever the file
//! system does between the path guard's check and the use.
//!
//! The path guard opens the workspace root once as a directory handle; every operation here
//! resolves the path *beneath* that handle (cap-std: `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS` on Linux, a component-by-component walk elsewhere), never from the
//! process root. So a symlink swapped in after the check, a `..` reached through a renamed
//! directory, an absolute symlink or a `/proc` magic link all fail with
//! [`WorkspaceFsError::Outside`] instead of reaching another file. Symlinks that stay inside the
//! workspace are followed as usual; an absolute symlink is refused even when it points inside,
//! because its target is resolved against the host's root, not the workspace.
//!
//! Reads also refuse:
//! - anything that is not a regular file (FIFO, socket, device, directory), decided on the opened
//!   descriptor (`fstat`) after a non-blocking open, so a FIFO never blocks the calling thread;
//! - a regular file with more than one hard link, unless the caller opts in with
//!   [`ReadOptions::allow_hard_links`]. A hard link is not a path: `ln /etc/shadow ws/x` (or a
//!   link made by anyone who can write both places) makes a name inside the workspace for an
//!   inode outside it, and no path check can see that. Files made in the workspace have one link.
//!
//! Writes go through [`WorkspacePath::write_atomic`]: a temporary file made by the handle with a
//! name no caller controls (an unnamed `O_TMPFILE` on Linux, linked under a random name), renamed
//! over the destination within the same directory handle.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions};

use crate::guard::path::WorkspacePath;
use crate::reason::ReasonCode;

/// What kind of file an entry is (symlinks are not followed to say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A named pipe (FIFO).
    Fifo,
    /// A UNIX domain socket.
    Socket,
    /// A block device.
    BlockDevice,
    /// A character device.
    CharDevice,
    /// Anything else the platform has.
    Other,
}

impl FileKind {
    fn of(t: cap_std::fs::FileType) -> Self {
        if t.is_file() {
            return FileKind::File;
        }
        if t.is_dir() {
            return FileKind::Dir;
        }
        if t.is_symlink() {
            return FileKind::Symlink;
        }
        #[cfg(unix)]
        {
            use cap_std::fs::FileTypeExt;
            if t.is_fifo() {
                return FileKind::Fifo;
            }
            if t.is_socket() {
                return FileKind::Socket;
            }
            if t.is_block_device() {
                return FileKind::BlockDevice;
            }
            if t.is_char_device() {
                return FileKind::CharDevice;
            }
        }
        FileKind::Other
    }

    /// A short human name: `regular file`, `directory`, `FIFO`, ….
    pub fn name(self) -> &'static str {
        match self {
            FileKind::File => "regular file",
            FileKind::Dir => "directory",
            FileKind::Symlink => "symbolic link",
            FileKind::Fifo => "FIFO (named pipe)",
            FileKind::Socket => "socket",
            FileKind::BlockDevice => "block device",
            FileKind::CharDevice => "character device",
            FileKind::Other => "special file",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What [`WorkspacePath::metadata`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    kind: FileKind,
    len: u64,
    links: u64,
}

impl Metadata {
    fn of(m: &cap_std::fs::Metadata) -> Self {
        Metadata {
            kind: FileKind::of(m.file_type()),
            len: m.len(),
            links: link_count(m),
        }
    }

    /// The kind of file.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// `true` when the size is zero.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of hard links to the file (1 where the platform does not say).
    pub fn links(&self) -> u64 {
        self.links
    }
}

#[cfg(unix)]
fn link_count(m: &cap_std::fs::Metadata) -> u64 {
    use cap_std::fs::MetadataExt;
    m.nlink()
}

#[cfg(not(unix))]
fn link_count(_: &cap_std::fs::Metadata) -> u64 {
    1
}

/// One entry of [`WorkspacePath::read_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    name: OsString,
    kind: FileKind,
}

impl DirEntry {
    /// The entry's name in its directory.
    pub fn name(&self) -> &std::ffi::OsStr {
        &self.name
    }

    /// The kind of the entry itself (a symlink is reported as [`FileKind::Symlink`]).
    pub fn kind(&self) -> FileKind {
        self.kind
    }
}

/// How [`WorkspacePath::open_read_with`] and [`WorkspacePath::read_with`] open a file. The
/// default refuses hard-linked files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    allow_hard_links: bool,
}

impl ReadOptions {
    /// The default: regular files with a single link only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also read regular files that have more than one hard link. Only for a tool that knows
    /// nobody else can link into its workspace: a hard link can name a file outside it.
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.allow_hard_links = allow;
        self
    }
}

/// Why a workspace file operation failed. [`WorkspaceFsError::code`] gives its reason code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceFsError {
    /// Resolving the path left the workspace (a symlink swapped after the check, an absolute
    /// symlink, a magic link, `..` through a moved directory).
    #[error("refused: `{path}` leads outside the workspace")]
    Outside {
        /// The path, relative to the workspace.
        path: PathBuf,
    },
    /// A read found something that is not a regular file; it was not read.
    #[error("refused: `{path}` is a {kind}, not a regular file; only regular files are read")]
    NotARegularFile {
        /// The path, relative to the workspace.
        path: PathBuf,
        /// What it is.
        kind: FileKind,
    },
    /// A read found a regular file with more than one hard link; it was not read.
    #[error(
        "refused: `{path}` has {links} hard links; a hard link can name a file outside the \
         workspace, so it is not read"
    )]
    HardLinked {
        /// The path, relative to the workspace.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// The destination of a move that must not overwrite exists.
    #[error("`{path}` already exists, not overwriting")]
    AlreadyExists {
        /// The path, relative to the workspace.
        path: PathBuf,
    },
    /// The operation needs a file name and the path is the workspace root itself.
    #[error("the workspace root itself cannot be {op}")]
    Root {
        /// What was attempted (`written`, `moved`, `removed`).
        op: &'static str,
    },
    /// The two paths of a move belong to different workspaces.
    #[error("`{path}` is in another workspace")]
    OtherWorkspace {
        /// The destination, as given.
        path: PathBuf,
    },
    /// The operating system refused or failed the operation.
    #[error("cannot {op} `{path}`: {source}")]
    Io {
        /// What was attempted (`read`, `write`, …).
        op: &'static str,
        /// The path, relative to the workspace.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl WorkspaceFsError {
    /// The reason code: `path_outside_workspace` for what could reach outside the workspace (an
    /// escape, a hard link, another workspace), `tool_error` for the rest.
    pub fn code(&self) -> ReasonCode {
        match self {
            WorkspaceFsError::Outside { .. }
            | WorkspaceFsError::HardLinked { .. }
            | WorkspaceFsError::OtherWorkspace { .. } => ReasonCode::PathOutsideWorkspace,
            _ => ReasonCode::ToolError,
        }
    }

    /// The stable code a tool's error result carries ([`crate::outcome::ToolErrorCode`]), so a
    /// model (or a program) can tell the refusals apart: `outside_workspace`,
    /// `not_a_regular_file`, `hard_linked`, `already_exists`, `workspace_root`,
    /// `other_workspace`, `not_found`, `permission_denied` (the kernel said no, e.g. a
    /// read-only sandbox) or `io_error`.
    pub fn error_code(&self) -> &'static str {
        match self {
            WorkspaceFsError::Outside { .. } => "outside_workspace",
            WorkspaceFsError::NotARegularFile { .. } => "not_a_regular_file",
            WorkspaceFsError::HardLinked { .. } => "hard_linked",
            WorkspaceFsError::AlreadyExists { .. } => "already_exists",
            WorkspaceFsError::Root { .. } => "workspace_root",
            WorkspaceFsError::OtherWorkspace { .. } => "other_workspace",
            WorkspaceFsError::Io { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => "not_found",
                io::ErrorKind::PermissionDenied => "permission_denied",
                _ => "io_error",
            },
        }
    }

    /// `true` when the operation failed because the path does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, WorkspaceFsError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

impl crate::outcome::ToolErrorCode for WorkspaceFsError {
    fn code(&self) -> &str {
        self.error_code()
    }
}

/// The kind of error cap-std reports for an escape: `PermissionDenied` without an OS error
/// (openat2's `EXDEV`, and its own walk's refusals, both become this). A real `EACCES` carries
/// its errno.
fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none()
}

/// The flags of every read open: never wait for a FIFO writer, never take a terminal.
#[cfg(unix)]
fn read_open_options() -> OpenOptions {
    use cap_std::fs::OpenOptionsExt;
    use rustix::fs::OFlags;
    let mut o = OpenOptions::new();
    o.read(true);
    // The bits are small positive constants; the conversion cannot fail on any Unix.
    let flags = (OFlags::NONBLOCK | OFlags::NOCTTY).bits();
    o.custom_flags(i32::try_from(flags).unwrap_or(0));
    o
}

#[cfg(not(unix))]
fn read_open_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    o
}

impl WorkspacePath {
    /// The path relative to the workspace root (`.` for the root itself).
    pub fn relative(&self) -> &Path {
        match self.as_path().strip_prefix(&self.workspace().root) {
            Ok(rel) if rel.as_os_str().is_empty() => Path::new("."),
            Ok(rel) => rel,
            // The guard only makes paths under the root; `.` keeps any operation beneath it.
            Err(_) => Path::new("."),
        }
    }

    fn dir(&self) -> &Dir {
        &self.workspace().dir
    }

    fn err(&self, op: &'static str, source: io::Error) -> WorkspaceFsError {
        let path = self.relative().to_path_buf();
        if is_escape(&source) {
            WorkspaceFsError::Outside { path }
        } else {
            WorkspaceFsError::Io { op, path, source }
        }
    }

    /// The directory holding this path, opened beneath the workspace handle, and the last
    /// component's name. `Root` for the workspace root.
    fn parent_and_name(&self, op: &'static str) -> Result<(Dir, OsString), WorkspaceFsError> {
        let rel = self.relative();
        let name = match rel.components().next_back() {
            Some(Component::Normal(name)) => name.to_os_string(),
            _ => return Err(WorkspaceFsError::Root { op }),
        };
        let parent = rel.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = match parent {
            Some(p) => self.dir().open_dir(p),
            None => self.dir().try_clone(),
        }
        // `op` is what the root cannot be; here the parent could not be opened.
        .map_err(|e| self.err("open the directory of", e))?;
        Ok((dir, name))
    }

    /// Open the file for reading: a regular file with one hard link, opened beneath the
    /// workspace handle without blocking. See [`WorkspacePath::open_read_with`].
    pub fn open_read(&self) -> Result<std::fs::File, WorkspaceFsError> {
        self.open_read_with(ReadOptions::new())
    }

    /// Open the file for reading under `options`. Symlinks inside the workspace are followed;
    /// anything that resolves outside it is [`WorkspaceFsError::Outside`]. What is not a regular
    /// file is refused without reading (the open does not block, even on a FIFO), and so is a
    /// file with several hard links unless `options` allows them.
    pub fn open_read_with(&self, options: ReadOptions) -> Result<std::fs::File, WorkspaceFsError> {
        let file = match self.dir().open_with(self.relative(), &read_open_options()) {
            Ok(file) => file,
            Err(e) => {
                // Some special files fail the open itself (a socket: `ENXIO`); say what it is.
                if !is_escape(&e) {
                    if let Ok(m) = self.dir().metadata(self.relative()) {
                        let kind = FileKind::of(m.file_type());
                        if kind != FileKind::File {
                            return Err(WorkspaceFsError::NotARegularFile {
                                path: self.relative().to_path_buf(),
                                kind,
                            });
                        }
                    }
                }
                return Err(self.err("open", e));
            }
        };
        let meta = file.metadata().map_err(|e| self.err("inspect", e))?;
        let kind = FileKind::of(meta.file_type());
        if kind != FileKind::File {
            return Err(WorkspaceFsError::NotARegularFile {
                path: self.relative().to_path_buf(),
                kind,
            });
        }
        let links = link_count(&meta);
        if links > 1 && !options.allow_hard_links {
            return Err(WorkspaceFsError::HardLinked {
                path: self.relative().to_path_buf(),
                links,
            });
        }
        Ok(file.into_std())
    }

    /// Read at most `max_bytes` bytes of the file (what [`WorkspacePath::open_read`] accepts).
    pub fn read(&self, max_bytes: usize) -> Result<Vec<u8>, WorkspaceFsError> {
        self.read_with(max_bytes, ReadOptions::new())
    }

    /// Read at most `max_bytes` bytes of the file, opened under `options`.
    pub fn read_with(
        &self,
        max_bytes: usize,
        options: ReadOptions,
    ) -> Result<Vec<u8>, WorkspaceFsError> {
        let file = self.open_read_with(options)?;
        let mut buf = Vec::new();
        let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX);
        file.take(limit)
            .read_to_end(&mut buf)
            .map_err(|e| self.err("read", e))?;
        Ok(buf)
    }

    /// Read at most `max_bytes` bytes of the file as UTF-8 text; invalid UTF-8 (including a
    /// character cut at the limit) is an error.
    pub fn read_to_string(&self, max_bytes: usize) -> Result<String, WorkspaceFsError> {
        let bytes = self.read(max_bytes)?;
        String::from_utf8(bytes).map_err(|e| {
            self.err(
                "read",
                io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
            )
        })
    }

    /// Replace the file's contents atomically: the bytes go to a temporary file made in the
    /// destination's directory by the handle (unnamed `O_TMPFILE` where the kernel has it, else
    /// a random name created exclusively; never a name from the caller), which is then renamed
    /// over the destination. A failed write leaves the old file as it was. The parent directory
    /// must exist (see [`WorkspacePath::create_parent_dirs`]). A symlink at the destination is
    /// replaced by the file, never written through.
    ///
    /// On a thread confined by the kernel sandbox, `/proc` is out of reach, so an `O_TMPFILE`
    /// cannot be given a name (that goes through `/proc/self/fd`): there the temporary file is
    /// created exclusively under a random name instead.
    pub fn write_atomic(&self, contents: &[u8]) -> Result<(), WorkspaceFsError> {
        let (parent, name) = self.parent_and_name("written")?;
        if !NAMED_TEMP_ONLY.with(std::cell::Cell::get) {
            let mut tmp = cap_tempfile::TempFile::new(&parent).map_err(|e| self.err("write", e))?;
            tmp.write_all(contents).map_err(|e| self.err("write", e))?;
            // Dropping `tmp` on error removes the temporary file.
            match tmp.replace(&name) {
                Ok(()) => return Ok(()),
                // EOPNOTSUPP: `/proc/self/fd` is not usable here (a confined thread).
                Err(e) if e.raw_os_error() == Some(95) => NAMED_TEMP_ONLY.with(|c| c.set(true)),
                Err(e) => return Err(self.err("write", e)),
            }
        }
        write_via_named_temp(&parent, &name, contents).map_err(|e| self.err("write", e))
    }

    /// Create this directory and every missing parent, beneath the workspace handle.
    pub fn create_dir_all(&self) -> Result<(), WorkspaceFsError> {
        self.dir()
            .create_dir_all(self.relative())
            .map_err(|e| self.err("create directory", e))
    }

    /// Create every missing parent directory of this path, beneath the workspace handle.
    pub fn create_parent_dirs(&self) -> Result<(), WorkspaceFsError> {
        match self.relative().parent() {
            Some(p) if !p.as_os_str().is_empty() => self
                .dir()
                .create_dir_all(p)
                .map_err(|e| self.err("create directory", e)),
            _ => Ok(()),
        }
    }

    /// Move this file or directory to `destination`, which must not exist: never overwrites
    /// (`renameat2(RENAME_NOREPLACE)` on Linux, so the check and the move are one step). Both
    /// parents are opened beneath the workspace handle.
    pub fn rename_to(&self, destination: &WorkspacePath) -> Result<(), WorkspaceFsError> {
        self.rename_impl(destination, false)
    }

    /// Move this file or directory to `destination`, replacing what is there.
    pub fn rename_replacing(&self, destination: &WorkspacePath) -> Result<(), WorkspaceFsError> {
        self.rename_impl(destination, true)
    }

    fn rename_impl(
        &self,
        destination: &WorkspacePath,
        replace: bool,
    ) -> Result<(), WorkspaceFsError> {
        if !std::sync::Arc::ptr_eq(self.workspace(), destination.workspace()) {
            return Err(WorkspaceFsError::OtherWorkspace {
                path: destination.as_path().to_path_buf(),
            });
        }
        let (from_dir, from) = self.parent_and_name("moved")?;
        let (to_dir, to) = destination.parent_and_name("moved")?;
        let moved = if replace {
            from_dir.rename(&from, &to_dir, &to)
        } else {
            rename_noreplace(&from_dir, &from, &to_dir, &to)
        };
        moved.map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                WorkspaceFsError::AlreadyExists {
                    path: destination.relative().to_path_buf(),
                }
            } else {
                self.err("move", e)
            }
        })
    }

    /// Remove this file (or symlink: the link, never its target). Directories are refused.
    pub fn remove_file(&self) -> Result<(), WorkspaceFsError> {
        let (parent, name) = self.parent_and_name("removed")?;
        let meta = parent
            .symlink_metadata(&name)
            .map_err(|e| self.err("remove", e))?;
        if meta.is_dir() {
            return Err(WorkspaceFsError::Io {
                op: "remove",
                path: self.relative().to_path_buf(),
                source: io::Error::new(io::ErrorKind::IsADirectory, "is a directory"),
            });
        }
        // `unlinkat` without `AT_REMOVEDIR` also refuses a directory swapped in meanwhile.
        parent.remove_file(&name).map_err(|e| self.err("remove", e))
    }

    /// The entries of this directory (symlinks inside the workspace followed to reach it), in
    /// the order the file system gives them.
    pub fn read_dir(&self) -> Result<Vec<DirEntry>, WorkspaceFsError> {
        let dir = self
            .dir()
            .open_dir(self.relative())
            .map_err(|e| self.err("list", e))?;
        let mut out = Vec::new();
        for entry in dir.entries().map_err(|e| self.err("list", e))? {
            let entry = entry.map_err(|e| self.err("list", e))?;
            let kind = entry
                .file_type()
                .map(FileKind::of)
                .map_err(|e| self.err("list", e))?;
            out.push(DirEntry {
                name: entry.file_name(),
                kind,
            });
        }
        Ok(out)
    }

    /// Metadata of what the path resolves to (symlinks inside the workspace followed).
    pub fn metadata(&self) -> Result<Metadata, WorkspaceFsError> {
        self.dir()
            .metadata(self.relative())
            .map(|m| Metadata::of(&m))
            .map_err(|e| self.err("inspect", e))
    }

    /// Metadata of the path itself (a final symlink is reported, not followed).
    pub fn symlink_metadata(&self) -> Result<Metadata, WorkspaceFsError> {
        self.dir()
            .symlink_metadata(self.relative())
            .map(|m| Metadata::of(&m))
            .map_err(|e| self.err("inspect", e))
    }
}

thread_local! {
    /// This thread cannot name an `O_TMPFILE` (no `/proc`): make named temporary files.
    static NAMED_TEMP_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A temporary name nobody chooses: random (a randomly keyed hash of a counter, the time and the
/// thread), hidden, in the destination's directory.
fn random_temp_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!(".tool-write-{:016x}.tmp", h.finish())
}

/// `write_atomic` without `O_TMPFILE`: create a randomly named file exclusively, write it, rename
/// it over the destination; remove it on any failure.
fn write_via_named_temp(parent: &Dir, name: &std::ffi::OsStr, contents: &[u8]) -> io::Result<()> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..16 {
        let tmp = random_temp_name();
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = match parent.open_with(&tmp, &options) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                last = e;
                continue;
            }
            Err(e) => return Err(e),
        };
        let written = file
            .write_all(contents)
            .and_then(|()| parent.rename(&tmp, parent, name));
        if written.is_err() {
            let _ = parent.remove_file(&tmp);
        }
        return written;
    }
    Err(last)
}

/// Rename `from` in `from_dir` to `to` in `to_dir`, failing with `AlreadyExists` when `to` exists.
/// Both names are single components, so nothing is resolved outside the two handles.
#[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
fn rename_noreplace(
    from_dir: &Dir,
    from: &std::ffi::OsStr,
    to_dir: &Dir,
    to: &std::ffi::OsStr,
) -> io::Result<()> {
    rustix::fs::renameat_with(
        from_dir,
        from,
        to_dir,
        to,
        rustix::fs::RenameFlags::NOREPLACE,
    )
    .map_err(io::Error::from)
}

/// Without `renameat2`: a hard link fails when the destination exists, then the old name goes.
/// Files only (directories cannot be hard-linked).
#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn rename_noreplace(
    from_dir: &Dir,
    from: &std::ffi::OsStr,
    to_dir: &Dir,
    to: &std::ffi::OsStr,
) -> io::Result<()> {
    from_dir.hard_link(from, to_dir, to)?;
    from_dir.remove_file(from)
}
