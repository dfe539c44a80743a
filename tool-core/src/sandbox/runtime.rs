//! A confined current-thread tokio runtime per capability class, for async `#[tool]` handlers
//! (opt-in: `ExecutorConfig::sandbox_async`).
//!
//! The runtime's thread confines itself (Landlock + seccomp, irreversibly) before it builds the
//! runtime, so every future spawned onto it, and every thread it starts (`spawn_blocking`,
//! `tokio::fs`), runs confined. Programs a handler starts through `ctx.command` are launched from
//! the caller's (unconfined) runtime: the helper needs to create namespaces, which a confined
//! thread may not.

use tokio::runtime::Handle;
use tokio::task::AbortHandle;

use super::kernel::{confine_current_thread, KernelMode, SandboxPolicy};
use super::label::intern;

/// The runtime of one class: its handle, and the sender whose drop stops its thread.
#[derive(Debug)]
pub(crate) struct ConfinedRuntime {
    handle: Handle,
    pub(crate) label: &'static str,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl ConfinedRuntime {
    /// Starts the thread, confines it to `policy`, builds the runtime on it.
    pub(crate) fn start(
        policy: SandboxPolicy,
        mode: KernelMode,
        name: &str,
    ) -> Result<ConfinedRuntime, String> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("tool-{name}-async"))
            .spawn(move || {
                let enforcement = match confine_current_thread(&policy, mode) {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(format!("cannot build the runtime: {e}")));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok((rt.handle().clone(), enforcement.label())));
                rt.block_on(async {
                    let _ = stopped.await;
                });
            })
            .map_err(|e| format!("cannot start the confined runtime: {e}"))?;
        let (handle, label) = ready_rx
            .recv()
            .map_err(|_| "the confined runtime's thread died".to_owned())??;
        Ok(ConfinedRuntime {
            handle,
            label: intern(&label),
            _stop: stop,
        })
    }

    /// The runtime's handle.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }
}

/// Aborts a task when the future awaiting it is dropped (timeout, cancellation).
pub(crate) struct AbortOnDrop(pub(crate) AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
