//! The init of a run's PID namespace: PID 1 there, forked by a spare of the helper's zygote
//! ([`crate::zygote`]). It builds the program's minimal root before the request, then takes one
//! request, finishes its confinement, starts the program and reports how it ended.

use std::io::{IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::SigSet;
use nix::sys::signal::{kill, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use serde::{Deserialize, Serialize};

use crate::cgroup::{Hit, Tree};
use crate::confine::confine_prepared;
use crate::error::SandboxError;
use crate::policy::{LimitHit, Mode, Rlimits};
use crate::protocol::{
    fail, parse_spec, setup, ExecSpec, EXEC_FAILED, EXIT_PREFIX, LIMITS_PREFIX, MAX_SPEC,
    OK_PREFIX, REQUEST_BYTE, REQUEST_FDS, SETUP_FAILED,
};

/// Namespaces a spare set up, for the init's report.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(crate) struct Namespaces {
    pub(crate) pid: bool,
    pub(crate) net: bool,
    /// A mount namespace of its own, for the program's minimal root ([`crate::mountns`]).
    pub(crate) mount: bool,
}

/// What an init writes on the "taken" pipe: its class, then its keeper's pid (little endian).
pub(crate) const TAKEN_LEN: usize = 5;

/// A non-blocking, close-on-exec signal descriptor for `SIGCHLD` (which must be blocked).
pub(crate) fn sigchld_fd() -> Result<SignalFd, SandboxError> {
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    SignalFd::with_flags(&chld, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| setup("signalfd", e))
}

/// What was set up for the init before the request, with the errors kept for it to report (a
/// request is the first moment anything can be said to the caller).
pub(crate) struct Prepared {
    /// `Ok(None)` where this machine has no writable pids or memory hierarchy.
    pub(crate) cgroup: std::io::Result<Option<Tree>>,
    pub(crate) namespaces: Result<Namespaces, SandboxError>,
    /// Seccomp applied and the Landlock ruleset of the system paths built (not under `Mode::Off`).
    pub(crate) confinement: Option<crate::confine::Prepared>,
    /// The system read paths the program's minimal root is built with (not under `Mode::Off`).
    pub(crate) read_paths: Option<Vec<PathBuf>>,
}

/// How long an init waits for the rest of its spec after the request arrived.
const SPEC_TIMEOUT: Duration = Duration::from_secs(10);

/// One run's descriptors, as received by a spare.
struct Run {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    socket: UnixStream,
}

/// The init of a run's PID namespace (PID 1 there): takes one request, confines itself, starts
/// the program, reaps every orphan, and reports the program's exit code on the run socket. When
/// it exits, the kernel kills every process left in the namespace. It exits when the program
/// ends, or when the run socket is shut down or closed (timeout, cancellation, a dropped run, a
/// dead executor). Processes inside the namespace cannot signal it (PID 1 receives only the
/// signals it handles, and it handles none).
pub(crate) struct Init {
    pub(crate) mode: Mode,
    pub(crate) network: bool,
    /// The pid of the spare that forked this init, for the zygote's books.
    pub(crate) keeper: u32,
    pub(crate) control: OwnedFd,
    pub(crate) taken: OwnedFd,
    pub(crate) prepared: Prepared,
}

/// The program's standard streams.
struct Stdio {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Init {
    pub(crate) fn serve(self) -> i32 {
        // The minimal root costs about a millisecond of mounts: built before the request, in the
        // mount namespace the spare entered (its errors wait for the request, to be reported).
        let root = match (&self.prepared.namespaces, &self.prepared.read_paths) {
            (Ok(ns), Some(paths)) if ns.mount => Some(crate::mountns::prepare(paths)),
            _ => None,
        };
        let run = loop {
            match receive(&self.control) {
                Ok(Some(Some(run))) => break run,
                Ok(Some(None)) => continue,
                // The end of the stream: the library is gone.
                Ok(None) => return 0,
                Err(_) => return SETUP_FAILED,
            }
        };
        let mut message = [0u8; TAKEN_LEN];
        message[0] = u8::from(self.network);
        message[1..].copy_from_slice(&self.keeper.to_le_bytes());
        let Init {
            mode,
            network,
            keeper: _,
            control,
            taken,
            prepared,
        } = self;
        drop(control);
        let mut taken = Taken(Some((taken, message)));
        let Run {
            stdin,
            stdout,
            stderr,
            mut socket,
        } = run;
        let mut stdio = Some(Stdio {
            stdin,
            stdout,
            stderr,
        });
        let result = run_program(
            mode,
            network,
            prepared,
            root,
            &mut socket,
            &mut stdio,
            &mut taken,
        );
        taken.tell();
        let (code, hits) = match result {
            Ok(ended) => ended,
            Err(e) => match stdio.take() {
                // Before the program's streams took fds 0-2, stderr is still ours to say why.
                Some(stdio) => (fail(&mut std::fs::File::from(stdio.stderr), &e), Vec::new()),
                None => (fail(&mut std::io::stderr(), &e), Vec::new()),
            },
        };
        let _ = if hits.is_empty() {
            writeln!(socket, "{EXIT_PREFIX}{code}")
        } else {
            let names: Vec<&str> = hits.iter().map(|h| h.as_str()).collect();
            writeln!(
                socket,
                "{EXIT_PREFIX}{code} {LIMITS_PREFIX}{}",
                names.join(",")
            )
        };
        code
    }
}

/// The zygote's "taken" message of one init, sent once.
///
/// It is sent when the program has started (or the run failed before): the zygote then forks the
/// next spare, whose set-up (namespaces, cgroup, filters) would otherwise compete with this run's
/// own set-up and `exec` on a small machine. The other spare of the class takes a request that
/// comes meanwhile.
struct Taken(Option<(OwnedFd, [u8; TAKEN_LEN])>);

impl Taken {
    fn tell(&mut self) {
        if let Some((pipe, message)) = self.0.take() {
            let _ = rustix::io::write(&pipe, &message);
        }
    }
}

fn run_program(
    mode: Mode,
    network: bool,
    prepared: Prepared,
    root: Option<Result<crate::mountns::Prepared, SandboxError>>,
    socket: &mut UnixStream,
    stdio: &mut Option<Stdio>,
    taken: &mut Taken,
) -> Result<(i32, Vec<LimitHit>), SandboxError> {
    let spec = read_spec(socket)?;
    if spec.mode != mode || spec.policy.network != network {
        return Err(SandboxError::Setup(
            "the request reached a helper of another mode or network class".to_owned(),
        ));
    }
    let required = spec.mode == Mode::Required;
    // The process cap counts the keeper and this init too.
    let mut tree = match prepared.cgroup {
        _ if spec.mode == Mode::Off => None,
        Ok(tree) => tree,
        Err(e) if required => return Err(setup("cgroups", e)),
        Err(_) => None,
    };
    let (mut pids_cgroup, mut memory_cgroup) = (false, false);
    if let Some(tree) = &mut tree {
        if let (true, Some(n)) = (tree.has_pids(), spec.limits.processes) {
            match tree.set_pids_max(n.saturating_add(2)) {
                Ok(()) => pids_cgroup = true,
                Err(e) if required => return Err(setup("pids cgroup", e)),
                Err(_) => {}
            }
        }
        if let (true, Some(bytes)) = (tree.has_memory(), spec.limits.memory_bytes) {
            match tree.set_memory_max(bytes) {
                Ok(()) => memory_cgroup = true,
                Err(e) if required => return Err(setup("memory cgroup", e)),
                Err(_) => {}
            }
        }
    }
    let namespaces = match prepared.namespaces {
        Ok(ns) => ns,
        Err(e) if required => return Err(e),
        Err(_) => Namespaces::default(),
    };
    let mount_namespace = match root.map(|r| r.and_then(|r| r.finish(&spec.policy))) {
        Some(Ok(())) => true,
        Some(Err(e)) if required => return Err(e),
        Some(Err(_)) => false,
        None if required => {
            return Err(SandboxError::Unavailable(
                "no mount namespace for the program's minimal root".to_owned(),
            ))
        }
        None => false,
    };
    spec.policy.validate()?;
    let sigfd = sigchld_fd()?;
    let mut enforcement = confine_prepared(&spec.policy, spec.mode, prepared.confinement)?;
    enforcement.pid_namespace = namespaces.pid;
    enforcement.net_namespace = namespaces.net;
    enforcement.mount_namespace = mount_namespace;
    enforcement.pids_cgroup = pids_cgroup;
    enforcement.memory_cgroup = memory_cgroup;
    set_limits(&spec.limits)?;
    let streams = stdio
        .take()
        .ok_or_else(|| SandboxError::Setup("no standard streams".to_owned()))?;
    rustix::stdio::dup2_stdin(&streams.stdin).map_err(|e| setup("dup2", e))?;
    rustix::stdio::dup2_stdout(&streams.stdout).map_err(|e| setup("dup2", e))?;
    rustix::stdio::dup2_stderr(&streams.stderr).map_err(|e| setup("dup2", e))?;
    drop(streams);
    {
        let status = serde_json::to_string(&enforcement).map_err(|e| setup("status", e))?;
        let mut err = std::io::stderr().lock();
        writeln!(err, "{OK_PREFIX}{status}").map_err(|e| setup("status", e))?;
    }
    // The child's signal mask is reset by std before exec.
    let child = Command::new(resolve_program(&spec.program, &spec.env))
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
            return Ok((EXEC_FAILED, Vec::new()));
        }
    };
    let main = Pid::from_raw(child.id() as i32);
    taken.tell();
    // Our copies of the program's streams go, so the pipes end with the tree.
    let null = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .ok();
    if let Some(null) = &null {
        let _ = rustix::stdio::dup2_stdin(null);
        let _ = rustix::stdio::dup2_stdout(null);
        let _ = rustix::stdio::dup2_stderr(null);
    }
    let (code, signal) = wait_for_program(main, socket, &sigfd)?;
    let mut hits: Vec<LimitHit> = match signal {
        Some(Signal::SIGXFSZ) => vec![LimitHit::FileSize],
        Some(Signal::SIGXCPU) => vec![LimitHit::Cpu],
        _ => Vec::new(),
    };
    if let Some(tree) = &mut tree {
        hits.extend(tree.hits().into_iter().map(|hit| match hit {
            Hit::Memory => LimitHit::Memory,
            Hit::Processes => LimitHit::Processes,
        }));
    }
    Ok((code, hits))
}

/// The file `execvp` would run for `program` under the spec's `PATH`, looked up here so that std
/// can start it with `posix_spawn` (it forks the init and searches `PATH` in the child when the
/// environment sets `PATH` and the program is a bare name, which costs a few hundred
/// microseconds more). The lookup runs confined already, so it sees what the program would.
/// Anything `execvp` might treat differently (a name with a `/`, a relative or empty `PATH`
/// entry before a match, no match at all) is left to std as it was given.
fn resolve_program(program: &str, env: &[(String, String)]) -> PathBuf {
    let given = PathBuf::from(program);
    if program.is_empty() || program.contains('/') {
        return given;
    }
    let Some((_, path)) = env.iter().rev().find(|(k, _)| k == "PATH") else {
        return given;
    };
    for dir in path.split(':') {
        if !dir.starts_with('/') {
            return given;
        }
        let candidate = std::path::Path::new(dir).join(program);
        let regular = rustix::fs::stat(&candidate)
            .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file())
            .unwrap_or(false);
        if regular && rustix::fs::access(&candidate, rustix::fs::Access::EXEC_OK).is_ok() {
            return candidate;
        }
    }
    given
}

/// Receives one request: `None` at the end of the stream, `Some(None)` for a malformed request
/// (its descriptors are closed, which the library sees as a broken run).
fn receive(control: &OwnedFd) -> Result<Option<Option<Run>>, SandboxError> {
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(REQUEST_FDS))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    let msg = match rustix::net::recvmsg(
        control,
        &mut [IoSliceMut::new(&mut byte)],
        &mut ancillary,
        RecvFlags::CMSG_CLOEXEC,
    ) {
        Ok(msg) => msg,
        Err(rustix::io::Errno::INTR) => return Ok(Some(None)),
        Err(e) => return Err(setup("recvmsg", e)),
    };
    if msg.bytes == 0 {
        return Ok(None);
    }
    let mut fds: Vec<OwnedFd> = Vec::with_capacity(REQUEST_FDS);
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    if byte[0] != REQUEST_BYTE || fds.len() != REQUEST_FDS {
        return Ok(Some(None));
    }
    let mut fds = fds.into_iter();
    let mut next = || fds.next().expect("four descriptors, counted above");
    Ok(Some(Some(Run {
        stdin: next(),
        stdout: next(),
        stderr: next(),
        socket: UnixStream::from(next()),
    })))
}

/// Reads the length-prefixed spec from the run socket (the library writes it before the
/// request when it fits in the socket buffer).
fn read_spec(socket: &mut UnixStream) -> Result<ExecSpec, SandboxError> {
    socket
        .set_read_timeout(Some(SPEC_TIMEOUT))
        .map_err(|e| setup("run socket", e))?;
    let mut len = [0u8; 4];
    socket
        .read_exact(&mut len)
        .map_err(|e| setup("no spec on the run socket", e))?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_SPEC {
        return Err(setup("spec", format!("{len} bytes, more than {MAX_SPEC}")));
    }
    let mut json = vec![0u8; len];
    socket
        .read_exact(&mut json)
        .map_err(|e| setup("spec cut short", e))?;
    socket
        .set_read_timeout(None)
        .map_err(|e| setup("run socket", e))?;
    parse_spec(&json)
}

/// Reaps children until the program exits (its code, and the signal that ended it), or until the
/// run socket says stop (shut down or closed): then the init returns, and its exit takes the
/// whole namespace with it.
fn wait_for_program(
    main: Pid,
    socket: &mut UnixStream,
    sigfd: &SignalFd,
) -> Result<(i32, Option<Signal>), SandboxError> {
    loop {
        let (stop, child) = {
            let mut fds = [
                PollFd::new(&*socket, PollFlags::IN),
                PollFd::new(sigfd, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => (!fds[0].revents().is_empty(), !fds[1].revents().is_empty()),
                Err(rustix::io::Errno::INTR) => (false, false),
                Err(e) => return Err(setup("poll", e)),
            }
        };
        if child {
            while sigfd.read_signal().ok().flatten().is_some() {}
            // PID 1 reaps every orphan; the program's own status is the result.
            loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(pid, code)) if pid == main => return Ok((code, None)),
                    Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                        return Ok((128 + sig as i32, Some(sig)))
                    }
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(_) => continue,
                }
            }
        }
        if stop {
            let _ = kill(main, Signal::SIGKILL);
            return Ok((128 + Signal::SIGKILL as i32, None));
        }
    }
}

fn set_limits(limits: &Rlimits) -> Result<(), SandboxError> {
    // The keeper and this init count as processes of the same user.
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

#[cfg(test)]
mod tests {
    use super::resolve_program;
    use std::path::PathBuf;

    fn path(p: &str) -> Vec<(String, String)> {
        vec![("PATH".to_owned(), p.to_owned())]
    }

    #[test]
    fn bare_names_resolve_in_path_order_like_execvp() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).expect("a");
        std::fs::create_dir_all(&b).expect("b");
        // Not executable in `a`: skipped, as execvp skips it.
        std::fs::write(a.join("prog"), "").expect("file");
        std::fs::write(b.join("prog"), "").expect("file");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(b.join("prog"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let env = path(&format!("{}:{}", a.display(), b.display()));
        assert_eq!(resolve_program("prog", &env), b.join("prog"));
        // A directory of that name is not a program.
        std::fs::create_dir_all(a.join("sub")).expect("sub");
        assert_eq!(resolve_program("sub", &env), PathBuf::from("sub"));
    }

    #[test]
    fn what_execvp_may_treat_differently_is_left_as_given() {
        let env = path("relative:/usr/bin:/bin");
        assert_eq!(resolve_program("sh", &env), PathBuf::from("sh"));
        let env = path(":/usr/bin:/bin");
        assert_eq!(resolve_program("sh", &env), PathBuf::from("sh"));
        let env = path("/usr/bin:/bin");
        assert_eq!(resolve_program("./sh", &env), PathBuf::from("./sh"));
        assert_eq!(
            resolve_program("no-such-program-here", &env),
            PathBuf::from("no-such-program-here")
        );
        assert_eq!(resolve_program("sh", &[]), PathBuf::from("sh"));
    }
}
