//! The helper that confines spawned programs: `tool-sandbox-exec`.
//!
//! Started once per [`crate::Launcher`], as a **zygote**: a small single-threaded process that
//! keeps one **spare** ready per network class (the requests of programs without network come on
//! its stdin, those with network on its stdout; both `SOCK_SEQPACKET`). A spare is forked without
//! `exec`, and does before any request what costs milliseconds and does not depend on it: it
//! makes its pids cgroup and moves into it (see [`crate::cgroup`]), enters a new user namespace
//! (mapping the caller only), unshares PID, IPC and — without network — network namespaces, and
//! forks the **init**, PID 1 of the new PID namespace. The spare itself then only waits for the
//! init (the *keeper*: its exit tells the zygote to remove the cgroup), and the zygote forks the
//! next spare when one is taken.
//!
//! The init takes one request from the control socket: the program's stdin, stdout and stderr
//! and a socket of its own (the *run socket*), passed as file descriptors; the spec comes over
//! the run socket (written ahead of the request). It sets `pids.max` from the spec, confines
//! itself (Landlock, seccomp), sets the rlimits, reports what it enforced on stderr, starts the
//! program and reaps every orphan. It reports the program's exit code on the run socket and
//! exits; when it exits, the kernel kills every process left in the namespace, so no `&`,
//! `setsid` or `nohup` child outlives the call. It also exits when the run socket is shut down
//! or closed: a timeout, a cancellation, a dropped run, a dead executor. Processes in the
//! namespace cannot signal it (PID 1 only gets the signals it handles, and it handles none).
//! The program is the only `exec` of a run.
//!
//! Nothing ties a run to the thread that started it: its life is the run socket's. Setup failures
//! are reported on the program's stderr as one `err` status line and exit code [`SETUP_FAILED`];
//! the program is never started then.

use std::ffi::OsString;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::policy::{Mode, Rlimits, SandboxPolicy};

/// The first argument that selects helper mode (so any binary can embed the helper).
pub const HELPER_FLAG: &str = "--tool-sandbox-exec";
/// Exit code of the helper when confinement could not be set up.
pub const SETUP_FAILED: i32 = 125;
/// Exit code of the helper when the program could not be started.
pub const EXEC_FAILED: i32 = 127;
/// Prefix of the status line that says the program starts confined.
pub(crate) const OK_PREFIX: &str = "\u{1}tool-sandbox-exec:ok ";
/// Prefix of the status line that says setup failed.
pub(crate) const ERR_PREFIX: &str = "\u{1}tool-sandbox-exec:err ";
/// The helper mode argument of the zygote.
pub(crate) const ZYGOTE: &str = "zygote";
/// The largest spec an init reads (arguments and environment included).
pub(crate) const MAX_SPEC: usize = 16 << 20;
/// Prefix of the line an init ends its run socket with: `exit CODE`.
pub(crate) const EXIT_PREFIX: &str = "exit ";

/// What the helper runs, and how: serialized by the library, read by the init.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecSpec {
    pub policy: SandboxPolicy,
    pub mode: Mode,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: std::path::PathBuf,
    pub env: Vec<(String, String)>,
    pub limits: Rlimits,
}

/// Runs the helper if this process was started as one (first argument [`HELPER_FLAG`]) and
/// returns its exit code; `None` otherwise. A binary that embeds the helper calls this first
/// thing in `main`, before any thread starts, and exits with the code.
pub fn dispatch() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).map(|a| a.as_os_str()) != Some(HELPER_FLAG.as_ref()) {
        return None;
    }
    let mode = args
        .get(3)
        .and_then(|a| a.to_str())
        .and_then(|m| serde_json::from_value::<Mode>(serde_json::Value::from(m)).ok());
    Some(match (args.get(2).and_then(|a| a.to_str()), mode) {
        (Some(ZYGOTE), Some(mode)) if args.len() == 4 => crate::zygote::serve(mode),
        _ => fail(
            &mut std::io::stderr(),
            &SandboxError::Setup(format!(
                "usage: {HELPER_FLAG} {ZYGOTE} required|best_effort|off (started by \
                 tool-sandbox, not by hand)"
            )),
        ),
    })
}

/// Writes the `err` status line for `e` and returns [`SETUP_FAILED`].
pub(crate) fn fail(out: &mut impl Write, e: &SandboxError) -> i32 {
    let _ = writeln!(
        out,
        "{ERR_PREFIX}{} {}",
        e.code(),
        e.to_string().replace('\n', " ")
    );
    SETUP_FAILED
}

pub(crate) fn setup(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("{what}: {e}"))
}

pub(crate) fn parse_spec(json: &[u8]) -> Result<ExecSpec, SandboxError> {
    let spec: ExecSpec = serde_json::from_slice(json).map_err(|e| setup("bad spec", e))?;
    spec.policy.validate()?;
    Ok(spec)
}
