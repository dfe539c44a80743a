//! The helper that confines spawned programs: `tool-sandbox-exec`.
//!
//! Started once per [`crate::Launcher`], as a **zygote**: a small single-threaded process that
//! keeps one **spare** ready per network class (the requests of programs without network come on
//! its stdin, those with network on its stdout; both `SOCK_SEQPACKET`). A spare is forked without
//! `exec`, and does before any request what costs milliseconds and does not depend on it: it
//! makes its pids cgroup and moves into it (see [`crate::cgroup`]), enters a new user namespace
//! (mapping the caller only), unshares PID, IPC and — without network — network namespaces,
//! applies the seccomp filter of its network class, builds the Landlock ruleset of the system
//! paths, and forks the **init**, PID 1 of the new PID namespace. The zygote itself opened the
//! system paths and applied the base seccomp filter once, before its first spare: every spare
//! inherits both. The spare itself then only waits for the
//! init (the *keeper*: its exit tells the zygote to remove the cgroup), and the zygote forks the
//! next spare when one is taken.
//!
//! The init takes one request from the control socket: the program's stdin, stdout and stderr
//! and a socket of its own (the *run socket*), passed as file descriptors; the spec comes over
//! the run socket (written ahead of the request). It sets `pids.max` from the spec, adds the
//! workspace rule to its Landlock ruleset and restricts itself, sets the rlimits, reports what it
//! enforced on stderr, starts the program (looked up in `PATH` first, so that it is started with
//! `posix_spawn` rather than a fork of the init) and reaps every orphan. It reports the program's exit code on the run socket and
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

use crate::error::SandboxError;
use crate::policy::Mode;
use crate::protocol::fail;
use crate::protocol::ZYGOTE;
pub use crate::protocol::{EXEC_FAILED, HELPER_FLAG, SETUP_FAILED};

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
    // A helper must confine from a single thread (user namespaces, fork): dispatched after the
    // program started threads (inside `#[tokio::main]`), it refuses with a status line.
    let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
    if threads > 1 {
        return Some(fail(
            &mut std::io::stderr(),
            &SandboxError::Setup(format!(
                "the helper was dispatched after the program started {threads} threads (inside \
                 `#[tokio::main]`?): dispatch it first thing in `main`, before any runtime \
                 (`#[tool_core::main]` does)"
            )),
        ));
    }
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
