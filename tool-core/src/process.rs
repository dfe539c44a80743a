//! Programs a tool starts, confined by the kernel to the call's declaration:
//! [`ToolContext::command`](crate::ToolContext::command).
//!
//! Every program runs through the sandbox helper (see [`crate::sandbox`]) with the rules of the
//! call's capability class: the workspace readable (and writable for tools riskier than
//! `read_only`), the system read paths, nothing else; no TCP and no non-UNIX sockets unless the
//! tool is `open_world`; its own user, PID and IPC namespaces (and an empty network namespace
//! without network), so no child outlives the call, not `&`, `setsid` or `nohup`; rlimits (CPU,
//! memory, processes, file size, open files); an environment cleared to `PATH`, `LANG`, `HOME`
//! (the workspace), `TMPDIR` (the workspace) and what the tool adds with [`Command::env`]. The
//! working directory is the workspace or a checked [`WorkspacePath`]. Output is capped; the
//! call's timeout and cancellation kill the whole tree.
//!
//! A timeout or cancellation comes back as [`ProcessError::Timeout`] / [`ProcessError::Cancelled`]
//! and, when the handler then fails, the call's reason code is `timeout` / `cancelled` (not
//! `tool_error`); a program that cannot be confined is not started
//! ([`ProcessError::Unavailable`], reason code `sandbox_unavailable`).
//!
//! ```no_run
//! use tool_core::{tool, ToolContext};
//!
//! /// Count the lines of the workspace's files.
//! #[tool(risk = "read_only")]
//! async fn count_lines(ctx: &ToolContext) -> Result<String, String> {
//!     let out = ctx
//!         .command("sh")
//!         .args(["-c", "cat * | wc -l"])
//!         .output()
//!         .await
//!         .map_err(|e| e.to_string())?;
//!     Ok(out.stdout_text())
//! }
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::guard::path::WorkspacePath;
use crate::reason::ReasonCode;
use crate::sandbox::call::CallSandbox;
use crate::sandbox::kernel::{Outcome, SandboxError, SandboxedCommand};
pub use crate::sandbox::limits::ProcessLimits;
use crate::sandbox::runtime::AbortOnDrop;

/// Default wall-clock limit of a program, when the call has no deadline either.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default bytes kept of stdout and of stderr each.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;

/// A program to start confined, built with [`ToolContext::command`](crate::ToolContext::command).
#[derive(Debug)]
pub struct Command {
    program: String,
    // Program, arguments, cwd, environment, stdin and output cap; the timeout is set at `run`,
    // where the call's remaining time is known.
    inner: SandboxedCommand,
    timeout: Option<Duration>,
    sandbox: Option<Arc<CallSandbox>>,
    cancel: CancellationToken,
}

/// What a confined program did (it ran to its end: see [`ProcessError`] for the other cases).
#[derive(Debug, Clone)]
pub struct Output {
    /// Its exit code (128 + N when it died of signal N).
    pub exit_code: i32,
    /// Its standard output, cut at the cap.
    pub stdout: Vec<u8>,
    /// Its standard error, cut at the cap.
    pub stderr: Vec<u8>,
    /// Whether stdout was cut.
    pub stdout_truncated: bool,
    /// Whether stderr was cut.
    pub stderr_truncated: bool,
    /// What confined it, e.g. `landlock-v7+seccomp+pidns+netns`.
    pub enforced: String,
    /// Wall time.
    pub elapsed: Duration,
}

impl Output {
    /// Whether the program exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code == 0
    }

    /// Stdout as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Stderr as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Stdout, then stderr under a `[stderr]` line, with a marker where either was cut: what the
    /// example script tools return.
    pub fn report(&self) -> String {
        let mut text = self.stdout_text();
        if self.stdout_truncated {
            text.push_str("\n[output cut]");
        }
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&self.stderr_text());
            if self.stderr_truncated {
                text.push_str("\n[output cut]");
            }
        }
        text
    }
}

/// Why a program did not run to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessError {
    /// The timeout passed; the whole process tree was killed.
    Timeout {
        /// The program.
        program: String,
        /// The limit that passed.
        after: Duration,
    },
    /// The call was cancelled; the whole process tree was killed.
    Cancelled {
        /// The program.
        program: String,
    },
    /// The program reached a resource limit and failed (the kernel killed it, or it stopped when
    /// a fork or a write was refused).
    ResourceLimit {
        /// The program.
        program: String,
        /// Which limits, and what they were set to.
        limits: String,
        /// Its exit code.
        exit_code: i32,
    },
    /// The program cannot be confined here, so it was not started.
    Unavailable(String),
    /// The program could not be started (setup failed, the helper broke its protocol).
    Failed(String),
}

impl ProcessError {
    /// The reason code this error gives the call when the handler fails with it.
    pub fn code(&self) -> ReasonCode {
        match self {
            ProcessError::Timeout { .. } => ReasonCode::Timeout,
            ProcessError::Cancelled { .. } => ReasonCode::Cancelled,
            ProcessError::ResourceLimit { .. } => ReasonCode::ResourceLimit,
            ProcessError::Unavailable(_) => ReasonCode::SandboxUnavailable,
            ProcessError::Failed(_) => ReasonCode::ToolError,
        }
    }
}

impl fmt::Display for ProcessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessError::Timeout { program, after } => write!(
                f,
                "{program} timed out after {} ms; its whole process tree was killed",
                after.as_millis()
            ),
            ProcessError::Cancelled { program } => write!(
                f,
                "{program} was cancelled; its whole process tree was killed"
            ),
            ProcessError::ResourceLimit {
                program,
                limits,
                exit_code,
            } => write!(f, "{program} reached {limits} (exit code {exit_code})"),
            ProcessError::Unavailable(m) => write!(f, "sandbox unavailable: {m}"),
            ProcessError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ProcessError {}

impl From<ProcessError> for String {
    fn from(e: ProcessError) -> Self {
        e.to_string()
    }
}

impl Command {
    pub(crate) fn new(
        program: String,
        sandbox: Option<Arc<CallSandbox>>,
        cancel: CancellationToken,
    ) -> Self {
        Command {
            inner: SandboxedCommand::new(program.clone()).output_cap(DEFAULT_OUTPUT_CAP),
            program,
            timeout: None,
            sandbox,
            cancel,
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.inner = self.inner.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.inner = self.inner.args(args);
        self
    }

    /// Runs in this directory (checked by the path guard). Default: the workspace.
    pub fn cwd(mut self, dir: &WorkspacePath) -> Self {
        self.inner = self.inner.cwd(dir.as_path());
        self
    }

    /// Adds an environment variable to the cleared environment (`TMPDIR` cannot be changed).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.inner = self.inner.env(key, value);
        self
    }

    /// Feeds these bytes to the program's stdin, then closes it. Default: `/dev/null`.
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.inner = self.inner.stdin(input);
        self
    }

    /// Stops the program after this long (never later than the call's own timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Bytes kept of stdout and of stderr each (default [`DEFAULT_OUTPUT_CAP`]).
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.inner = self.inner.output_cap(bytes);
        self
    }

    /// Runs the program confined and waits for it.
    ///
    /// A timeout, a cancellation, or a program that cannot be confined is an error; the error is
    /// also recorded on the call, so a handler that fails with it gets the matching reason code.
    pub async fn output(self) -> Result<Output, ProcessError> {
        let sandbox = self.sandbox.clone();
        let result = self.run().await;
        if let (Some(sb), Err(e)) = (&sandbox, &result) {
            sb.set_code(e.code());
        }
        result
    }

    async fn run(self) -> Result<Output, ProcessError> {
        let Some(sandbox) = self.sandbox else {
            return Err(ProcessError::Unavailable(
                "this context was not made by an executor, so there is no confinement to run \
                 the program under"
                    .to_owned(),
            ));
        };
        let process = sandbox
            .class()
            .process
            .as_ref()
            .map_err(|why| ProcessError::Unavailable(why.clone()))?;
        let remaining = sandbox
            .deadline
            .map(|at| at.saturating_duration_since(tokio::time::Instant::now()));
        let timeout = match (self.timeout, remaining) {
            (Some(t), Some(r)) => t.min(r),
            (Some(t), None) => t,
            (None, Some(r)) => r,
            (None, None) => DEFAULT_TIMEOUT,
        };
        let limits = sandbox.tool.limits.clone();
        let cmd = self.inner.timeout(timeout).limits(limits.kernel());
        let ran = match &sandbox.outside {
            // The handler runs on a confined thread, which may not create the helper's
            // namespaces: launch from the caller's runtime.
            Some(outside) => {
                let launcher = process.launcher.clone();
                let policy = process.policy.clone();
                let cancel = self.cancel.clone();
                let task = outside.spawn(async move { cmd.run(&launcher, &policy, &cancel).await });
                let _guard = AbortOnDrop(task.abort_handle());
                task.await.map_err(|e| {
                    ProcessError::Failed(format!("the launch of {} failed: {e}", self.program))
                })?
            }
            None => {
                cmd.run(&process.launcher, &process.policy, &self.cancel)
                    .await
            }
        };
        let out = ran.map_err(|e| match e {
            SandboxError::Unavailable(m) => ProcessError::Unavailable(m),
            e => ProcessError::Failed(format!("cannot start {}: {e}", self.program)),
        })?;
        let enforced = out.enforcement.label();
        sandbox.set_process(enforced.clone());
        match out.outcome {
            Outcome::Exited(exit_code) if exit_code != 0 && !out.limits_hit.is_empty() => {
                let hits: Vec<String> =
                    out.limits_hit.iter().map(|h| limits.describe(*h)).collect();
                Err(ProcessError::ResourceLimit {
                    program: self.program,
                    limits: hits.join(" and "),
                    exit_code,
                })
            }
            Outcome::Exited(exit_code) => Ok(Output {
                exit_code,
                stdout: out.stdout,
                stderr: out.stderr,
                stdout_truncated: out.stdout_truncated,
                stderr_truncated: out.stderr_truncated,
                enforced,
                elapsed: out.elapsed,
            }),
            Outcome::Timeout => Err(ProcessError::Timeout {
                program: self.program,
                after: timeout,
            }),
            Outcome::Cancelled => Err(ProcessError::Cancelled {
                program: self.program,
            }),
        }
    }
}
