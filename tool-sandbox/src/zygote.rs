//! The helper's processes: the zygote, its spare supervisors, and the init of each run's PID
//! namespace (see [`crate::helper`] for the design).
//!
//! The zygote and the supervisors never start a thread: they fork without `exec`
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

use crate::confine::confine_current_thread;
use crate::error::SandboxError;
use crate::fork::fork_single_threaded;
use crate::helper::{
    fail, parse_spec, setup, ExecSpec, EXEC_FAILED, EXIT_PREFIX, MAX_SPEC, OK_PREFIX, SETUP_FAILED,
};
use crate::policy::{Mode, Rlimits};

/// The file descriptors one request passes: the program's stdin, stdout, stderr, and the run
/// socket, in this order.
pub(crate) const REQUEST_FDS: usize = 4;
/// The one data byte of a request message.
pub(crate) const REQUEST_BYTE: u8 = b'R';
/// How long a supervisor waits for the rest of its spec after the request arrived.
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

/// The zygote of a launcher with confinement `mode`: keeps one spare supervisor ready per
/// control socket — stdin takes the requests of programs without network, stdout those of
/// programs with network (both `SOCK_SEQPACKET`) — until both close. Returns the exit code of
/// this process, which is the zygote's or, in a forked child, the spare's and then the
/// supervisor's.
pub(crate) fn serve(mode: Mode) -> i32 {
    match zygote(mode) {
        Ok(Role::Zygote(code)) => code,
        Ok(Role::Spare(spare)) => spare.serve(),
        Err(e) => fail(&mut std::io::stderr(), &e),
    }
}

enum Role {
    Zygote(i32),
    Spare(Box<Spare>),
}

/// A spare and what the zygote knows of it.
#[derive(Default)]
struct Slot {
    pid: Option<Pid>,
    failures: u32,
}

fn zygote(mode: Mode) -> Result<Role, SandboxError> {
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
    let sigfd = SignalFd::with_flags(&chld, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| setup("signalfd", e))?;
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
    let mut slots = [Slot::default(), Slot::default()];
    let mut hung_up = [false, false];
    let mut finished: Vec<(PathBuf, u32)> = Vec::new();
    loop {
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.pid.is_some() || hung_up[i] {
                continue;
            }
            if slot.failures >= SPARE_FAILURES {
                return Err(SandboxError::Setup(format!(
                    "{} spare supervisors in a row died before taking a request",
                    slot.failures
                )));
            }
            match fork_single_threaded()? {
                ForkResult::Child => {
                    let network = i == 1;
                    let [without, with] = controls;
                    drop((taken_read, sigfd));
                    return Ok(Role::Spare(Box::new(Spare::prepare(
                        mode,
                        network,
                        if network { with } else { without },
                        taken_write,
                        base,
                    ))));
                }
                ForkResult::Parent { child } => slot.pid = Some(child),
            }
        }
        let wait = (!finished.is_empty()).then_some(REMOVE_RETRY);
        let events = wait_events(&controls, &taken_read, &sigfd, wait)?;
        let mut taken = [false, false];
        if events.taken {
            let mut bytes = [0u8; 16];
            while let Ok(n @ 1..) = rustix::io::read(&taken_read, &mut bytes) {
                for &b in &bytes[..n] {
                    if let Some(slot) = slots.get_mut(usize::from(b)) {
                        slot.pid = None;
                        slot.failures = 0;
                        taken[usize::from(b)] = true;
                    }
                }
            }
        }
        if events.children {
            while sigfd.read_signal().ok().flatten().is_some() {}
            for pid in reap_children() {
                for slot in slots.iter_mut() {
                    if slot.pid == Some(pid) {
                        // Died as a spare (the library went away, or its set-up failed).
                        slot.pid = None;
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
            let gone = std::fs::remove_dir(&*dir).is_ok() || !dir.exists();
            !gone && *attempts < REMOVE_ATTEMPTS
        });
        for (mine, now) in hung_up.iter_mut().zip(events.hung_up) {
            *mine |= now;
        }
        if hung_up == [true, true] {
            // The library is gone (its launcher dropped, or the executor died). The spares exit
            // at the end of their streams (a request still queued is taken first): wait for
            // them, so that their cgroups can go too.
            for slot in &slots {
                if let Some(pid) = slot.pid {
                    let _ = waitpid(pid, None);
                    if let Some(base) = base {
                        finished.push((crate::cgroup::dir_of_owner(base, pid.as_raw() as u32), 0));
                    }
                }
            }
            for (dir, _) in &finished {
                for _ in 0..REMOVE_ATTEMPTS {
                    if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                        break;
                    }
                    std::thread::sleep(REMOVE_RETRY);
                }
            }
            return Ok(Role::Zygote(0));
        }
    }
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

/// A forked supervisor waiting for its request, set up as far as a request does not change:
/// in its own pids cgroup and in new namespaces already (a cgroup migration and a network
/// namespace cost milliseconds, so they are paid before a request comes).
struct Spare {
    mode: Mode,
    network: bool,
    control: OwnedFd,
    taken: OwnedFd,
    /// `Ok(None)` where this machine has no writable pids hierarchy.
    cgroup: std::io::Result<Option<PathBuf>>,
    namespaces: Result<Namespaces, SandboxError>,
}

impl Spare {
    fn prepare(
        mode: Mode,
        network: bool,
        control: OwnedFd,
        taken: OwnedFd,
        base: Option<&std::path::Path>,
    ) -> Spare {
        // The cgroup first, from the initial user namespace, where its files are writable; and
        // before anything forks, so that every descendant is counted.
        let cgroup = base.map(crate::cgroup::create_and_join).transpose();
        let namespaces = match mode {
            Mode::Off => Ok(Namespaces::default()),
            _ => enter_namespaces(network),
        };
        Spare {
            mode,
            network,
            control,
            taken,
            cgroup,
            namespaces,
        }
    }

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
        let _ = rustix::io::write(&self.taken, &[u8::from(self.network)]);
        let Spare {
            mode,
            network,
            control,
            taken,
            cgroup,
            namespaces,
        } = self;
        drop((control, taken));
        Supervisor {
            mode,
            network,
            cgroup,
            namespaces,
        }
        .run(run)
    }
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

/// The supervisor of one run: a spare that took a request.
struct Supervisor {
    mode: Mode,
    network: bool,
    cgroup: std::io::Result<Option<PathBuf>>,
    namespaces: Result<Namespaces, SandboxError>,
}

enum Ended {
    Supervisor(i32),
    Init(Box<Init>),
}

/// The program's standard streams.
struct Stdio {
    stdin: OwnedFd,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

/// What the init needs; everything else of the supervisor is dropped (closed) before it runs.
struct Init {
    spec: ExecSpec,
    namespaces: Namespaces,
    pids_cgroup: bool,
    stdio: Stdio,
    /// Hangs up when the supervisor dies.
    supervisor_alive: OwnedFd,
}

impl Supervisor {
    /// Supervises `run`; returns this process's exit code after it reported the run's on the
    /// run socket.
    fn run(self, run: Run) -> i32 {
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
        let code = match self.try_run(&mut socket, &mut stdio) {
            Ok(Ended::Supervisor(code)) => code,
            Ok(Ended::Init(init)) => {
                drop(socket);
                return init.run();
            }
            // Before the fork the program's stderr is still ours: say why there.
            Err(e) => match stdio.take() {
                Some(stdio) => fail(&mut std::fs::File::from(stdio.stderr), &e),
                None => SETUP_FAILED,
            },
        };
        let _ = writeln!(socket, "{EXIT_PREFIX}{code}");
        code
    }

    fn try_run(
        self,
        socket: &mut UnixStream,
        stdio: &mut Option<Stdio>,
    ) -> Result<Ended, SandboxError> {
        let spec = read_spec(socket)?;
        if spec.mode != self.mode || spec.policy.network != self.network {
            return Err(SandboxError::Setup(
                "the request reached a supervisor of another mode or network class".to_owned(),
            ));
        }
        let mut chld = SigSet::empty();
        chld.add(Signal::SIGCHLD);
        let sigfd = SignalFd::with_flags(&chld, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
            .map_err(|e| setup("signalfd", e))?;
        // The cap counts this supervisor and the init too.
        let pids_cgroup = match (self.cgroup, spec.limits.processes) {
            _ if spec.mode == Mode::Off => false,
            (Ok(None), _) | (_, None) => false,
            (Ok(Some(dir)), Some(n)) => match crate::cgroup::set_max(&dir, n.saturating_add(2)) {
                Ok(()) => true,
                Err(e) if spec.mode == Mode::Required => {
                    return Err(setup(&format!("pids cgroup {}", dir.display()), e))
                }
                Err(_) => false,
            },
            (Err(e), Some(_)) if spec.mode == Mode::Required => {
                return Err(setup("pids cgroup", e))
            }
            (Err(_), Some(_)) => false,
        };
        let namespaces = match self.namespaces {
            Ok(ns) => ns,
            Err(e) if spec.mode == Mode::Required => return Err(e),
            Err(_) => Namespaces::default(),
        };
        let (alive_read, alive_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| setup("pipe", e))?;
        let init_pid = match fork_single_threaded()? {
            ForkResult::Child => {
                let stdio = stdio
                    .take()
                    .ok_or_else(|| SandboxError::Setup("no standard streams".to_owned()))?;
                return Ok(Ended::Init(Box::new(Init {
                    spec,
                    namespaces,
                    pids_cgroup,
                    stdio,
                    supervisor_alive: alive_read,
                })));
            }
            ForkResult::Parent { child } => child,
        };
        // Only the init holds the program's streams now, so they end with the tree.
        drop((stdio.take(), alive_read));
        let code = wait_for_init(init_pid, socket, &sigfd)?;
        drop(alive_write);
        Ok(Ended::Supervisor(code))
    }
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

/// Waits until the init exits (its code) or the run socket says stop (shut down or closed: the
/// library timed out, cancelled, dropped the run or died): then kills the init, whose death
/// takes the whole namespace with it, and waits for it.
fn wait_for_init(
    init: Pid,
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
            match waitpid(init, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(_, code)) => return Ok(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => return Ok(128 + sig as i32),
                Ok(_) => {}
                Err(e) => return Err(setup("wait", e)),
            }
        }
        if stop {
            let _ = kill(init, Signal::SIGKILL);
            let _ = waitpid(init, None);
            return Ok(128 + Signal::SIGKILL as i32);
        }
    }
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
    })
}

/// Signals the init takes through `sigwait` instead of dying of them.
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

impl Init {
    /// Runs the init (PID 1 of the run's namespace, a child of the supervisor); returns its exit
    /// code, the program's.
    fn run(self) -> i32 {
        let stderr = self.stdio.stderr.try_clone();
        match self.try_run() {
            Ok(code) => code,
            Err(e) => match stderr {
                Ok(fd) => fail(&mut std::fs::File::from(fd), &e),
                Err(_) => SETUP_FAILED,
            },
        }
    }

    fn try_run(self) -> Result<i32, SandboxError> {
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| setup("pdeathsig", e))?;
        // The supervisor may have died before the line above; then nobody would kill us. Its
        // end of the pipe is the only write end left: a hang-up means it is gone.
        let mut alive = [PollFd::new(&self.supervisor_alive, PollFlags::IN)];
        let _ = poll(&mut alive, Some(&rustix::time::Timespec::default()));
        if alive[0].revents().contains(PollFlags::HUP) {
            return Err(SandboxError::Setup("the supervisor is gone".to_owned()));
        }
        rustix::stdio::dup2_stdin(&self.stdio.stdin).map_err(|e| setup("dup2", e))?;
        rustix::stdio::dup2_stdout(&self.stdio.stdout).map_err(|e| setup("dup2", e))?;
        rustix::stdio::dup2_stderr(&self.stdio.stderr).map_err(|e| setup("dup2", e))?;
        drop(self.stdio);
        let spec = self.spec;
        let namespaces = self.namespaces;
        let signals = waited_signals();
        signals
            .thread_block()
            .map_err(|e| setup("sigprocmask", e))?;
        let mut enforcement = confine_current_thread(&spec.policy, spec.mode)?;
        enforcement.pid_namespace = namespaces.pid;
        enforcement.net_namespace = namespaces.net;
        enforcement.pids_cgroup = self.pids_cgroup;
        set_limits(&spec.limits)?;
        {
            let status = serde_json::to_string(&enforcement).map_err(|e| setup("status", e))?;
            let mut err = std::io::stderr().lock();
            writeln!(err, "{OK_PREFIX}{status}").map_err(|e| setup("status", e))?;
        }
        // The child's signal mask is reset by std before exec.
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
                // SIGTERM and friends from inside the namespace: ignored; the supervisor kills
                // us.
                Ok(_) => continue,
                Err(e) => return Err(setup("sigwait", e)),
            }
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
