//! A confined current-thread tokio runtime per capability class, for async `#[tool]` handlers
//! (the default; `ExecutorConfig::sandbox_async(false)` runs them unconfined instead).
//!
//! The runtime's thread confines itself (Landlock + seccomp, irreversibly) before it builds the
//! runtime, so every future spawned onto it, and every thread it starts (`spawn_blocking`,
//! `tokio::fs`), runs confined. Programs a handler starts through `ctx.command` are launched from
//! the caller's (unconfined) runtime: the helper needs to create namespaces, which a confined
//! thread may not.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::kernel::{
    ask_thread_slice, confine_current_thread, IdleSpin, KernelMode, SandboxPolicy,
};
use super::label::intern;

/// A future handed to the confined runtime: it runs the handler and sends the result back.
pub(crate) type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The runtime of one class: where its tasks are sent (dropping the sender stops its thread),
/// and how long callers and the runtime poll before they sleep.
#[derive(Debug)]
pub(crate) struct ConfinedRuntime {
    tasks: mpsc::UnboundedSender<Task>,
    pub(crate) label: &'static str,
    pub(crate) spin: Duration,
}

impl ConfinedRuntime {
    /// Starts the thread, confines it to `policy`, builds the runtime on it.
    ///
    /// With `spin`, the runtime's thread goes on polling for new tasks (and its own I/O and
    /// timers) for that long after the last one came, before it sleeps; callers poll for their
    /// result as long ([`tool_sandbox::recv_spinning`]). A short handler then costs no thread
    /// wake-up on either side, at the price of that much busy CPU per call. With `slice`, the
    /// thread asks for that scheduler slice ([`tool_sandbox::ask_thread_slice`]).
    pub(crate) fn start(
        policy: SandboxPolicy,
        mode: KernelMode,
        name: &str,
        spin: Duration,
        slice: Option<Duration>,
    ) -> Result<ConfinedRuntime, String> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (tasks, mut incoming) = mpsc::unbounded_channel::<Task>();
        std::thread::Builder::new()
            .name(format!("tool-{name}-async"))
            .spawn(move || {
                ask_thread_slice(slice);
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
                let _ = ready_tx.send(Ok(enforcement.label()));
                rt.block_on(async move {
                    let metrics = tokio::runtime::Handle::current().metrics();
                    let mut last = Instant::now();
                    // Held while this thread spins idle (see `IdleSpin`), and given back while it
                    // runs a task: a busy thread counted as an idle spinner would make a busy
                    // machine look as if it had a core to spare.
                    let mut spinning = None;
                    loop {
                        match incoming.try_recv() {
                            Ok(task) => {
                                spinning = None;
                                start_task(task).await;
                                last = Instant::now();
                                continue;
                            }
                            Err(mpsc::error::TryRecvError::Disconnected) => return,
                            Err(mpsc::error::TryRecvError::Empty) => {}
                        }
                        if last.elapsed() < spin {
                            if spinning.is_none() {
                                spinning = IdleSpin::try_start();
                            }
                            // Only while the machine has a core to spare: a busy machine
                            // gives this thread's turn to the threads with work.
                            if spinning.as_ref().is_some_and(IdleSpin::still_worth_it) {
                                if metrics.num_alive_tasks() == 0 {
                                    // No task of its own to run, so no I/O or timer to drive:
                                    // a turn of the driver (a system call) would only delay
                                    // noticing the next task.
                                    watch_queue(&incoming);
                                } else {
                                    // Lets the tasks run and polls the I/O driver, then looks
                                    // again.
                                    tokio::task::yield_now().await;
                                }
                                continue;
                            }
                        }
                        spinning = None;
                        match incoming.recv().await {
                            Some(task) => {
                                start_task(task).await;
                                last = Instant::now();
                            }
                            // The executor is gone: the tasks still running are dropped with
                            // the runtime.
                            None => return,
                        }
                    }
                });
            })
            .map_err(|e| format!("cannot start the confined runtime: {e}"))?;
        let label = ready_rx
            .recv()
            .map_err(|_| "the confined runtime's thread died".to_owned())??;
        Ok(ConfinedRuntime {
            tasks,
            label: intern(&label),
            spin,
        })
    }

    /// Hands `task` to the runtime's thread; `false` if it is gone.
    pub(crate) fn submit(&self, task: Task) -> bool {
        self.tasks.send(task).is_ok()
    }
}

/// How many spin hints an idle runtime with no task of its own gives between two looks at its
/// clock and at whether the machine still has a core to spare: a microsecond or two.
const QUEUE_TURNS: u32 = 32;

/// Busy-waits a short while for a task to come, returning as soon as one has.
fn watch_queue(incoming: &mpsc::UnboundedReceiver<Task>) {
    for _ in 0..QUEUE_TURNS {
        if !incoming.is_empty() {
            return;
        }
        std::hint::spin_loop();
    }
}

/// Polls `task` once here, and spawns it onto the runtime only if it is not done: most handlers
/// finish on their first poll, and then cost no task of their own. (A future may be polled under
/// one waker and then under another: the spawned task's first poll registers its own.)
async fn start_task(mut task: Task) {
    if futures::poll!(task.as_mut()).is_pending() {
        tokio::spawn(task);
    }
}

/// Aborts a task when the future awaiting it is dropped (timeout, cancellation).
pub(crate) struct AbortOnDrop(pub(crate) AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
