//! What a resource needs from the sandbox: [`Grants`], declared with the resource
//! ([`ExecutorConfig::resource_with_grants`](crate::ExecutorConfig::resource_with_grants)) and
//! added to the confinement of every tool that takes it.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// What may be done beneath a granted path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GrantAccess {
    /// Read (and execute) it, and what lies beneath it.
    Read,
    /// Read and write it: beneath a directory, also create, remove, rename and truncate (what a
    /// database needs for its `-journal`, `-wal` and `-shm` files: grant its directory).
    ReadWrite,
}

impl GrantAccess {
    fn as_str(self) -> &'static str {
        match self {
            GrantAccess::Read => "read",
            GrantAccess::ReadWrite => "read_write",
        }
    }
}

/// What a resource needs from the kernel sandbox beyond the workspace: paths outside it, UNIX
/// sockets, TCP hosts and ports. Every tool that takes the resource (a `State<T>` parameter) is
/// confined with these added, and with nothing else: a grant never reaches beyond what it names.
///
/// ```
/// use tool_core::sandbox::Grants;
/// // A SQLite database in a directory of its own (its journal is created beside it), and an
/// // HTTP API on one port.
/// let grants = Grants::new()
///     .read_write("/var/lib/app/db")
///     .connect("api.example.com", 443);
/// # let _ = grants;
/// ```
///
/// What the kernel enforces (Landlock, seccomp; checked when the executor starts, which refuses
/// an invalid grant with [`ExecutorError::InvalidGrant`](crate::executor::ExecutorError::InvalidGrant)):
///
/// - **Paths**: absolute, without `..`, existing, not `/`, not overlapping the workspace (what a
///   tool may do there comes from its risk). A directory grants what lies beneath it, files
///   created later included; a file grants that file only (it cannot be replaced, and files next
///   to it cannot be created: grant a directory for a database with companions). Programs the
///   tool starts see the granted paths in their minimal root, read-only for [`GrantAccess::Read`].
/// - **UNIX sockets**: as a tool's `unix_sockets` declaration.
/// - **TCP**: the kernel restricts TCP `connect` by **port** only (Landlock has no rule for the
///   peer's address), so a tool granted `connect("api.example.com", 443)` may connect to port 443
///   of any host. The hosts are recorded (audit, `doctor`) but not enforced: put a proxy in front
///   of the executor to bind hosts. A confined thread with a port grant may create TCP sockets of
///   the IP families and nothing else of them (no UDP, so no DNS lookups over UDP from the
///   confined thread: resolve before, or use an address). Port grants reach handlers only:
///   programs the tool starts keep their empty network namespace. A tool declared `open_world`
///   has the network already.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Grants {
    pub(crate) paths: BTreeSet<(PathBuf, GrantAccess)>,
    pub(crate) unix_sockets: BTreeSet<PathBuf>,
    pub(crate) connect: BTreeSet<(String, u16)>,
}

impl Grants {
    /// Nothing granted.
    pub fn new() -> Self {
        Grants::default()
    }

    /// Read (and execute) `path`, a file or a directory outside the workspace.
    pub fn read(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.insert((path.into(), GrantAccess::Read));
        self
    }

    /// Read and write `path`, a file or a directory outside the workspace.
    pub fn read_write(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.insert((path.into(), GrantAccess::ReadWrite));
        self
    }

    /// Connect to the pathname UNIX socket `path` (an existing socket).
    pub fn unix_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.unix_sockets.insert(path.into());
        self
    }

    /// Connect over TCP to `host` on `port`. The kernel enforces the port, not the host (see
    /// [`Grants`]).
    pub fn connect(mut self, host: impl Into<String>, port: u16) -> Self {
        self.connect.insert((host.into(), port));
        self
    }

    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.unix_sockets.is_empty() && self.connect.is_empty()
    }

    /// Adds everything `other` grants.
    pub(crate) fn extend(&mut self, other: &Grants) {
        self.paths.extend(other.paths.iter().cloned());
        self.unix_sockets.extend(other.unix_sockets.iter().cloned());
        self.connect.extend(other.connect.iter().cloned());
    }

    /// The TCP ports granted.
    pub(crate) fn ports(&self) -> BTreeSet<u16> {
        self.connect.iter().map(|(_, p)| *p).collect()
    }

    /// Checks every grant and resolves its paths: what the executor refuses to start with, with
    /// the reason. The workspace is canonical.
    pub(crate) fn checked(&self, workspace: &Path) -> Result<Grants, String> {
        let mut out = Grants::new();
        for (path, access) in &self.paths {
            out.paths
                .insert((check_path(path, workspace, "path")?, *access));
        }
        for socket in &self.unix_sockets {
            out.unix_sockets
                .insert(check_path(socket, workspace, "unix socket")?);
        }
        for (host, port) in &self.connect {
            let bad_host = host.is_empty()
                || host.len() > 253
                || !host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-:[]_".contains(c));
            if bad_host {
                return Err(format!(
                    "granted host `{host}` is not a host name or address"
                ));
            }
            if *port == 0 {
                return Err(format!("granted port of `{host}` is 0"));
            }
            out.connect.insert((host.clone(), *port));
        }
        Ok(out)
    }
}

/// A granted path: absolute, no `..`, existing, canonical, not `/`, not overlapping the
/// workspace.
fn check_path(path: &Path, workspace: &Path, what: &str) -> Result<PathBuf, String> {
    if !path.is_absolute() {
        return Err(format!(
            "granted {what} {} is not an absolute path",
            path.display()
        ));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(format!("granted {what} {} contains `..`", path.display()));
    }
    let canonical = path
        .canonicalize()
        .map_err(|e| format!("granted {what} {}: {e}", path.display()))?;
    if canonical.parent().is_none() {
        return Err(format!(
            "granted {what} {} is the root directory: grant what the resource needs, not `/`",
            path.display()
        ));
    }
    if canonical.starts_with(workspace) || workspace.starts_with(&canonical) {
        return Err(format!(
            "granted {what} {} overlaps the workspace {} (what a tool may do there comes from its \
             risk)",
            canonical.display(),
            workspace.display()
        ));
    }
    Ok(canonical)
}

impl fmt::Display for Grants {
    /// `read_write /var/lib/app/db, unix /run/app.sock, tcp api.example.com:443`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        for (path, access) in &self.paths {
            parts.push(format!("{} {}", access.as_str(), path.display()));
        }
        for socket in &self.unix_sockets {
            parts.push(format!("unix {}", socket.display()));
        }
        for (host, port) in &self.connect {
            parts.push(format!("tcp {host}:{port}"));
        }
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_checked_and_resolved() {
        let ws = tempfile::tempdir().expect("ws");
        let ws = ws.path().canonicalize().expect("canonical");
        let outside = tempfile::tempdir().expect("outside");
        let ok = Grants::new()
            .read_write(outside.path())
            .connect("127.0.0.1", 8080)
            .checked(&ws)
            .expect("valid");
        assert_eq!(ok.paths.len(), 1);
        assert_eq!(ok.ports().into_iter().collect::<Vec<_>>(), [8080]);
        for (bad, why) in [
            (Grants::new().read("relative/db"), "not an absolute path"),
            (Grants::new().read("/"), "root directory"),
            (
                Grants::new().read(outside.path().join("..").join("x")),
                "contains `..`",
            ),
            (Grants::new().read(&ws), "overlaps the workspace"),
            (
                Grants::new().read(ws.parent().expect("parent")),
                "overlaps the workspace",
            ),
            (Grants::new().read("/nonexistent/db"), "No such file"),
            (Grants::new().connect("a b", 80), "not a host name"),
            (Grants::new().connect("h", 0), "port of `h` is 0"),
        ] {
            let e = bad.checked(&ws).expect_err(why);
            assert!(e.contains(why), "{e} / {why}");
        }
        assert_eq!(
            Grants::new().read_write("/x").connect("h", 1).to_string(),
            "read_write /x, tcp h:1"
        );
    }
}
