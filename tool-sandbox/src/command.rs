//! Running a program confined, through the helper: bounded time, bounded output, whole-tree kill.

use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use crate::confine::Enforcement;
use crate::error::SandboxError;
use crate::policy::{LimitHit, Mode, Rlimits, SandboxPolicy};
use crate::protocol::{
    ExecSpec, ERR_PREFIX, EXIT_PREFIX, HELPER_FLAG, LIMITS_PREFIX, OK_PREFIX, REQUEST_BYTE,
    REQUEST_FDS, ZYGOTE,
};

/// The helper binary's file name.
pub const HELPER_NAME: &str = "tool-sandbox-exec";
/// How long the init gets to kill the tree and report after the run socket is shut down.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// How long output pipes may stay open after the helper exited (only a process that escaped the
/// PID namespace, possible under `BestEffort` alone, could hold them).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// Room for the status line in front of the program's stderr.
const STATUS_ROOM: usize = 4096;

/// Finds and runs the helper binary; one per executor.
///
/// The helper runs as a zygote, started at the first run and shared by the clones of a launcher:
/// it forks a spare per program instead of starting the helper binary again. It exits
/// when the last clone is dropped (or the process dies); if it dies earlier, the next run starts
/// a new one.
#[derive(Debug, Clone)]
pub struct Launcher {
    helper: PathBuf,
    helper_args: Vec<String>,
    mode: Mode,
    zygote: Arc<Mutex<Option<Zygote>>>,
}

/// The running zygote: its process and our ends of its control sockets (index: network).
#[derive(Debug)]
struct Zygote {
    controls: [OwnedFd; 2],
    process: std::process::Child,
}

impl Drop for Zygote {
    fn drop(&mut self) {
        // The zygote exits at the end of its control streams; running inits end with
        // their own run sockets.
        for control in &self.controls {
            let _ = rustix::net::shutdown(control, rustix::net::Shutdown::Both);
        }
        let _ = self.process.wait();
    }
}

impl Launcher {
    /// Finds the helper: `explicit` if given (it must exist), else `tool-sandbox-exec` next to
    /// the current executable (or one directory up, for test binaries in `target/*/deps`), else
    /// `$CARGO_BIN_EXE_tool-sandbox-exec`. Fails closed with [`SandboxError::HelperMissing`].
    pub fn locate(explicit: Option<&Path>, mode: Mode) -> Result<Launcher, SandboxError> {
        let mut looked_at = Vec::new();
        let mut candidates = Vec::new();
        if let Some(p) = explicit {
            candidates.push(p.to_path_buf());
        } else {
            if let Ok(exe) = std::env::current_exe() {
                if let Some(dir) = exe.parent() {
                    candidates.push(dir.join(HELPER_NAME));
                    if let Some(up) = dir.parent() {
                        candidates.push(up.join(HELPER_NAME));
                    }
                }
            }
            if let Some(p) = std::env::var_os(format!("CARGO_BIN_EXE_{HELPER_NAME}")) {
                candidates.push(PathBuf::from(p));
            }
        }
        for c in candidates {
            if c.is_file() {
                return Ok(Launcher::new(c, mode));
            }
            looked_at.push(c);
        }
        Err(SandboxError::HelperMissing { looked_at })
    }

    /// Uses the current executable as the helper: for binaries that call
    /// [`crate::helper::dispatch`] first thing in `main`.
    pub fn current_exe(mode: Mode) -> Result<Launcher, SandboxError> {
        let exe = std::env::current_exe().map_err(|_| SandboxError::HelperMissing {
            looked_at: Vec::new(),
        })?;
        Ok(Launcher::new(exe, mode))
    }

    fn new(helper: PathBuf, mode: Mode) -> Launcher {
        Launcher {
            helper,
            helper_args: Vec::new(),
            mode,
            zygote: Arc::new(Mutex::new(None)),
        }
    }

    fn start_zygote(&self) -> Result<Zygote, SandboxError> {
        let spawn_err = |e: std::io::Error| {
            SandboxError::Spawn(format!("cannot start {}: {e}", self.helper.display()))
        };
        let pair = || {
            rustix::net::socketpair(
                rustix::net::AddressFamily::UNIX,
                rustix::net::SocketType::SEQPACKET,
                rustix::net::SocketFlags::CLOEXEC,
                None,
            )
            .map_err(|e| spawn_err(e.into()))
        };
        let (without, without_theirs) = pair()?;
        let (with, with_theirs) = pair()?;
        let mode = serde_json::to_value(self.mode)
            .ok()
            .and_then(|m| m.as_str().map(str::to_owned))
            .unwrap_or_default();
        let process = std::process::Command::new(&self.helper)
            .args(&self.helper_args)
            .arg(HELPER_FLAG)
            .arg(ZYGOTE)
            .arg(mode)
            .env_clear()
            .stdin(Stdio::from(without_theirs))
            .stdout(Stdio::from(with_theirs))
            .spawn()
            .map_err(spawn_err)?;
        Ok(Zygote {
            controls: [without, with],
            process,
        })
    }

    /// Hands one run's descriptors to the zygote, starting it (again) if it is not running.
    fn request(
        &self,
        network: bool,
        fds: [BorrowedFd<'_>; REQUEST_FDS],
    ) -> Result<(), SandboxError> {
        let mut zygote = self.zygote.lock().unwrap_or_else(PoisonError::into_inner);
        let mut last = None;
        for _ in 0..2 {
            let alive = match zygote.as_mut() {
                Some(z) => matches!(z.process.try_wait(), Ok(None)),
                None => false,
            };
            if !alive {
                *zygote = None;
                *zygote = Some(self.start_zygote()?);
            }
            let Some(z) = zygote.as_ref() else { continue };
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(REQUEST_FDS))];
            let mut ancillary = SendAncillaryBuffer::new(&mut space);
            ancillary.push(SendAncillaryMessage::ScmRights(&fds));
            match rustix::net::sendmsg(
                &z.controls[usize::from(network)],
                &[IoSlice::new(&[REQUEST_BYTE])],
                &mut ancillary,
                SendFlags::NOSIGNAL,
            ) {
                Ok(_) => return Ok(()),
                // A zygote that died after the check: start another one, once.
                Err(e) => {
                    last = Some(e);
                    *zygote = None;
                }
            }
        }
        Err(SandboxError::Spawn(format!(
            "the sandbox helper {} does not take requests: {}",
            self.helper.display(),
            last.map_or_else(|| "it exits at once".to_owned(), |e| e.to_string())
        )))
    }

    /// The helper binary in use.
    pub fn helper(&self) -> &Path {
        &self.helper
    }

    /// The confinement mode processes are run with.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

/// A program to run confined: program, arguments, working directory inside the workspace, an
/// environment built from an allow-list, stdin, timeout, rlimits and output caps.
#[derive(Debug, Clone)]
pub struct SandboxedCommand {
    program: String,
    args: Vec<String>,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    limits: Rlimits,
    output_cap: usize,
}

/// How a confined process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The program exited with this code (128 + N when it died of signal N).
    Exited(i32),
    /// The timeout passed; the whole process tree was killed.
    Timeout,
    /// The cancellation token fired; the whole process tree was killed.
    Cancelled,
}

/// What a confined process did.
#[derive(Debug, Clone)]
pub struct ProcessOutput {
    /// How it ended.
    pub outcome: Outcome,
    /// Its standard output, cut at the cap.
    pub stdout: Vec<u8>,
    /// Its standard error, cut at the cap.
    pub stderr: Vec<u8>,
    /// Whether stdout was cut.
    pub stdout_truncated: bool,
    /// Whether stderr was cut.
    pub stderr_truncated: bool,
    /// What confined it (`Enforcement::NONE` if it was stopped before the program started).
    pub enforcement: Enforcement,
    /// The resource limits the run reached (memory, processes, file size, CPU): a program killed
    /// by one of them exits with 128 + the signal's number, and this says which limit it was.
    pub limits_hit: Vec<LimitHit>,
    /// Wall time of the call.
    pub elapsed: Duration,
}

impl ProcessOutput {
    /// Whether the program exited with code 0.
    pub fn success(&self) -> bool {
        self.outcome == Outcome::Exited(0)
    }

    /// Stdout as text (lossy).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Stderr as text (lossy).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

impl SandboxedCommand {
    /// A command for `program` (a name looked up in the sandbox's `PATH`, or a path), with a 30 s
    /// timeout, [`Rlimits::default`] and 64 KiB output caps.
    pub fn new(program: impl Into<String>) -> Self {
        SandboxedCommand {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout: Duration::from_secs(30),
            limits: Rlimits::default(),
            output_cap: 64 * 1024,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The working directory: relative to the workspace, or absolute inside it. Default: the
    /// workspace.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Adds an environment variable to the allow-listed defaults (`PATH`, `LANG`, `HOME` = the
    /// workspace, `TMPDIR` = the policy's tmpdir). `TMPDIR` cannot be overridden.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Bytes fed to the program's stdin (then closed). Default: `/dev/null`.
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// Wall-clock limit; then the whole tree is killed and the outcome is [`Outcome::Timeout`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Resource limits for the program and its descendants.
    pub fn limits(mut self, limits: Rlimits) -> Self {
        self.limits = limits;
        self
    }

    /// Bytes kept of stdout and of stderr each; the rest is read and dropped.
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    fn spec(&self, policy: &SandboxPolicy, mode: Mode) -> Result<ExecSpec, SandboxError> {
        policy.validate()?;
        let cwd = match &self.cwd {
            None => policy.workspace.clone(),
            Some(c) if c.is_absolute() => c.clone(),
            Some(c) => policy.workspace.join(c),
        };
        let cwd = cwd.canonicalize().map_err(|e| {
            SandboxError::InvalidPolicy(format!("cannot resolve cwd {}: {e}", cwd.display()))
        })?;
        if !cwd.starts_with(&policy.workspace) {
            return Err(SandboxError::InvalidPolicy(format!(
                "cwd {} lies outside the workspace",
                cwd.display()
            )));
        }
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let mut env = vec![
            ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("HOME".to_owned(), text(&policy.workspace)),
        ];
        for (k, v) in &self.env {
            env.retain(|(old, _)| old != k);
            env.push((k.clone(), v.clone()));
        }
        env.retain(|(k, _)| k != "TMPDIR");
        env.push(("TMPDIR".to_owned(), text(policy.tmpdir())));
        Ok(ExecSpec {
            policy: policy.clone(),
            mode,
            program: self.program.clone(),
            args: self.args.clone(),
            cwd,
            env,
            limits: self.limits.clone(),
        })
    }

    /// Runs the program confined to `policy` through `launcher`'s helper.
    ///
    /// Errors mean the program did not run (or its confinement could not be proven): setup
    /// failures, a missing helper, a policy the kernel cannot enforce under `Mode::Required`.
    /// Timeouts and cancellation are outcomes, with the output read so far.
    pub async fn run(
        &self,
        launcher: &Launcher,
        policy: &SandboxPolicy,
        cancel: &CancellationToken,
    ) -> Result<ProcessOutput, SandboxError> {
        let started = Instant::now();
        let spec = self.spec(policy, launcher.mode)?;
        let json = serde_json::to_vec(&spec)
            .map_err(|e| SandboxError::Spawn(format!("cannot encode the spec: {e}")))?;
        let io_err = |what: &str, e: std::io::Error| SandboxError::Spawn(format!("{what}: {e}"));
        let pipe_pair = || {
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                .map_err(|e| io_err("pipe", e.into()))
        };
        let (stdin_child, stdin_ours): (OwnedFd, Option<OwnedFd>) = if self.stdin.is_some() {
            let (r, w) = pipe_pair()?;
            (r, Some(w))
        } else {
            let null = std::fs::File::open("/dev/null").map_err(|e| io_err("/dev/null", e))?;
            (null.into(), None)
        };
        let (stdout_ours, stdout_child) = pipe_pair()?;
        let (stderr_ours, stderr_child) = pipe_pair()?;
        let (socket, socket_child) = UnixStream::pair().map_err(|e| io_err("socketpair", e))?;
        socket
            .set_nonblocking(true)
            .map_err(|e| io_err("run socket", e))?;
        // The spec goes ahead of the request, so the init finds it at once; what does not
        // fit in the socket buffer follows below.
        let mut framed = Vec::with_capacity(json.len() + 4);
        framed.extend_from_slice(&(json.len() as u32).to_le_bytes());
        framed.extend_from_slice(&json);
        let sent = {
            use std::io::Write;
            (&socket).write(&framed).unwrap_or(0)
        };
        {
            use std::os::fd::AsFd;
            launcher.request(
                policy.network,
                [
                    stdin_child.as_fd(),
                    stdout_child.as_fd(),
                    stderr_child.as_fd(),
                    socket_child.as_fd(),
                ],
            )?;
        }
        // Only the init holds the program's ends now, so the pipes end with the tree.
        drop((stdin_child, stdout_child, stderr_child, socket_child));
        // Dropping this (a dropped run) closes the run: the init exits, and the tree dies with it.
        let mut socket =
            tokio::net::UnixStream::from_std(socket).map_err(|e| io_err("run socket", e))?;
        let receiver = |fd| pipe::Receiver::from_owned_fd(fd).map_err(|e| io_err("pipe", e));
        let cap = self.output_cap;
        let mut stdout = Capped::new(receiver(stdout_ours)?, cap);
        let mut stderr = Capped::new(receiver(stderr_ours)?, cap + STATUS_ROOM);
        if let (Some(input), Some(fd)) = (self.stdin.clone(), stdin_ours) {
            let mut pipe = pipe::Sender::from_owned_fd(fd).map_err(|e| io_err("pipe", e))?;
            // A program that does not read its input must not block the call.
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
            });
        }
        // An init that is gone shows as a missing exit status below.
        if sent < framed.len() {
            let _ = socket.write_all(&framed[sent..]).await;
        }
        // The output is read in this task while the run lasts (no hand-off to other tasks on
        // the way back); what was read stays in `stdout` and `stderr` when the wait ends.
        let ended = {
            let reading = async { tokio::join!(stdout.read_to_end(), stderr.read_to_end()) };
            let exit = read_exit(&mut socket);
            let deadline = tokio::time::sleep(self.timeout);
            tokio::pin!(reading, exit, deadline);
            let mut read_all = false;
            loop {
                tokio::select! {
                    _ = &mut reading, if !read_all => read_all = true,
                    status = &mut exit => break Ended::Exited(status),
                    _ = &mut deadline => break Ended::Stopped(Outcome::Timeout),
                    _ = cancel.cancelled() => break Ended::Stopped(Outcome::Cancelled),
                }
            }
        };
        let (stopped, status) = match ended {
            Ended::Exited(status) => (None, status),
            Ended::Stopped(outcome) => {
                // The init kills the program, reports and exits, and the namespace dies with it.
                let _ = socket.shutdown().await;
                let _ = tokio::time::timeout(TERMINATE_GRACE, async {
                    tokio::join!(
                        read_exit(&mut socket),
                        stdout.read_to_end(),
                        stderr.read_to_end()
                    )
                })
                .await;
                (Some(outcome), None)
            }
        };
        drop(socket);
        let _ = tokio::time::timeout(DRAIN_GRACE, async {
            tokio::join!(stdout.read_to_end(), stderr.read_to_end())
        })
        .await;
        let (out, out_cut) = stdout.finish();
        let (raw_err, raw_err_cut) = stderr.finish();
        let (header, err) = split_status(&raw_err);
        let enforcement = match header {
            Status::Ok(e) => e,
            Status::Err(code, message) => {
                return Err(if code == "sandbox_unavailable" {
                    SandboxError::Unavailable(message)
                } else if code == "sandbox_invalid_policy" {
                    SandboxError::InvalidPolicy(message)
                } else {
                    SandboxError::Setup(message)
                });
            }
            // Stopped before the program started: nothing ran.
            Status::Missing if stopped.is_some() => Enforcement::NONE,
            Status::Missing => {
                return Err(SandboxError::Spawn(format!(
                    "the sandbox helper ended (exit status {status:?}) without a status line: {}",
                    String::from_utf8_lossy(&raw_err)
                )))
            }
        };
        let (status, limits_hit) = match status {
            Some((code, hits)) => (Some(code), hits),
            None => (None, Vec::new()),
        };
        let outcome = match (stopped, status) {
            (Some(o), _) => o,
            (None, Some(code)) => Outcome::Exited(code),
            (None, None) => {
                return Err(SandboxError::Spawn(
                    "the sandbox helper ended without reporting the exit status".to_owned(),
                ))
            }
        };
        let mut err = err.to_vec();
        let err_cut = raw_err_cut || err.len() > cap;
        err.truncate(cap);
        Ok(ProcessOutput {
            outcome,
            stdout: out,
            stderr: err,
            stdout_truncated: out_cut,
            stderr_truncated: err_cut,
            enforcement,
            limits_hit,
            elapsed: started.elapsed(),
        })
    }
}

enum Ended<S> {
    Exited(S),
    Stopped(Outcome),
}

/// Reads the init's `exit CODE [limits=NAME,…]` line from the run socket; `None` if the socket
/// ends without one (the init is gone).
async fn read_exit(socket: &mut tokio::net::UnixStream) -> Option<(i32, Vec<LimitHit>)> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < 128 {
        match socket.read(&mut byte).await {
            Ok(1) if byte[0] == b'\n' => break,
            Ok(1) => line.push(byte[0]),
            _ => return None,
        }
    }
    parse_exit(std::str::from_utf8(&line).ok()?)
}

fn parse_exit(line: &str) -> Option<(i32, Vec<LimitHit>)> {
    let rest = line.strip_prefix(EXIT_PREFIX)?;
    let (code, limits) = match rest.split_once(' ') {
        Some((code, limits)) => (code, Some(limits.strip_prefix(LIMITS_PREFIX)?)),
        None => (rest, None),
    };
    let hits = match limits {
        Some(names) => names
            .split(',')
            .map(LimitHit::parse)
            .collect::<Option<Vec<_>>>()?,
        None => Vec::new(),
    };
    Some((code.parse().ok()?, hits))
}

/// One output pipe, read up to a cap (and drained past it, so the program never blocks on a
/// full pipe).
struct Capped {
    pipe: pipe::Receiver,
    cap: usize,
    buf: Vec<u8>,
    /// More was written than the cap.
    cut: bool,
    /// The pipe ended (or failed).
    ended: bool,
}

impl Capped {
    fn new(pipe: pipe::Receiver, cap: usize) -> Capped {
        Capped {
            pipe,
            cap,
            buf: Vec::new(),
            cut: false,
            ended: false,
        }
    }

    /// Reads until the pipe ends; cancel-safe (what was read is kept).
    async fn read_to_end(&mut self) {
        let mut chunk = [0u8; 8192];
        while !self.ended {
            match self.pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => self.ended = true,
                Ok(n) => {
                    let room = self.cap.saturating_sub(self.buf.len());
                    self.buf.extend_from_slice(&chunk[..n.min(room)]);
                    self.cut |= n > room;
                }
            }
        }
    }

    /// What was read, and whether it is short of what was written (over the cap, or the pipe
    /// had not ended when reading stopped).
    fn finish(self) -> (Vec<u8>, bool) {
        (self.buf, self.cut || !self.ended)
    }
}

enum Status {
    Ok(Enforcement),
    Err(String, String),
    Missing,
}

/// Splits the helper's status line off the front of stderr. The init writes it before it starts
/// the program, so the program cannot forge or precede it.
fn split_status(raw: &[u8]) -> (Status, &[u8]) {
    let Some(nl) = raw.iter().position(|&b| b == b'\n') else {
        return (Status::Missing, raw);
    };
    let line = String::from_utf8_lossy(&raw[..nl]);
    let rest = &raw[nl + 1..];
    if let Some(json) = line.strip_prefix(OK_PREFIX) {
        match serde_json::from_str(json) {
            Ok(e) => (Status::Ok(e), rest),
            Err(_) => (Status::Missing, raw),
        }
    } else if let Some(err) = line.strip_prefix(ERR_PREFIX) {
        let (code, message) = err.split_once(' ').unwrap_or((err, ""));
        (Status::Err(code.to_owned(), message.to_owned()), rest)
    } else {
        (Status::Missing, raw)
    }
}
