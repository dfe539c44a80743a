//! The errors of this crate, each with a stable reason code.

use std::path::PathBuf;

/// Why confinement could not be set up, or a confined job or process could not run.
///
/// Every variant fails closed: nothing ran unconfined because of it. [`SandboxError::code`] gives
/// a stable reason code for audit events and tool outcomes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// `Mode::Required` was asked for, and this kernel (or process) cannot enforce it all.
    #[error("sandbox unavailable: {0}")]
    Unavailable(String),
    /// The policy itself is unusable (a missing workspace, a tmpdir outside it, a relative path).
    #[error("invalid sandbox policy: {0}")]
    InvalidPolicy(String),
    /// The kernel refused a confinement step.
    #[error("sandbox setup failed: {0}")]
    Setup(String),
    /// The helper binary that confines spawned processes was not found.
    #[error("sandbox helper `tool-sandbox-exec` not found (looked at: {})", display_paths(.looked_at))]
    HelperMissing {
        /// Every place that was tried, in order.
        looked_at: Vec<PathBuf>,
    },
    /// The helper could not be started, or it broke its protocol.
    #[error("cannot start the sandboxed process: {0}")]
    Spawn(String),
    /// Every slot of a confined pool is taken (running or queued jobs).
    #[error("confined pool `{0}` is busy: every slot is taken")]
    PoolBusy(String),
    /// The pool's workers are gone (all exited); no job can run.
    #[error("confined pool `{0}` is closed")]
    PoolClosed(String),
    /// The job panicked; the panic was caught on the worker.
    #[error("confined job panicked: {0}")]
    JobPanicked(String),
}

impl SandboxError {
    /// The stable reason code of this error, e.g. `sandbox_unavailable`.
    pub fn code(&self) -> &'static str {
        match self {
            SandboxError::Unavailable(_) => "sandbox_unavailable",
            SandboxError::InvalidPolicy(_) => "sandbox_invalid_policy",
            SandboxError::Setup(_) => "sandbox_setup_failed",
            SandboxError::HelperMissing { .. } => "sandbox_helper_missing",
            SandboxError::Spawn(_) => "sandbox_spawn_failed",
            SandboxError::PoolBusy(_) => "sandbox_pool_busy",
            SandboxError::PoolClosed(_) => "sandbox_pool_closed",
            SandboxError::JobPanicked(_) => "sandbox_job_panicked",
        }
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nowhere".to_owned();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
