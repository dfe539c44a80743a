//! The helper that confines spawned programs: `tool-sandbox-exec`.
//!
//! Two processes, both this binary, so that no `unsafe` `pre_exec`/`fork` is needed:
//!
//! 1. The **supervisor** (started by [`crate::SandboxedCommand`]) joins the pids cgroup the
//!    library made for the tree, if any (see [`crate::cgroup`]), enters a new user namespace
//!    (mapping itself only) and unshares PID, IPC and — without network — network namespaces, then
//!    starts the init. It waits; on `SIGTERM` (timeout, cancellation) it kills the init with
//!    `SIGKILL` and waits for it, so the whole tree is gone when it exits.
//! 2. The **init** is PID 1 of the new PID namespace. It confines itself (Landlock, seccomp),
//!    sets the rlimits, reports what it enforced on stderr, starts the program and reaps every
//!    orphan. When it exits (the program ended, or it was killed), the kernel kills every process
//!    left in the namespace: no `&`, `setsid` or `nohup` child outlives the call.
//!
//! Both die with their parent (`PR_SET_PDEATHSIG`). Setup failures are reported on stderr as one
//! `err` status line and exit code [`SETUP_FAILED`]; the program is never started then.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Command;

use nix::sched::{unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::confine::confine_current_thread;
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

/// What the helper runs, and how: serialized by the library, read by the helper.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecSpec {
    pub policy: SandboxPolicy,
    pub mode: Mode,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: std::path::PathBuf,
    pub env: Vec<(String, String)>,
    pub limits: Rlimits,
    /// The pids cgroup the supervisor joins before it forks (made by the library), if any.
    #[serde(default)]
    pub pids_cgroup: Option<std::path::PathBuf>,
}

/// Namespaces the supervisor set up, passed on to the init for its report.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Namespaces {
    pid: bool,
    net: bool,
    /// The supervisor joined its pids cgroup (not a namespace, but set up at the same point).
    pids_cgroup: bool,
}

/// Runs the helper if this process was started as one (first argument [`HELPER_FLAG`]) and
/// returns its exit code; `None` otherwise. A binary that embeds the helper calls this first
/// thing in `main` and exits with the code.
pub fn dispatch() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).map(|a| a.as_os_str()) != Some(HELPER_FLAG.as_ref()) {
        return None;
    }
    let args: Vec<String> = args
        .iter()
        .skip(2)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Some(match args.first().map(String::as_str) {
        Some("supervise") if args.len() == 2 => supervise(&args[1]),
        Some("init") if args.len() == 4 => init(&args[1], &args[2], &args[3]),
        _ => fail(&SandboxError::Setup(format!(
            "usage: {HELPER_FLAG} supervise SPEC (started by tool-sandbox, not by hand)"
        ))),
    })
}

fn fail(e: &SandboxError) -> i32 {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{ERR_PREFIX}{} {}",
        e.code(),
        e.to_string().replace('\n', " ")
    );
    SETUP_FAILED
}

fn setup(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("{what}: {e}"))
}

fn parse_spec(json: &str) -> Result<ExecSpec, SandboxError> {
    let spec: ExecSpec = serde_json::from_str(json).map_err(|e| setup("bad spec", e))?;
    spec.policy.validate()?;
    Ok(spec)
}

/// Signals the helpers take through `sigwait` instead of dying of them.
fn waited_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
    ] {
        set.add(s);
    }
    set
}

fn supervise(json: &str) -> i32 {
    match try_supervise(json) {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

fn try_supervise(json: &str) -> Result<i32, SandboxError> {
    let spec = parse_spec(json)?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| setup("pdeathsig", e))?;
    // Before anything forks, so that every descendant is counted; from the initial user
    // namespace, where the cgroup files are writable.
    let pids_cgroup = match &spec.pids_cgroup {
        Some(dir) if spec.mode != Mode::Off => match crate::cgroup::join(dir) {
            Ok(()) => true,
            Err(e) if spec.mode == Mode::Required => {
                return Err(setup(&format!("pids cgroup {}", dir.display()), e))
            }
            Err(_) => false,
        },
        _ => false,
    };
    let mut namespaces = if spec.mode == Mode::Off {
        Namespaces::default()
    } else {
        match enter_namespaces(spec.policy.network) {
            Ok(ns) => ns,
            Err(e) if spec.mode == Mode::Required => return Err(e),
            Err(_) => Namespaces::default(),
        }
    };
    namespaces.pids_cgroup = pids_cgroup;
    let signals = waited_signals();
    signals
        .thread_block()
        .map_err(|e| setup("sigprocmask", e))?;
    // The child's signal mask is reset by std before exec.
    let mut init = Command::new("/proc/self/exe")
        .arg0("tool-sandbox-exec")
        .arg(HELPER_FLAG)
        .arg("init")
        .arg(json)
        .arg(std::process::id().to_string())
        .arg(serde_json::to_string(&namespaces).map_err(|e| setup("spec", e))?)
        .env_clear()
        .spawn()
        .map_err(|e| setup("cannot start the init", e))?;
    let init_pid = Pid::from_raw(init.id() as i32);
    loop {
        match signals.wait() {
            Ok(Signal::SIGCHLD) => {
                if let Some(status) = init.try_wait().map_err(|e| setup("wait", e))? {
                    return Ok(exit_code(status));
                }
            }
            Ok(_) => {
                // Timeout or cancellation: the init's death takes the whole namespace with it.
                let _ = kill(init_pid, Signal::SIGKILL);
                let _ = init.wait();
                return Ok(128 + Signal::SIGKILL as i32);
            }
            Err(e) => return Err(setup("sigwait", e)),
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(SETUP_FAILED)
}

/// A user namespace that maps only the caller (so no outside capability is kept), then PID and
/// IPC namespaces, and an empty network namespace unless the policy allows network.
fn enter_namespaces(network: bool) -> Result<Namespaces, SandboxError> {
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| setup("user namespace", e))?;
    std::fs::write("/proc/self/setgroups", "deny").map_err(|e| setup("setgroups", e))?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")).map_err(|e| setup("uid_map", e))?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")).map_err(|e| setup("gid_map", e))?;
    let mut flags = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    if !network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| setup("pid namespace", e))?;
    Ok(Namespaces {
        pid: true,
        net: !network,
        pids_cgroup: false,
    })
}

fn init(json: &str, supervisor: &str, namespaces: &str) -> i32 {
    match try_init(json, supervisor, namespaces) {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

fn try_init(json: &str, supervisor: &str, namespaces: &str) -> Result<i32, SandboxError> {
    let spec = parse_spec(json)?;
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| setup("pdeathsig", e))?;
    // The supervisor may have died before the line above; then nobody would reap us.
    if !std::path::Path::new(&format!("/proc/{supervisor}")).exists() {
        return Err(SandboxError::Setup("the supervisor is gone".to_owned()));
    }
    let namespaces: Namespaces =
        serde_json::from_str(namespaces).map_err(|e| setup("namespaces", e))?;
    let signals = waited_signals();
    signals
        .thread_block()
        .map_err(|e| setup("sigprocmask", e))?;
    let mut enforcement = confine_current_thread(&spec.policy, spec.mode)?;
    enforcement.pid_namespace = namespaces.pid;
    enforcement.net_namespace = namespaces.net;
    enforcement.pids_cgroup = namespaces.pids_cgroup;
    set_limits(&spec.limits)?;
    {
        let status = serde_json::to_string(&enforcement).map_err(|e| setup("status", e))?;
        let mut err = std::io::stderr().lock();
        writeln!(err, "{OK_PREFIX}{status}").map_err(|e| setup("status", e))?;
    }
    let child = Command::new(&spec.program)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "tool-sandbox-exec: cannot start {}: {e}",
                spec.program
            );
            return Ok(EXEC_FAILED);
        }
    };
    let main = Pid::from_raw(child.id() as i32);
    // PID 1 reaps every orphan; the program's own status is the result.
    loop {
        match signals.wait() {
            Ok(Signal::SIGCHLD) => loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(pid, code)) if pid == main => return Ok(code),
                    Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                        return Ok(128 + sig as i32)
                    }
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(_) => continue,
                }
            },
            // SIGTERM and friends from inside the namespace: ignored; the supervisor kills us.
            Ok(_) => continue,
            Err(e) => return Err(setup("sigwait", e)),
        }
    }
}

fn set_limits(limits: &Rlimits) -> Result<(), SandboxError> {
    // The supervisor and this init count as processes of the same user.
    let processes = limits.processes.map(|n| n.saturating_add(2));
    for (resource, value) in [
        (Resource::RLIMIT_CPU, limits.cpu_secs),
        (Resource::RLIMIT_AS, limits.address_space_bytes),
        (Resource::RLIMIT_NPROC, processes),
        (Resource::RLIMIT_FSIZE, limits.file_size_bytes),
        (Resource::RLIMIT_NOFILE, limits.open_files),
    ] {
        if let Some(v) = value {
            setrlimit(resource, v, v).map_err(|e| setup(&format!("{resource:?}"), e))?;
        }
    }
    Ok(())
}
