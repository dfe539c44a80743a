//! Running a program confined, through the helper: bounded time, bounded output, whole-tree kill.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::cgroup::PidsCgroup;
use crate::confine::Enforcement;
use crate::error::SandboxError;
use crate::helper::{ExecSpec, ERR_PREFIX, HELPER_FLAG, OK_PREFIX};
use crate::policy::{Mode, Rlimits, SandboxPolicy};

/// The helper binary's file name.
pub const HELPER_NAME: &str = "tool-sandbox-exec";
/// How long the supervisor gets to kill the tree after `SIGTERM` before it is killed itself.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// How long output pipes may stay open after the helper exited (only a process that escaped the
/// PID namespace, possible under `BestEffort` alone, could hold them).
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// Room for the status line in front of the program's stderr.
const STATUS_ROOM: usize = 4096;

/// Finds and runs the helper binary; one per executor.
#[derive(Debug, Clone)]
pub struct Launcher {
    helper: PathBuf,
    helper_args: Vec<String>,
    mode: Mode,
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
                return Ok(Launcher {
                    helper: c,
                    helper_args: Vec::new(),
                    mode,
                });
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
        Ok(Launcher {
            helper: exe,
            helper_args: Vec::new(),
            mode,
        })
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
            pids_cgroup: None,
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
        let mut spec = self.spec(policy, launcher.mode)?;
        // Counts the whole tree, the supervisor and the init included; binds root, unlike
        // RLIMIT_NPROC. Removed below once the tree is gone.
        let cgroup = match (launcher.mode, self.limits.processes) {
            (Mode::Off, _) | (_, None) => None,
            (_, Some(n)) => PidsCgroup::create(n.saturating_add(2)),
        };
        spec.pids_cgroup = cgroup.as_ref().map(|c| c.path().to_path_buf());
        let json = serde_json::to_string(&spec)
            .map_err(|e| SandboxError::Spawn(format!("cannot encode the spec: {e}")))?;
        let mut child = Command::new(&launcher.helper)
            .args(&launcher.helper_args)
            .arg(HELPER_FLAG)
            .arg("supervise")
            .arg(json)
            .env_clear()
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                SandboxError::Spawn(format!("cannot start {}: {e}", launcher.helper.display()))
            })?;
        let cap = self.output_cap;
        let stdout = tokio::spawn(read_capped(child.stdout.take(), cap));
        let stderr = tokio::spawn(read_capped(child.stderr.take(), cap + STATUS_ROOM));
        if let (Some(input), Some(mut pipe)) = (self.stdin.clone(), child.stdin.take()) {
            // A program that does not read its input must not block the call.
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
            });
        }
        let ended = tokio::select! {
            status = child.wait() => Ended::Exited(status),
            _ = tokio::time::sleep(self.timeout) => Ended::Stopped(Outcome::Timeout),
            _ = cancel.cancelled() => Ended::Stopped(Outcome::Cancelled),
        };
        let (stopped, status) = match ended {
            Ended::Exited(status) => (
                None,
                Some(
                    status
                        .map_err(|e| SandboxError::Spawn(format!("cannot wait for helper: {e}")))?,
                ),
            ),
            Ended::Stopped(outcome) => {
                terminate(&mut child).await;
                (Some(outcome), None)
            }
        };
        let (out, out_cut) = drain(stdout).await;
        let (raw_err, raw_err_cut) = drain(stderr).await;
        if let Some(cgroup) = cgroup {
            cgroup.remove().await;
        }
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
            Status::Missing if status.is_none() => Enforcement::NONE,
            Status::Missing => {
                return Err(SandboxError::Spawn(format!(
                    "the helper exited ({status:?}) without a status line: {}",
                    String::from_utf8_lossy(&raw_err)
                )))
            }
        };
        let outcome = match (stopped, status) {
            (Some(o), _) => o,
            (None, Some(s)) => Outcome::Exited(exit_code(s)),
            (None, None) => Outcome::Exited(-1),
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
            elapsed: started.elapsed(),
        })
    }
}

enum Ended<S> {
    Exited(S),
    Stopped(Outcome),
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Asks the supervisor to kill the tree (it waits for the PID namespace to be empty), then kills
/// the supervisor itself if it does not finish in time (its init dies with it).
async fn terminate(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if tokio::time::timeout(TERMINATE_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

async fn drain(task: tokio::task::JoinHandle<(Vec<u8>, bool)>) -> (Vec<u8>, bool) {
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => (Vec::new(), false),
        Err(_) => {
            abort.abort();
            (Vec::new(), true)
        }
    }
}

async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>, cap: usize) -> (Vec<u8>, bool) {
    let Some(mut pipe) = pipe else {
        return (Vec::new(), false);
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut cut = false;
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(buf.len());
                buf.extend_from_slice(&chunk[..n.min(room)]);
                // Keep draining so the program never blocks on a full pipe.
                cut |= n > room;
            }
        }
    }
    (buf, cut)
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
