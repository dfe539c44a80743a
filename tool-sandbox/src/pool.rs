//! Worker threads confined once at start, for one capability class.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use crate::confine::{confine_current_thread, Enforcement};
use crate::error::SandboxError;
use crate::policy::{Mode, SandboxPolicy};

/// Sizes of a [`ConfinedPool`].
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Worker threads (each confined once, at start). At least 1.
    pub workers: usize,
    /// Jobs that may wait for a worker; beyond `workers + queue` jobs, `try_run` is refused and
    /// `run` waits for a slot.
    pub queue: usize,
    /// A name for the threads and errors, e.g. the capability class.
    pub name: String,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            workers: 2,
            queue: 32,
            name: "confined".to_owned(),
        }
    }
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Worker threads confined to one [`SandboxPolicy`], running synchronous jobs.
///
/// Each worker confines itself with [`confine_current_thread`] before taking its first job, so a
/// job can do nothing its class does not allow, whatever it calls. A job that blocks forever (a
/// FIFO `open`, a stuck NFS read) keeps its worker and its slot: it exhausts this pool only, never
/// the caller's runtime or the pools of other classes. Dropping the pool lets idle workers exit;
/// busy ones exit after their job.
#[derive(Debug, Clone)]
pub struct ConfinedPool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    jobs: SyncSender<Job>,
    slots: Arc<Semaphore>,
    enforcement: Enforcement,
}

impl ConfinedPool {
    /// Starts `config.workers` threads and confines each to `policy`.
    ///
    /// Fails if any worker cannot be confined as `mode` demands; no job ever runs then.
    pub fn new(
        policy: &SandboxPolicy,
        mode: Mode,
        config: PoolConfig,
    ) -> Result<ConfinedPool, SandboxError> {
        let workers = config.workers.max(1);
        let slots = workers + config.queue;
        let (jobs, rx) = sync_channel::<Job>(slots);
        let rx = Arc::new(Mutex::new(rx));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        for i in 0..workers {
            let rx = Arc::clone(&rx);
            let ready = ready_tx.clone();
            let policy = policy.clone();
            std::thread::Builder::new()
                .name(format!("{}-{i}", config.name))
                .spawn(move || worker(&policy, mode, &rx, &ready))
                .map_err(|e| SandboxError::Setup(format!("cannot start a worker: {e}")))?;
        }
        drop(ready_tx);
        let mut enforcement = None;
        for _ in 0..workers {
            let result = ready_rx
                .recv()
                .map_err(|_| SandboxError::Setup("a worker died while confining".to_owned()))?;
            // Dropping `jobs` on error makes the workers that did start exit.
            let e = result?;
            enforcement.get_or_insert(e);
        }
        Ok(ConfinedPool {
            inner: Arc::new(Inner {
                name: config.name,
                jobs,
                slots: Arc::new(Semaphore::new(slots)),
                enforcement: enforcement.unwrap_or(Enforcement::NONE),
            }),
        })
    }

    /// What the workers enforce.
    pub fn enforcement(&self) -> Enforcement {
        self.inner.enforcement
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Free slots (idle workers plus free queue places).
    pub fn available_slots(&self) -> usize {
        self.inner.slots.available_permits()
    }

    /// Runs `job` on a confined worker, waiting for a slot if all are taken.
    ///
    /// A panic in the job comes back as [`SandboxError::JobPanicked`]. Dropping the future does
    /// not stop a job that started: synchronous code cannot be interrupted.
    pub async fn run<F, R>(&self, job: F) -> Result<R, SandboxError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let permit = Arc::clone(&self.inner.slots)
            .acquire_owned()
            .await
            .map_err(|_| SandboxError::PoolClosed(self.inner.name.clone()))?;
        self.submit(permit, job)?.await
    }

    /// Runs `job` on a confined worker if a slot is free now, else fails with
    /// [`SandboxError::PoolBusy`] at once.
    pub async fn try_run<F, R>(&self, job: F) -> Result<R, SandboxError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let permit = Arc::clone(&self.inner.slots)
            .try_acquire_owned()
            .map_err(|_| SandboxError::PoolBusy(self.inner.name.clone()))?;
        self.submit(permit, job)?.await
    }

    fn submit<F, R>(
        &self,
        permit: OwnedSemaphorePermit,
        job: F,
    ) -> Result<impl std::future::Future<Output = Result<R, SandboxError>>, SandboxError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let wrapped: Job = Box::new(move || {
            let result = catch_unwind(AssertUnwindSafe(job));
            // The slot is free once the job is done, not when its result is read.
            drop(permit);
            let _ = tx.send(result);
        });
        match self.inner.jobs.try_send(wrapped) {
            Ok(()) => {}
            // The channel holds as many jobs as there are permits, so Full cannot happen.
            Err(TrySendError::Full(_)) => {
                return Err(SandboxError::PoolBusy(self.inner.name.clone()))
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err(SandboxError::PoolClosed(self.inner.name.clone()))
            }
        }
        let name = self.inner.name.clone();
        Ok(async move {
            match rx.await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(panic)) => Err(SandboxError::JobPanicked(panic_message(&*panic))),
                Err(_) => Err(SandboxError::PoolClosed(name)),
            }
        })
    }
}

fn worker(
    policy: &SandboxPolicy,
    mode: Mode,
    jobs: &Mutex<Receiver<Job>>,
    ready: &std::sync::mpsc::Sender<Result<Enforcement, SandboxError>>,
) {
    let confined = confine_current_thread(policy, mode);
    let ok = confined.is_ok();
    let _ = ready.send(confined);
    if !ok {
        return;
    }
    loop {
        // Hold the lock only while waiting for the next job, never while running one.
        let next = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match next {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
