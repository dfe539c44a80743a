//! Running a sync handler: on a confined worker of its class, under its tool's slots.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures::FutureExt;

use super::call::{SyncRunner, NONE};
use super::kernel::SandboxError;
use super::runtime::ConfinedRuntime;
use crate::outcome::ToolOutcome;

/// A sync handler, boxed (one instantiation of the machinery for every sync tool).
pub(crate) type Job = Box<dyn FnOnce() -> ToolOutcome + Send + 'static>;
pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'static>>;

/// Runs `job` where `runner` says: on a confined worker of the call's class when there is one,
/// else (no kernel support, `Mode::Off`, a context not made by an executor) on tokio's blocking
/// pool. A panic is re-raised in the awaiting task, so the executor reports it as `panicked`.
pub(crate) fn run(runner: SyncRunner, job: Job) -> BoxFuture {
    let Some(call) = runner.0 else {
        return unconfined(job);
    };
    let class = call.class();
    let Some(pool) = class.pool.clone() else {
        call.set_handler(NONE);
        return unconfined(job);
    };
    let label = class.handler_label;
    let slots = std::sync::Arc::clone(&call.tool.slots);
    Box::pin(async move {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                // Every slot of this tool is taken (stuck or slow calls): wait within the call's
                // timeout; other tools keep their own slots.
                call.set_waited();
                match slots.acquire_owned().await {
                    Ok(p) => p,
                    Err(_) => return ToolOutcome::error("the tool's confined slots are closed"),
                }
            }
        };
        call.set_handler(label);
        let ran = pool
            .run(move || {
                // The slot is held until the handler returns, even if the call timed out: a
                // handler stuck in the kernel keeps its tool's slot, not another tool's.
                let _permit = permit;
                job()
            })
            .await;
        match ran {
            Ok(outcome) => outcome,
            Err(SandboxError::JobPanicked(message)) => std::panic::resume_unwind(Box::new(message)),
            Err(e) => ToolOutcome::error(e.to_string()),
        }
    })
}

fn unconfined(job: Job) -> BoxFuture {
    let handle = tokio::task::spawn_blocking(job);
    Box::pin(async move {
        match handle.await {
            Ok(outcome) => outcome,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => ToolOutcome::error("the blocking task was cancelled"),
        }
    })
}

/// Runs an async handler's future on a class's confined runtime; dropping the returned future
/// drops the handler's there (timeout, cancellation). A panic is re-raised in the awaiting task,
/// so the executor reports it as `panicked`.
pub(crate) fn run_on(rt: &ConfinedRuntime, fut: BoxFuture) -> BoxFuture {
    let (result_tx, result_rx) = tokio::sync::oneshot::channel();
    // Dropped with the caller's future: the task then drops the handler's future.
    let (gone_tx, gone_rx) = tokio::sync::oneshot::channel::<()>();
    let task = Box::pin(async move {
        tokio::select! {
            biased;
            _ = gone_rx => {}
            result = AssertUnwindSafe(fut).catch_unwind() => {
                let _ = result_tx.send(result);
            }
        }
    });
    let submitted = rt.submit(task);
    let spin = rt.spin;
    Box::pin(async move {
        let _gone = gone_tx;
        if !submitted {
            return ToolOutcome::error("the confined runtime is gone");
        }
        match super::kernel::recv_spinning(result_rx, spin).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => ToolOutcome::error("the confined task was cancelled"),
        }
    })
}
