//! What a confined thread or process may do, derived from a tool's declaration.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;

/// How a confined thread or process may use the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsAccess {
    /// Read (and execute) the workspace, write nothing anywhere (`safe` and `read_only` tools).
    ReadOnly,
    /// Read and write the workspace, nothing else (`mutation` and riskier tools).
    ReadWrite,
}

/// How much confinement a caller demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every requested restriction must be enforced, or the confinement fails with
    /// [`SandboxError::Unavailable`]. The default: fail closed.
    #[default]
    Required,
    /// Enforce what the kernel offers and report precisely what that was.
    BestEffort,
    /// Enforce nothing (the caller brings its own container). Reported as `none`.
    Off,
}

/// The capability class of a policy: what pools are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CapabilityClass {
    /// Workspace access.
    pub access: FsAccess,
    /// Whether TCP and non-UNIX sockets are allowed.
    pub network: bool,
}

impl CapabilityClass {
    /// A short name for logs and pool names, e.g. `read_only` or `read_write+net`.
    pub fn name(&self) -> &'static str {
        match (self.access, self.network) {
            (FsAccess::ReadOnly, false) => "read_only",
            (FsAccess::ReadOnly, true) => "read_only+net",
            (FsAccess::ReadWrite, false) => "read_write",
            (FsAccess::ReadWrite, true) => "read_write+net",
        }
    }
}

/// The file system and network rules for one confined thread or process.
///
/// Build it with [`SandboxPolicy::new`] from the declaration (risk gives the [`FsAccess`],
/// `open_world` the network flag); everything not listed here is denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// The workspace root (absolute; canonicalized by [`SandboxPolicy::new`]).
    pub workspace: PathBuf,
    /// What may be done inside the workspace.
    pub access: FsAccess,
    /// Allow TCP bind/connect and sockets of any family (`open_world` tools).
    pub network: bool,
    /// Read-only (and executable) system paths a program needs to run. Missing paths are skipped.
    /// Default: [`default_system_read_paths`].
    pub system_read_paths: Vec<PathBuf>,
    /// The directory given to processes as `TMPDIR`; must lie inside the workspace. `None`: the
    /// workspace itself. Writable only with [`FsAccess::ReadWrite`].
    pub tmpdir: Option<PathBuf>,
    /// Pathname UNIX sockets the tool declares (absolute paths of existing sockets): the only
    /// ones a confined program can reach (they are the only ones in its minimal root), and what
    /// lets a confined thread create UNIX sockets at all. Empty by default: no UNIX socket
    /// outside the workspace is reachable.
    #[serde(default)]
    pub unix_sockets: Vec<PathBuf>,
    /// Paths outside the workspace granted on top of it (a resource's declared needs, e.g. a
    /// database's directory): each a canonical existing file or directory, with what may be done
    /// beneath it. Programs get them bound into their minimal root too. Empty by default.
    #[serde(default)]
    pub granted_paths: Vec<PathGrant>,
    /// TCP ports a policy without `network` may connect to (Landlock ABI ≥ 4 rules by port; the
    /// kernel cannot check the host). A thread with ports may create TCP sockets (`SOCK_STREAM`,
    /// protocol TCP) of the IP families, nothing else of them; programs keep their empty network
    /// namespace, so ports reach handlers only. Empty by default.
    #[serde(default)]
    pub tcp_connect_ports: Vec<u16>,
}

/// A path outside the workspace a policy grants, and how.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PathGrant {
    /// The canonical path of an existing file or directory (a directory grants what lies
    /// beneath it, files made later included).
    pub path: PathBuf,
    /// Read (and execute), or read and write (create, remove, rename, truncate beneath a
    /// directory; write and truncate a file).
    pub access: FsAccess,
}

/// The system paths readable by default: what the dynamic loader, libc (locale, name service,
/// time zone, DNS) and common interpreters need. Deliberately not `/etc` as a whole (it holds
/// `/etc/shadow` and keys), nor `$HOME`, `/root`, `/tmp`, `/var`, `/proc`, `/sys`, `/run`.
pub fn default_system_read_paths() -> Vec<PathBuf> {
    [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/locale.alias",
        "/etc/localtime",
        "/etc/nsswitch.conf",
        "/etc/passwd",
        "/etc/group",
        "/etc/hosts",
        "/etc/host.conf",
        "/etc/resolv.conf",
        "/etc/gai.conf",
        "/etc/services",
        "/etc/protocols",
        "/etc/ssl/certs",
        "/etc/ca-certificates",
        "/etc/mime.types",
        "/etc/inputrc",
        "/etc/alternatives",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// Device files every program may read and write (output that goes nowhere).
pub(crate) const DEV_READ_WRITE: &[&str] = &["/dev/null"];
/// Device files every program may read.
pub(crate) const DEV_READ: &[&str] = &["/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

impl SandboxPolicy {
    /// A policy for `workspace` with the default system paths and no separate tmpdir.
    ///
    /// Fails with [`SandboxError::InvalidPolicy`] if the workspace does not exist or is not a
    /// directory: confining to a path that is not there would deny everything or, worse, a
    /// directory created later.
    pub fn new(
        workspace: impl AsRef<Path>,
        access: FsAccess,
        network: bool,
    ) -> Result<Self, SandboxError> {
        let workspace = canonical_dir(workspace.as_ref())?;
        Ok(SandboxPolicy {
            workspace,
            access,
            network,
            system_read_paths: default_system_read_paths(),
            tmpdir: None,
            unix_sockets: Vec::new(),
            granted_paths: Vec::new(),
            tcp_connect_ports: Vec::new(),
        })
    }

    /// Sets `TMPDIR` for processes to `dir` (absolute, or relative to the workspace); it must
    /// exist and lie inside the workspace.
    pub fn with_tmpdir(mut self, dir: impl AsRef<Path>) -> Result<Self, SandboxError> {
        let dir = dir.as_ref();
        let dir = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.workspace.join(dir)
        };
        let dir = canonical_dir(&dir)?;
        if !dir.starts_with(&self.workspace) {
            return Err(SandboxError::InvalidPolicy(format!(
                "tmpdir {} lies outside the workspace {}",
                dir.display(),
                self.workspace.display()
            )));
        }
        self.tmpdir = Some(dir);
        Ok(self)
    }

    /// Replaces the system read paths (absolute paths only).
    pub fn with_system_read_paths(
        mut self,
        paths: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Self, SandboxError> {
        let paths: Vec<PathBuf> = paths.into_iter().collect();
        if let Some(p) = paths.iter().find(|p| !p.is_absolute()) {
            return Err(SandboxError::InvalidPolicy(format!(
                "system read path {} is not absolute",
                p.display()
            )));
        }
        self.system_read_paths = paths;
        Ok(self)
    }

    /// Declares the pathname UNIX sockets the tool may connect to (see
    /// [`SandboxPolicy::unix_sockets`]). Each must be an absolute path to an existing socket.
    pub fn with_unix_sockets(
        mut self,
        sockets: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Self, SandboxError> {
        let mut checked = Vec::new();
        for socket in sockets {
            checked.push(check_socket(&socket)?);
        }
        self.unix_sockets = checked;
        Ok(self)
    }

    /// Grants paths outside the workspace (see [`SandboxPolicy::granted_paths`]). Each must be
    /// absolute, without `..`, an existing file or directory, neither `/` nor overlapping the
    /// workspace (whose access comes from the tool's risk); it is canonicalized. Fails closed
    /// with [`SandboxError::InvalidPolicy`].
    pub fn with_granted_paths(
        mut self,
        grants: impl IntoIterator<Item = PathGrant>,
    ) -> Result<Self, SandboxError> {
        let mut checked = Vec::new();
        for grant in grants {
            checked.push(check_grant(&grant, &self.workspace)?);
        }
        checked.sort();
        checked.dedup();
        self.granted_paths = checked;
        Ok(self)
    }

    /// Grants TCP connections to `ports` to a policy without network (see
    /// [`SandboxPolicy::tcp_connect_ports`]); port 0 is refused.
    pub fn with_tcp_connect_ports(
        mut self,
        ports: impl IntoIterator<Item = u16>,
    ) -> Result<Self, SandboxError> {
        let mut ports: Vec<u16> = ports.into_iter().collect();
        if ports.contains(&0) {
            return Err(SandboxError::InvalidPolicy(
                "tcp port 0 cannot be granted".to_owned(),
            ));
        }
        ports.sort_unstable();
        ports.dedup();
        self.tcp_connect_ports = ports;
        Ok(self)
    }

    /// Whether a thread of this policy may create TCP sockets: with `network`, or with ports.
    pub(crate) fn tcp_sockets(&self) -> bool {
        self.network || !self.tcp_connect_ports.is_empty()
    }

    /// The capability class of this policy.
    pub fn class(&self) -> CapabilityClass {
        CapabilityClass {
            access: self.access,
            network: self.network,
        }
    }

    /// The `TMPDIR` given to processes.
    pub fn tmpdir(&self) -> &Path {
        self.tmpdir.as_deref().unwrap_or(&self.workspace)
    }

    /// Re-checks a policy that came from elsewhere (deserialized, built by hand).
    pub(crate) fn validate(&self) -> Result<(), SandboxError> {
        if !self.workspace.is_absolute() || !self.workspace.is_dir() {
            return Err(SandboxError::InvalidPolicy(format!(
                "workspace {} is not an existing absolute directory",
                self.workspace.display()
            )));
        }
        for socket in &self.unix_sockets {
            check_socket(socket)?;
        }
        for grant in &self.granted_paths {
            if check_grant(grant, &self.workspace)? != *grant {
                return Err(SandboxError::InvalidPolicy(format!(
                    "granted path {} is not canonical",
                    grant.path.display()
                )));
            }
        }
        if self.tcp_connect_ports.contains(&0) {
            return Err(SandboxError::InvalidPolicy(
                "tcp port 0 cannot be granted".to_owned(),
            ));
        }
        if let Some(t) = &self.tmpdir {
            if !t.starts_with(&self.workspace) {
                return Err(SandboxError::InvalidPolicy(format!(
                    "tmpdir {} lies outside the workspace",
                    t.display()
                )));
            }
        }
        Ok(())
    }
}

/// A granted path: absolute, no `..`, canonical, existing, a file or a directory, not `/`, and
/// neither inside nor around the workspace.
fn check_grant(grant: &PathGrant, workspace: &Path) -> Result<PathGrant, SandboxError> {
    use std::path::Component;
    let path = &grant.path;
    let invalid = |why: String| SandboxError::InvalidPolicy(format!("granted path {why}"));
    if !path.is_absolute() {
        return Err(invalid(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(invalid(format!("{} contains `..`", path.display())));
    }
    let canonical = path
        .canonicalize()
        .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    if canonical.parent().is_none() {
        return Err(invalid(format!(
            "{} is the root directory: grant the directory the resource needs, not `/`",
            path.display()
        )));
    }
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| invalid(format!("{}: {e}", canonical.display())))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(invalid(format!(
            "{} is neither a directory nor a regular file",
            canonical.display()
        )));
    }
    if canonical.starts_with(workspace) || workspace.starts_with(&canonical) {
        return Err(invalid(format!(
            "{} overlaps the workspace {} (what a tool may do there comes from its risk)",
            canonical.display(),
            workspace.display()
        )));
    }
    Ok(PathGrant {
        path: canonical,
        access: grant.access,
    })
}

/// A declared UNIX socket: absolute, canonical, and a socket now.
fn check_socket(path: &Path) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::FileTypeExt;
    let invalid = |why: String| SandboxError::InvalidPolicy(format!("unix socket {why}"));
    if !path.is_absolute() {
        return Err(invalid(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    let canonical = path
        .canonicalize()
        .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| invalid(format!("{}: {e}", canonical.display())))?;
    if !meta.file_type().is_socket() {
        return Err(invalid(format!("{} is not a socket", canonical.display())));
    }
    Ok(canonical)
}

fn canonical_dir(path: &Path) -> Result<PathBuf, SandboxError> {
    let canonical = path.canonicalize().map_err(|e| {
        SandboxError::InvalidPolicy(format!("cannot resolve {}: {e}", path.display()))
    })?;
    if !canonical.is_dir() {
        return Err(SandboxError::InvalidPolicy(format!(
            "{} is not a directory",
            canonical.display()
        )));
    }
    Ok(canonical)
}

/// The default memory bound of one run's process tree: 1 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 1 << 30;

/// Resource limits for a confined process and all its descendants (`setrlimit`, soft = hard, and
/// the tree's cgroups).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    /// CPU seconds (`RLIMIT_CPU`): SIGXCPU, then SIGKILL.
    pub cpu_secs: Option<u64>,
    /// Address space in bytes (`RLIMIT_AS`).
    pub address_space_bytes: Option<u64>,
    /// Processes of the user (`RLIMIT_NPROC`); see the crate docs for why root is exempt.
    pub processes: Option<u64>,
    /// Largest file that may be written, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
    /// Memory of the whole process tree in bytes, page cache included (a
    /// memory cgroup per tree, where the machine offers one: see [`crate::cgroup`]); the kernel
    /// kills a process of the tree when it is reached, and the run reports it.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
}

impl Default for Rlimits {
    /// Generous enough for bash, Python and common tools; tight enough to stop runaways.
    fn default() -> Self {
        Rlimits {
            cpu_secs: Some(60),
            address_space_bytes: Some(4 << 30),
            processes: Some(256),
            file_size_bytes: Some(256 << 20),
            open_files: Some(1024),
            memory_bytes: Some(DEFAULT_MEMORY_BYTES),
        }
    }
}

/// A resource limit a run reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitHit {
    /// [`Rlimits::memory_bytes`]: the kernel killed a process of the tree.
    Memory,
    /// [`Rlimits::processes`]: a fork failed.
    Processes,
    /// [`Rlimits::file_size_bytes`]: the program died of `SIGXFSZ`.
    FileSize,
    /// [`Rlimits::cpu_secs`]: the program died of `SIGXCPU`.
    Cpu,
}

impl LimitHit {
    /// The stable name: `memory`, `processes`, `file_size`, `cpu`.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitHit::Memory => "memory",
            LimitHit::Processes => "processes",
            LimitHit::FileSize => "file_size",
            LimitHit::Cpu => "cpu",
        }
    }

    /// The limit of this name.
    pub fn parse(name: &str) -> Option<LimitHit> {
        [
            LimitHit::Memory,
            LimitHit::Processes,
            LimitHit::FileSize,
            LimitHit::Cpu,
        ]
        .into_iter()
        .find(|l| l.as_str() == name)
    }
}
