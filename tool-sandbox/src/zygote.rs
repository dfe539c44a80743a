//! The helper's zygote and its spares (see [`crate::helper`] for the design; the init of each
//! run's PID namespace is [`crate::init`]).
//!
//! The zygote and the spares never start a thread: they fork without `exec`
//! ([`crate::fork`]), and a forked copy of a single-threaded process may run ordinary code.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use nix::sched::{unshare, CloneFlags};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{ForkResult, Pid};
use rustix::event::{poll, PollFd, PollFlags};

use crate::cgroup::{Bases, Tree};
use crate::error::SandboxError;
use crate::fork::fork_single_threaded;
use crate::init::{sigchld_fd, Init, Namespaces, Prepared, TAKEN_LEN};
use crate::policy::Mode;
use crate::protocol::{fail, setup, SETUP_FAILED};
/// Spares that die in a row without taking a request before the zygote gives up (the library
/// starts a new zygote at the next run, and reports the error if that fails too).
const SPARE_FAILURES: u32 = 3;
/// How often the zygote retries removing the cgroups of finished trees, and how many times.
const REMOVE_RETRY: Duration = Duration::from_millis(5);
const REMOVE_ATTEMPTS: u32 = 200;

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
        _ => crate::cgroup::bases(),
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
                for dir in base.map(Bases::dirs).unwrap_or_default() {
                    finished.push((crate::cgroup::dir_of_owner(dir, pid.as_raw() as u32), 0));
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
                for dir in base.map(Bases::dirs).unwrap_or_default() {
                    finished.push((crate::cgroup::dir_of_owner(dir, pid.as_raw() as u32), 0));
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
/// pids and memory cgroups and moves into them, enters new namespaces, and forks the init of the new PID
/// namespace, which waits for the request; the spare itself (the *keeper*) only waits for the
/// init to end. A cgroup migration and new namespaces cost milliseconds: they are paid before a
/// request comes.
struct Spare {
    mode: Mode,
    network: bool,
    control: OwnedFd,
    taken: OwnedFd,
    base: Option<&'static Bases>,
    /// The network namespace the zygote started in, when it moved itself into an empty one
    /// for the spares without network to share.
    host_net: Option<OwnedFd>,
    /// The system paths opened by the zygote, and what applying the base seccomp filter gave
    /// (not under `Mode::Off`).
    shared: Option<(crate::confine::SystemPaths, Result<(), SandboxError>)>,
}

impl Spare {
    fn serve(self) -> i32 {
        // The cgroup first, from the initial user namespace, where its files are writable; and
        // before anything forks, so that every descendant is counted.
        let cgroup = self.base.map(Tree::create_and_join).transpose();
        let namespaces = match self.mode {
            Mode::Off => Ok(Namespaces::default()),
            _ => enter_namespaces(self.network, self.host_net.as_ref()),
        };
        // Seccomp now (the filter is the network class's, whatever the spec says), so that the
        // kernel's filter load is off the request's path; Landlock waits for the workspace.
        let (mode, network) = (self.mode, self.network);
        let read_paths = self.shared.as_ref().map(|(paths, _)| paths.read_paths());
        let confinement = self
            .shared
            .map(|(paths, base)| crate::confine::Prepared::ahead(network, mode, &paths, base));
        let prepared = Prepared {
            cgroup,
            namespaces,
            confinement,
            read_paths,
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

/// A user namespace that maps only the caller (so no outside capability is kept), then PID, IPC
/// and mount namespaces, and an empty network namespace unless the policy allows network.
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
    let mut flags = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWNS;
    if !network && host_net.is_none() {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| setup("pid and mount namespaces", e))?;
    Ok(Namespaces {
        pid: true,
        net: !network,
        mount: true,
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
