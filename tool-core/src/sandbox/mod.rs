//! Kernel confinement of tool calls, derived from each tool's declaration (the `tool-sandbox`
//! crate: Landlock, seccomp, user/PID/network namespaces, rlimits).
//!
//! The executor maps a declaration to a capability class: `safe`/`read_only` tools may read the
//! workspace and write nothing; every other risk may read and write the workspace only;
//! `open_world` tools may use the network, no other tool may connect or bind TCP or open a
//! non-UNIX socket. At [`Executor::new`](crate::Executor::new) it starts, per class the registry
//! uses, a pool of worker threads confined by the kernel to that class, and finds the helper that
//! confines spawned programs.
//!
//! | what runs | how it is confined | `enforced` in the audit event |
//! | --- | --- | --- |
//! | a sync `#[tool]` handler | on a worker of its class's pool (Landlock + seccomp, once per worker, irreversibly) | e.g. `landlock-v7+seccomp` |
//! | an async `#[tool]` handler | on its class's confined current-thread runtime (the thread confined like the workers; its `spawn_blocking` threads inherit it) | e.g. `landlock-v7+seccomp` |
//! | an async `#[tool]` handler with [`ExecutorConfig::sandbox_async`](crate::ExecutorConfig::sandbox_async)`(false)`; a dynamic tool's handler, always | **not confined**: it runs on the caller's tokio runtime, under the static guards only | `none` |
//! | a program started with [`ToolContext::command`](crate::ToolContext::command) | the helper: its own user, PID, IPC, mount (and without network, network) namespaces with a minimal root (system paths read-only, the workspace, an empty `/tmp`, the declared UNIX sockets), Landlock + seccomp, rlimits and memory and pids cgroups ([`ProcessLimits`](crate::process::ProcessLimits)), a cleared environment, output caps, the call's timeout and cancellation killing the whole tree | after the handler's, e.g. `landlock-v7+seccomp; process: landlock-v7+seccomp+pidns+netns+mntns+pids+mem` |
//! | nothing (the call was refused before its handler) | | `not_run` |
//!
//! A confined thread cannot run the caller's runtime (Landlock and seccomp hold a thread
//! irreversibly), so an async handler's future is handed to a confined runtime of its class and
//! its result handed back, a hand-off per call like the sync workers'; both sides poll for a
//! short while before they sleep ([`ExecutorConfig::sandbox_spin`](crate::ExecutorConfig::sandbox_spin)),
//! so a short handler costs no thread wake-up, but only while the machine has a core to spare:
//! when every core has work, a polling thread would take its turn from the one it waits for, so
//! both sleep at once and a call costs two wake-ups instead. The runtime polls a handed-off
//! future once before it spawns it, so a handler that finishes on its first poll costs no task. The async handlers of one class share that
//! runtime's one thread: CPU-bound stretches of them run one at a time, and
//! `tokio::task::block_in_place` is not available there (write such a handler sync).
//! [`ExecutorConfig::sandbox_async`](crate::ExecutorConfig::sandbox_async)`(false)` runs async
//! handlers on the caller's runtime instead, and the audit then says `none` for them instead of
//! pretending. Programs an async handler starts are launched from the caller's runtime (the
//! helper needs namespaces a confined thread may not create). Dynamic tools' handlers (closures,
//! the MCP proxy) always run on the caller's runtime: they may hold resources of it.
//!
//! # Modes
//!
//! [`Mode::Required`] is the default. Where the kernel offers everything ([`support`] says what
//! it offers), sync handlers run confined and programs run in the helper; if a pool cannot be
//! confined the executor says so with a `tracing::warn!` at start-up. Where it does not (an old
//! kernel, another OS, the helper binary not found): tools with script arguments are refused with
//! `sandbox_unavailable` before they run, a program started through
//! [`ToolContext::command`](crate::ToolContext::command) is not started (`sandbox_unavailable`),
//! and in-process handlers run with the static guards only, after a loud `tracing::warn!` when
//! the executor starts. [`Mode::BestEffort`] confines with what the kernel offers and records
//! what that was; [`Mode::Off`] confines nothing (you bring your own container) and records
//! `none`.
//!
//! # The helper binary
//!
//! Spawned programs are confined by a helper process (`tool-sandbox-exec`). Cargo does not build
//! a dependency's binaries, so a program embeds the helper: it calls [`dispatch_helper`] first
//! thing in `main` (the CLI, `tool_core::cli`, does), and the executor then uses the program itself
//! as the helper. Otherwise the executor looks for `tool-sandbox-exec` at the path given with
//! [`ExecutorConfig::sandbox_helper`](crate::ExecutorConfig::sandbox_helper), else next to the
//! executable (or one directory up, for test binaries), and fails closed with
//! `sandbox_unavailable` and a message naming the fix when there is none.
//!
//! # What is not enforced
//!
//! Async handlers (above). A sync handler's memory is shared with the rest of the process, and
//! file descriptors opened before it ran stay usable. Handler threads may not call the metadata
//! syscalls (`chmod`, `chown`, `utime`, `*xattr` families) nor create UNIX sockets unless their
//! tool declares `unix_sockets`; they still see what `stat` shows of any path. UDP for `open_world` tools. Hard links
//! that already exist (the workspace file operations refuse files with more than one link). In
//! the worker pools the system read paths leave out `/etc/passwd` and `/etc/group` (an in-process
//! handler has no need for the user database); programs get the full list of
//! `tool_sandbox::default_system_read_paths`. See the `tool-sandbox` crate docs for the rest.

pub(crate) mod call;
pub(crate) mod grant;
pub(crate) mod helper;
pub(crate) mod kernel;
mod label;
pub(crate) mod limits;
pub(crate) mod runtime;
pub(crate) mod setup;
pub(crate) mod sync;
pub(crate) mod tool_grants;

pub use grant::{GrantAccess, Grants};
#[cfg(feature = "cli")]
pub(crate) use helper::helper_status;
pub use helper::{block_on_main, dispatch_helper, enter_main, helper_embedded};
pub use setup::{
    support, Mode, SandboxConfig, DEFAULT_SLICE, DEFAULT_SPIN, DEFAULT_TOOL_SLOTS, DEFAULT_WORKERS,
};
