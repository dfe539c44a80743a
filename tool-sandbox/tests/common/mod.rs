//! Shared set-up for the kernel tests: workspaces, canaries outside them, the helper, skips.
#![allow(dead_code)]

use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tool_sandbox::{FsAccess, Launcher, Mode, SandboxPolicy, Support};

/// A workspace and, next to it (outside it), a directory with a canary file.
pub struct Scene {
    pub workspace: tempfile::TempDir,
    pub outside: tempfile::TempDir,
}

impl Scene {
    pub fn new() -> Scene {
        let workspace = tempfile::tempdir().expect("workspace");
        let outside = tempfile::tempdir().expect("outside dir");
        std::fs::write(workspace.path().join("inside.txt"), "inside").expect("inside file");
        std::fs::write(outside.path().join("canary.txt"), "canary").expect("canary");
        Scene { workspace, outside }
    }

    pub fn ws(&self) -> &Path {
        self.workspace.path()
    }

    pub fn canary(&self) -> PathBuf {
        self.outside.path().join("canary.txt")
    }

    pub fn policy(&self, access: FsAccess, network: bool) -> SandboxPolicy {
        SandboxPolicy::new(self.ws(), access, network).expect("policy")
    }
}

/// What the kernel offers, probed once.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(Support::probe)
}

/// False (after a loud message) when the kernel truly lacks what the test needs.
pub fn kernel_confines_threads(test: &str) -> bool {
    let s = support();
    if s.threads_fully_confined() {
        return true;
    }
    eprintln!(
        "\n!!!!! SKIPPED {test}: this kernel lacks Landlock ABI >= 6 or seccomp ({s}) !!!!!\n"
    );
    false
}

/// False (after a loud message) when the kernel cannot confine processes.
pub fn kernel_confines_processes(test: &str) -> bool {
    let s = support();
    if s.processes_fully_confined() {
        return true;
    }
    eprintln!(
        "\n!!!!! SKIPPED {test}: this kernel lacks Landlock, seccomp, user or PID namespaces ({s}) !!!!!\n"
    );
    false
}

pub fn launcher() -> Launcher {
    Launcher::locate(
        Some(Path::new(env!("CARGO_BIN_EXE_tool-sandbox-exec"))),
        Mode::Required,
    )
    .expect("helper built by cargo")
}

/// Runs `f` on a fresh thread confined to `policy` (Required), returning its result.
pub fn on_confined_thread<R: Send + 'static>(
    policy: SandboxPolicy,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    std::thread::spawn(move || {
        let e = tool_sandbox::confine_current_thread(&policy, Mode::Required)
            .expect("confine the thread");
        assert!(e.is_full(), "not fully confined: {e}");
        f()
    })
    .join()
    .expect("confined thread panicked")
}

/// A stream and a datagram socket under a directory of their own (outside any workspace); nonblocking, so a test can see that
/// nothing arrived.
pub struct Sockets {
    _dir: tempfile::TempDir,
    pub stream: UnixListener,
    pub stream_path: PathBuf,
    pub datagram: UnixDatagram,
    pub datagram_path: PathBuf,
}

impl Sockets {
    pub fn new() -> Sockets {
        let dir = tempfile::tempdir().expect("socket dir");
        let stream_path = dir.path().join("stream.sock");
        let datagram_path = dir.path().join("dgram.sock");
        let stream = UnixListener::bind(&stream_path).expect("stream socket");
        stream.set_nonblocking(true).expect("nonblocking");
        let datagram = UnixDatagram::bind(&datagram_path).expect("datagram socket");
        datagram.set_nonblocking(true).expect("nonblocking");
        Sockets {
            _dir: dir,
            stream,
            stream_path,
            datagram,
            datagram_path,
        }
    }

    /// Whether anything connected or arrived.
    pub fn reached(&self) -> bool {
        let mut buf = [0u8; 64];
        self.stream.accept().is_ok() || self.datagram.recv(&mut buf).is_ok()
    }
}

/// PIDs of live (non-zombie) processes whose command line contains `marker`.
pub fn processes_with_marker(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && pid != std::process::id() {
            found.push(pid);
        }
    }
    found
}

/// A marker unique to this test run.
pub fn marker(name: &str) -> String {
    format!("tsbx-{name}-{}", std::process::id())
}

pub fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}
