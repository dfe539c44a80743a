//! Kernel confinement derived from a tool's declaration.
//!
//! TODO docs
#![warn(missing_docs)]

mod command;
mod confine;
mod error;
pub mod helper;
mod policy;
mod pool;
mod probe;
mod seccomp;

pub use command::{Launcher, Outcome, ProcessOutput, SandboxedCommand, HELPER_NAME};
pub use confine::{confine_current_thread, Enforcement, LandlockEnforcement};
pub use error::SandboxError;
pub use policy::{
    default_system_read_paths, CapabilityClass, FsAccess, Mode, Rlimits, SandboxPolicy,
};
pub use pool::{ConfinedPool, PoolConfig};
pub use probe::Support;
pub use tokio_util::sync::CancellationToken;
