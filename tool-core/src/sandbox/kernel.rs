//! The kernel side: `tool-sandbox` on Linux, a stand-in that enforces nothing elsewhere (every
//! confinement is unavailable there, so `Mode::Required` refuses what needs it).

#[cfg(target_os = "linux")]
pub(crate) use tool_sandbox::{
    ask_thread_slice, confine_current_thread, default_system_read_paths, recv_spinning,
    ConfinedPool, FsAccess, IdleSpin, Launcher, LimitHit, Mode as KernelMode, Outcome, PathGrant,
    PoolConfig, Rlimits, SandboxError, SandboxPolicy, SandboxedCommand, Support,
};

/// Runs the helper if this process was started as one.
#[cfg(target_os = "linux")]
pub(crate) fn dispatch() -> Option<i32> {
    tool_sandbox::helper::dispatch()
}

#[cfg(not(target_os = "linux"))]
pub(crate) use other::*;

/// Stand-ins with the names and shapes the executor uses; nothing here confines anything (so
/// some of it is never constructed).
#[cfg(not(target_os = "linux"))]
#[allow(dead_code)]
mod other {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    pub(crate) fn dispatch() -> Option<i32> {
        None
    }

    /// Nothing spins where nothing is confined.
    pub(crate) struct IdleSpin;

    impl IdleSpin {
        pub(crate) fn try_start() -> Option<IdleSpin> {
            None
        }
        pub(crate) fn still_worth_it(&self) -> bool {
            false
        }
    }

    /// Nothing spins where nothing is confined: the result is awaited.
    pub(crate) async fn recv_spinning<T>(
        rx: tokio::sync::oneshot::Receiver<T>,
        _spin: Duration,
    ) -> Result<T, tokio::sync::oneshot::error::RecvError> {
        rx.await
    }

    /// No scheduler slice is asked for where nothing is confined.
    pub(crate) fn ask_thread_slice(_: Option<Duration>) {}

    pub(crate) fn confine_current_thread(
        _: &SandboxPolicy,
        _: KernelMode,
    ) -> Result<Enforcement, SandboxError> {
        unavailable()
    }

    pub(crate) fn default_system_read_paths() -> Vec<PathBuf> {
        Vec::new()
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum KernelMode {
        Required,
        BestEffort,
        Off,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum FsAccess {
        ReadOnly,
        ReadWrite,
    }

    #[derive(Debug)]
    pub(crate) enum SandboxError {
        Unavailable(String),
        JobPanicked(String),
    }

    impl SandboxError {
        pub(crate) fn code(&self) -> &'static str {
            "sandbox_unavailable"
        }
    }

    impl std::fmt::Display for SandboxError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                SandboxError::Unavailable(m) => write!(f, "sandbox unavailable: {m}"),
                SandboxError::JobPanicked(m) => write!(f, "confined job panicked: {m}"),
            }
        }
    }

    fn unavailable<T>() -> Result<T, SandboxError> {
        Err(SandboxError::Unavailable(
            "kernel confinement is implemented for Linux only".to_owned(),
        ))
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct Support;

    impl Support {
        pub(crate) fn probe() -> Support {
            Support
        }
        pub(crate) fn threads_fully_confined(&self) -> bool {
            false
        }
        pub(crate) fn processes_fully_confined(&self) -> bool {
            false
        }
        pub(crate) fn label(&self) -> String {
            "none".to_owned()
        }
    }

    #[derive(Debug, Clone)]
    pub(crate) struct SandboxPolicy;

    pub(crate) struct PathGrant {
        pub(crate) path: PathBuf,
        pub(crate) access: FsAccess,
    }

    impl SandboxPolicy {
        pub(crate) fn new(_: &Path, _: FsAccess, _: bool) -> Result<Self, SandboxError> {
            Ok(SandboxPolicy)
        }
        pub(crate) fn with_system_read_paths(
            self,
            _: impl IntoIterator<Item = PathBuf>,
        ) -> Result<Self, SandboxError> {
            Ok(self)
        }
        pub(crate) fn with_unix_sockets(
            self,
            _: impl IntoIterator<Item = PathBuf>,
        ) -> Result<Self, SandboxError> {
            Ok(self)
        }
        pub(crate) fn with_granted_paths(
            self,
            _: impl IntoIterator<Item = PathGrant>,
        ) -> Result<Self, SandboxError> {
            Ok(self)
        }
        pub(crate) fn with_tcp_connect_ports(
            self,
            _: impl IntoIterator<Item = u16>,
        ) -> Result<Self, SandboxError> {
            Ok(self)
        }
    }

    #[derive(Debug, Clone)]
    pub(crate) struct Enforcement;

    impl Enforcement {
        pub(crate) fn label(&self) -> String {
            "none".to_owned()
        }
    }

    pub(crate) struct PoolConfig {
        pub(crate) workers: usize,
        pub(crate) queue: usize,
        pub(crate) name: String,
        pub(crate) spin: Duration,
        pub(crate) slice: Option<Duration>,
    }

    #[derive(Debug, Clone)]
    pub(crate) struct ConfinedPool;

    impl ConfinedPool {
        pub(crate) fn new(
            _: &SandboxPolicy,
            _: KernelMode,
            _: PoolConfig,
        ) -> Result<Self, SandboxError> {
            unavailable()
        }
        pub(crate) fn enforcement(&self) -> Enforcement {
            Enforcement
        }
        pub(crate) fn available_slots(&self) -> usize {
            0
        }
        pub(crate) async fn run<F, R>(&self, _: F) -> Result<R, SandboxError>
        where
            F: FnOnce() -> R + Send + 'static,
            R: Send + 'static,
        {
            unavailable()
        }
    }

    #[derive(Debug, Clone)]
    pub(crate) struct Launcher;

    impl Launcher {
        pub(crate) fn locate(_: Option<&Path>, _: KernelMode) -> Result<Self, SandboxError> {
            unavailable()
        }
        pub(crate) fn current_exe(_: KernelMode) -> Result<Self, SandboxError> {
            unavailable()
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Outcome {
        Exited(i32),
        Timeout,
        Cancelled,
    }

    #[derive(Debug, Clone, Default)]
    pub(crate) struct Rlimits {
        pub(crate) cpu_secs: Option<u64>,
        pub(crate) address_space_bytes: Option<u64>,
        pub(crate) processes: Option<u64>,
        pub(crate) file_size_bytes: Option<u64>,
        pub(crate) open_files: Option<u64>,
        pub(crate) memory_bytes: Option<u64>,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum LimitHit {
        Memory,
        Processes,
        FileSize,
        Cpu,
    }

    impl LimitHit {
        pub(crate) fn as_str(self) -> &'static str {
            match self {
                LimitHit::Memory => "memory",
                LimitHit::Processes => "processes",
                LimitHit::FileSize => "file_size",
                LimitHit::Cpu => "cpu",
            }
        }
    }

    pub(crate) struct ProcessOutput {
        pub(crate) outcome: Outcome,
        pub(crate) limits_hit: Vec<LimitHit>,
        pub(crate) stdout: Vec<u8>,
        pub(crate) stderr: Vec<u8>,
        pub(crate) stdout_truncated: bool,
        pub(crate) stderr_truncated: bool,
        pub(crate) enforcement: Enforcement,
        pub(crate) elapsed: Duration,
    }

    #[derive(Debug, Clone)]
    pub(crate) struct SandboxedCommand;

    impl SandboxedCommand {
        pub(crate) fn new(_: impl Into<String>) -> Self {
            SandboxedCommand
        }
        pub(crate) fn arg(self, _: impl Into<String>) -> Self {
            self
        }
        pub(crate) fn args<I, S>(self, _: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self
        }
        pub(crate) fn cwd(self, _: impl Into<PathBuf>) -> Self {
            self
        }
        pub(crate) fn env(self, _: impl Into<String>, _: impl Into<String>) -> Self {
            self
        }
        pub(crate) fn stdin(self, _: impl Into<Vec<u8>>) -> Self {
            self
        }
        pub(crate) fn timeout(self, _: Duration) -> Self {
            self
        }
        pub(crate) fn output_cap(self, _: usize) -> Self {
            self
        }
        pub(crate) fn limits(self, _: Rlimits) -> Self {
            self
        }
        pub(crate) async fn run(
            &self,
            _: &Launcher,
            _: &SandboxPolicy,
            _: &CancellationToken,
        ) -> Result<ProcessOutput, SandboxError> {
            unavailable()
        }
    }
}
