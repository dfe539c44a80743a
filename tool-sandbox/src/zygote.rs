//! The helper's processes: the zygote, its spares, and the init of each run's PID
//! namespace (see [`crate::helper`] for the design).
//!
//! The zygote and the spares never start a thread: they fork without `exec`
//! ([`crate::fork`]), and a forked copy of a single-threaded process may run ordinary code.

use std::io::{IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nix::sched::{unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{ForkResult, Pid};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use serde::{Deserialize, Serialize};

use crate::confine::confine_prepared;
use crate::error::SandboxError;
use crate::fork::fork_single_threaded;
use crate::policy::{Mode, Rlimits};
use crate::protocol::{
    fail, parse_spec, setup, ExecSpec, EXEC_FAILED, EXIT_PREFIX, MAX_SPEC, OK_PREFIX, REQUEST_BYTE,
    REQUEST_FDS, SETUP_FAILED,
};

/// How long an init waits for the rest of its spec after the request arrived.
const SPEC_TIMEOUT: Duration = Duration::from_secs(10);
/// Spares that die in a row without taking a request before the zygote gives up (the library
/// starts a new zygote at the next run, and reports the error if that fails too).
const SPARE_FAILURES: u32 = 3;
/// How often the zygote retries removing the cgroups of finished trees, and how many times.
const REMOVE_RETRY: Duration = Duration::from_millis(5);
const REMOVE_ATTEMPTS: u32 = 200;

/// Namespaces a spare set up, for the init's report.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Namespaces {
    pid: bool,
    net: bool,
}

/// One run's descriptors, as received by a spare.
struct Run {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
    socket: UnixStream,
}

/// The zygote of a launcher with confinement `mode`: keeps one spare ready per
/// control socket — stdin takes the requests of programs without network, stdout those of
/// programs with network (both `SOCK_SEQPACKET`) — until both close. Returns the exit code of
/// this process, which is the zygote's or, in a forked child, the spare's and then the
/// init's.
pub(crate) fn serve(mode: Mode) -> i32 {
    match zygote(mode) {
        Ok(Role::Zygote(code)) => code,
        Ok(Role::Spare(spare)) => spare.serve(),
        Err(e) => fail(&mut std::io::stderr(), &e),
    }
}

enum Role {
    Zygote(i32),
    Spare(Spare),
}

/// The spares of one network class: their keepers' pids, and how many died in a row before
/// taking a request.
#[derive(Default)]
struct Slot {
    ready: Vec<Pid>,
    failures: u32,
}

/// Spares kept ready per network class: a burst of runs finds one whose set-up is done while
/// the next ones are prepared.
const SPARES: usize = 2;
/// What an init writes on the "taken" pipe: its class, then its keeper's pid (little endian).
const TAKEN_LEN: usize = 5;

fn zygote(mode: Mode) -> Result<Role, SandboxError> {
    // First of all: what the executor passed on by mistake reaches no init and no program.
    crate::fork::close_inherited_fds()?;
    // Keep close-on-exec copies of the control sockets and put /dev/null in their places, so
    // no init or program holds a control socket.
    let take = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map_err(|e| setup("control socket", e))
    };
    let controls = [
        take(std::io::stdin().as_fd())?,
        take(std::io::stdout().as_fd())?,
    ];
    let null = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| setup("/dev/null", e))?;
    rustix::stdio::dup2_stdin(&null).map_err(|e| setup("dup2", e))?;
    rustix::stdio::dup2_stdout(&null).map_err(|e| setup("dup2", e))?;
    drop(null);
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    chld.thread_block().map_err(|e| setup("sigprocmask", e))?;
    let sigfd = sigchld_fd()?;
    // A spare writes its control index here when it took a request.
    let (taken_read, taken_write) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )
    .map_err(|e| setup("pipe", e))?;
    // Probed (and swept) once, before any spare is forked.
    let base = match mode {
        Mode::Off => None,
        _ => crate::cgroup::base(),
    };
    let host_net = match mode {
        Mode::Off => None,
        _ => share_an_empty_network_namespace(),
    };
    // What every spare's confinement shares: the system paths, opened once, and the base seccomp
    // filter, applied here once and inherited (the spares add their class filter once they
    // entered their namespaces, which it denies).
    let mut shared = (mode != Mode::Off).then(|| {
        (
            crate::confine::SystemPaths::open(crate::policy::default_system_read_paths()),
            crate::seccomp::apply_base(),
        )
    });
    let mut slots = [Slot::default(), Slot::default()];
    let mut hung_up = [false, false];
    let mut finished: Vec<(PathBuf, u32)> = Vec::new();
    loop {
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.ready.len() >= SPARES || hung_up[i] {
                continue;
            }
            if slot.failures >= SPARE_FAILURES {
                return Err(SandboxError::Setup(format!(
                    "{} spares in a row died before taking a request",
                    slot.failures
                )));
            }
            match fork_single_threaded()? {
                ForkResult::Child => {
                    let network = i == 1;
                    let [without, with] = controls;
                    drop((taken_read, sigfd));
                    return Ok(Role::Spare(Spare {
                        mode,
                        network,
                        control: if network { with } else { without },
                        taken: taken_write,
                        base,
                        host_net,
                        shared: shared.take(),
                    }));
                }
                ForkResult::Parent { child } => slot.ready.push(child),
            }
            // One spare per class and round: the others follow after the next poll, so that
            // a request never waits for a whole pool being forked.
        }
        let short = !finished.is_empty()
            || slots
                .iter()
                .zip(hung_up)
                .any(|(slot, gone)| !gone && slot.ready.len() < SPARES);
        let wait = short.then_some(REMOVE_RETRY);
        let events = wait_events(&controls, &taken_read, &sigfd, wait)?;
        if events.taken {
            // Messages are shorter than PIPE_BUF, so each arrives whole.
            let mut message = [0u8; TAKEN_LEN];
            while let Ok(TAKEN_LEN) = rustix::io::read(&taken_read, &mut message) {
                let [class, pid @ ..] = message;
                let keeper = Pid::from_raw(i32::from_le_bytes(pid));
                if let Some(slot) = slots.get_mut(usize::from(class)) {
                    slot.ready.retain(|p| *p != keeper);
                    slot.failures = 0;
                }
            }
        }
        if events.children {
            while sigfd.read_signal().ok().flatten().is_some() {}
            for pid in reap_children() {
                for slot in slots.iter_mut() {
                    if slot.ready.contains(&pid) {
                        // Died as a spare (the library went away, or its set-up failed).
                        slot.ready.retain(|p| *p != pid);
                        slot.failures += 1;
                    }
                }
                if let Some(base) = base {
                    finished.push((crate::cgroup::dir_of_owner(base, pid.as_raw() as u32), 0));
                }
            }
        }
        // The last processes of a tree may still be leaving its cgroup: retry for a while; what
        // is left then is swept by the next process of this crate that probes the hierarchy.
        finished.retain_mut(|(dir, attempts)| {
            *attempts += 1;
            !removed(dir) && *attempts < REMOVE_ATTEMPTS
        });
        for (mine, now) in hung_up.iter_mut().zip(events.hung_up) {
            *mine |= now;
        }
        if hung_up == [true, true] {
            // The library is gone (its launcher dropped, or the executor died). The spares exit
            // at the end of their streams (a request still queued is taken first): wait for
            // them, so that their cgroups can go too.
            for &pid in slots.iter().flat_map(|slot| &slot.ready) {
                let _ = waitpid(pid, None);
                if let Some(base) = base {
                    finished.push((crate::cgroup::dir_of_owner(base, pid.as_raw() as u32), 0));
                }
            }
            for (dir, _) in &finished {
                for _ in 0..REMOVE_ATTEMPTS {
                    if removed(dir) {
                        break;
                    }
                    std::thread::sleep(REMOVE_RETRY);
                }
            }
            return Ok(Role::Zygote(0));
        }
    }
}

/// Tries to remove a finished tree's cgroup: `true` once it is gone.
fn removed(dir: &std::path::Path) -> bool {
    std::fs::remove_dir(dir).is_ok() || !dir.exists()
}

/// A non-blocking, close-on-exec signal descriptor for `SIGCHLD` (which must be blocked).
fn sigchld_fd() -> Result<SignalFd, SandboxError> {
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    SignalFd::with_flags(&chld, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| setup("signalfd", e))
}

/// What woke the zygote.
struct Events {
    /// The end of each control stream (polled without reading: requests are the spares').
    hung_up: [bool; 2],
    /// A spare took a request.
    taken: bool,
    /// A child exited.
    children: bool,
}

fn wait_events(
    controls: &[OwnedFd; 2],
    taken: &OwnedFd,
    sigfd: &SignalFd,
    timeout: Option<Duration>,
) -> Result<Events, SandboxError> {
    let mut fds = [
        PollFd::new(&controls[0], PollFlags::RDHUP),
        PollFd::new(&controls[1], PollFlags::RDHUP),
        PollFd::new(taken, PollFlags::IN),
        PollFd::new(sigfd, PollFlags::IN),
    ];
    let timeout = timeout.map(|t| rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: t.as_nanos() as _,
    });
    match poll(&mut fds, timeout.as_ref()) {
        Ok(_) => {
            let hup = PollFlags::HUP | PollFlags::RDHUP | PollFlags::ERR;
            Ok(Events {
                hung_up: [
                    fds[0].revents().intersects(hup),
                    fds[1].revents().intersects(hup),
                ],
                taken: !fds[2].revents().is_empty(),
                children: !fds[3].revents().is_empty(),
            })
        }
        Err(rustix::io::Errno::INTR) => Ok(Events {
            hung_up: [false, false],
            taken: false,
            children: false,
        }),
        Err(e) => Err(setup("poll", e)),
    }
}

/// A spare, forked by the zygote: set up as far as a request does not change it. It makes its
/// pids cgroup and moves into it, enters new namespaces, and forks the init of the new PID
/// namespace, which waits for the request; the spare itself (the *keeper*) only waits for the
/// init to end. A cgroup migration and new namespaces cost milliseconds: they are paid before a
/// request comes.
struct Spare {
    mode: Mode,
    network: bool,
    control: OwnedFd,
    taken: OwnedFd,
    base: Option<&'static std::path::Path>,
    /// The network namespace the zygote started in, when it moved itself into an empty one
    /// for the spares without network to share.
    host_net: Option<OwnedFd>,
    /// The system paths opened by the zygote, and what applying the base seccomp filter gave
    /// (not under `Mode::Off`).
    shared: Option<(crate::confine::SystemPaths, Result<(), SandboxError>)>,
}

/// What was set up for the init before the request, with the errors kept for it to report (a
/// request is the first moment anything can be said to the caller).
struct Prepared {
    /// `Ok(None)` where this machine has no writable pids hierarchy.
    cgroup: std::io::Result<Option<PathBuf>>,
    namespaces: Result<Namespaces, SandboxError>,
    /// Seccomp applied and the Landlock ruleset of the system paths built (not under `Mode::Off`).
    confinement: Option<crate::confine::Prepared>,
}

impl Spare {
    fn serve(self) -> i32 {
        // The cgroup first, from the initial user namespace, where its files are writable; and
        // before anything forks, so that every descendant is counted.
        let cgroup = self.base.map(crate::cgroup::create_and_join).transpose();
        let namespaces = match self.mode {
            Mode::Off => Ok(Namespaces::default()),
            _ => enter_namespaces(self.network, self.host_net.as_ref()),
        };
        // Seccomp now (the filter is the network class's, whatever the spec says), so that the
        // kernel's filter load is off the request's path; Landlock waits for the workspace.
        let (mode, network) = (self.mode, self.network);
        let confinement = self
            .shared
            .map(|(paths, base)| crate::confine::Prepared::ahead(network, mode, &paths, base));
        let prepared = Prepared {
            cgroup,
            namespaces,
            confinement,
        };
        let keeper = std::process::id();
        match fork_single_threaded() {
            Ok(ForkResult::Child) => Init {
                mode: self.mode,
                network: self.network,
                keeper,
                control: self.control,
                taken: self.taken,
                prepared,
            }
            .serve(),
            Ok(ForkResult::Parent { child }) => {
                drop((self.control, self.taken));
                // The keeper: its exit tells the zygote that the tree is gone.
                let _ = waitpid(child, None);
                0
            }
            Err(_) => SETUP_FAILED,
        }
    }
}

/// The init of a run's PID namespace (PID 1 there): takes one request, confines itself, starts
/// the program, reaps every orphan, and reports the program's exit code on the run socket. When
/// it exits, the kernel kills every process left in the namespace. It exits when the program
/// ends, or when the run socket is shut down or closed (timeout, cancellation, a dropped run, a
/// dead executor). Processes inside the namespace cannot signal it (PID 1 receives only the
/// signals it handles, and it handles none).
struct Init {
    mode: Mode,
    network: bool,
    /// The pid of the spare that forked this init, for the zygote's books.
    keeper: u32,
    control: OwnedFd,
    taken: OwnedFd,
    prepared: Prepared,
}

/// The program's standard streams.
struct Stdio {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Init {
    fn serve(self) -> i32 {
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
        let result = run_program(mode, network, prepared, &mut socket, &mut stdio, &mut taken);
        taken.tell();
        let code = match result {
            Ok(code) => code,
            Err(e) => match stdio.take() {
                // Before the program's streams took fds 0-2, stderr is still ours to say why.
                Some(stdio) => fail(&mut std::fs::File::from(stdio.stderr), &e),
                None => fail(&mut std::io::stderr(), &e),
            },
        };
        let _ = writeln!(socket, "{EXIT_PREFIX}{code}");
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
    socket: &mut UnixStream,
    stdio: &mut Option<Stdio>,
    taken: &mut Taken,
) -> Result<i32, SandboxError> {
    let spec = read_spec(socket)?;
    if spec.mode != mode || spec.policy.network != network {
        return Err(SandboxError::Setup(
            "the request reached a helper of another mode or network class".to_owned(),
        ));
    }
    // The cap counts the keeper and this init too.
    let pids_cgroup = match (prepared.cgroup, spec.limits.processes) {
        _ if spec.mode == Mode::Off => false,
        (Ok(None), _) | (_, None) => false,
        (Ok(Some(dir)), Some(n)) => match crate::cgroup::set_max(&dir, n.saturating_add(2)) {
            Ok(()) => true,
            Err(e) if spec.mode == Mode::Required => {
                return Err(setup(&format!("pids cgroup {}", dir.display()), e))
            }
            Err(_) => false,
        },
        (Err(e), Some(_)) if spec.mode == Mode::Required => return Err(setup("pids cgroup", e)),
        (Err(_), Some(_)) => false,
    };
    let namespaces = match prepared.namespaces {
        Ok(ns) => ns,
        Err(e) if spec.mode == Mode::Required => return Err(e),
        Err(_) => Namespaces::default(),
    };
    let sigfd = sigchld_fd()?;
    let mut enforcement = confine_prepared(&spec.policy, spec.mode, prepared.confinement)?;
    enforcement.pid_namespace = namespaces.pid;
    enforcement.net_namespace = namespaces.net;
    enforcement.pids_cgroup = pids_cgroup;
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
            return Ok(EXEC_FAILED);
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
    wait_for_program(main, socket, &sigfd)
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

/// Reaps every exited child; returns their pids.
fn reap_children() -> Vec<Pid> {
    let mut reaped = Vec::new();
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        match status.pid() {
            Some(pid) if status != WaitStatus::StillAlive => reaped.push(pid),
            _ => break,
        }
    }
    reaped
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

/// Reaps children until the program exits (its code), or until the run socket says stop (shut
/// down or closed): then the init returns, and its exit takes the whole namespace with it.
fn wait_for_program(
    main: Pid,
    socket: &mut UnixStream,
    sigfd: &SignalFd,
) -> Result<i32, SandboxError> {
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
                    Ok(WaitStatus::Exited(pid, code)) if pid == main => return Ok(code),
                    Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                        return Ok(128 + sig as i32)
                    }
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(_) => continue,
                }
            }
        }
        if stop {
            let _ = kill(main, Signal::SIGKILL);
            return Ok(128 + Signal::SIGKILL as i32);
        }
    }
}

/// A user namespace that maps only the caller (so no outside capability is kept), then PID and
/// IPC namespaces, and an empty network namespace unless the policy allows network.
///
/// `host_net` is set when the zygote moved into an empty network namespace of its own, which
/// programs without network then share: a program with network goes back to the host's first
/// (while it still has the capability to), and none unshares one of its own.
fn enter_namespaces(network: bool, host_net: Option<&OwnedFd>) -> Result<Namespaces, SandboxError> {
    if let (true, Some(host)) = (network, host_net) {
        nix::sched::setns(host, CloneFlags::CLONE_NEWNET)
            .map_err(|e| setup("host network namespace", e))?;
    }
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    unshare(CloneFlags::CLONE_NEWUSER).map_err(|e| setup("user namespace", e))?;
    std::fs::write("/proc/self/setgroups", "deny").map_err(|e| setup("setgroups", e))?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")).map_err(|e| setup("uid_map", e))?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")).map_err(|e| setup("gid_map", e))?;
    let mut flags = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    if !network && host_net.is_none() {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| setup("pid namespace", e))?;
    Ok(Namespaces {
        pid: true,
        net: !network,
    })
}

/// Moves the zygote into a new, empty network namespace, and returns the one it was in; `None`
/// (and nothing changed) where this process may not make one (an executor without root makes
/// one per program instead, inside the program's user namespace).
///
/// Creating and destroying a network namespace costs about a millisecond, so the programs
/// without network of one launcher share this one. It has no interface up (only a loopback
/// that is down), and it belongs to the initial user namespace, so nothing in a program's user
/// namespace can bring one up; AF_UNIX is the only socket family those programs can create
/// (seccomp), and abstract UNIX sockets of one program are out of reach of another (each has a
/// Landlock domain of its own, scoped).
fn share_an_empty_network_namespace() -> Option<OwnedFd> {
    let host: OwnedFd = std::fs::File::open("/proc/self/ns/net").ok()?.into();
    unshare(CloneFlags::CLONE_NEWNET).ok()?;
    Some(host)
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
