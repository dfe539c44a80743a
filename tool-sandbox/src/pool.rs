//! Worker threads confined once at start, for one capability class.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

use crate::confine::{confine_current_thread, Enforcement};
use crate::error::SandboxError;
use crate::policy::{Mode, SandboxPolicy};
use crate::spin::{recv_spinning, relax, IdleSpin};

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
    /// How long an idle worker polls for the next job, and a caller polls for its result, before
    /// either sleeps (`Duration::ZERO`: never). One worker only spins (the others sleep), so a
    /// pool of one worker does not. Short jobs then cost two cache-line transfers
    /// instead of two thread wake-ups, at the price of that much busy CPU per call. Neither side
    /// polls while the machine has no core to spare ([`spare_core`](crate::spare_core)).
    pub spin: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            workers: 2,
            queue: 32,
            name: "confined".to_owned(),
            spin: Duration::ZERO,
        }
    }
}

/// A job as a worker runs it: it calls its argument once the work is done and before it hands
/// the result back (the hot worker marks itself idle there, so the caller that gets the result
/// finds it ready for the next job).
type Job = Box<dyn FnOnce(&dyn Fn()) + Send + 'static>;

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
    spin: Duration,
    /// The worker that spins, with `spin`: its own one-job channel, and whether it is waiting
    /// for a job (claimed by the one caller that sends it one).
    hot: Option<Hot>,
}

#[derive(Debug)]
struct Hot {
    jobs: SyncSender<Job>,
    idle: Arc<AtomicBool>,
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
        // With `spin`, worker 0 is the hot one: it alone busy-waits, on a channel of its own, so
        // no two workers spin at once (on a small machine they would starve the one running the
        // job); the others sleep on the shared queue.
        let mut hot = None;
        let mut hot_rx = None;
        // (A pool of one worker has no other to serve the shared queue: it does not spin.)
        if !config.spin.is_zero() && workers > 1 {
            let (tx, rx) = sync_channel::<Job>(1);
            let idle = Arc::new(AtomicBool::new(false));
            hot_rx = Some((rx, Arc::clone(&idle)));
            hot = Some(Hot { jobs: tx, idle });
        }
        for i in 0..workers {
            let rx = Arc::clone(&rx);
            let ready = ready_tx.clone();
            let policy = policy.clone();
            let own = if i == 0 { hot_rx.take() } else { None };
            let spin = config.spin;
            std::thread::Builder::new()
                .name(format!("{}-{i}", config.name))
                .spawn(move || match own {
                    Some((own, idle)) => hot_worker(&policy, mode, &own, &idle, &ready, spin),
                    None => worker(&policy, mode, &rx, &ready),
                })
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
                spin: config.spin,
                hot,
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
        let wrapped: Job = Box::new(move |done: &dyn Fn()| {
            let result = catch_unwind(AssertUnwindSafe(job));
            // The slot is free once the job is done, not when its result is read.
            drop(permit);
            done();
            let _ = tx.send(result);
        });
        // The hot worker if it is waiting (one caller claims it), else the shared queue.
        let wrapped = match &self.inner.hot {
            Some(hot) if hot.idle.swap(false, Ordering::AcqRel) => match hot.jobs.try_send(wrapped)
            {
                Ok(()) => None,
                Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => Some(job),
            },
            _ => Some(wrapped),
        };
        let sent = match wrapped {
            None => Ok(()),
            Some(job) => self.inner.jobs.try_send(job),
        };
        match sent {
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
        let spin = self.inner.spin;
        Ok(async move {
            match recv_spinning(rx, spin).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(panic)) => Err(SandboxError::JobPanicked(panic_message(&*panic))),
                Err(_) => Err(SandboxError::PoolClosed(name)),
            }
        })
    }
}

/// The next job: polled for up to `spin` (if this thread may spin, see [`IdleSpin`]), then
/// waited for.
fn next_job(rx: &Receiver<Job>, spin: Duration) -> Result<Job, ()> {
    let spinning = if spin.is_zero() {
        None
    } else {
        IdleSpin::try_start()
    };
    if let Some(_spinning) = spinning {
        let until = Instant::now() + spin;
        let mut turns = 0u32;
        loop {
            match rx.try_recv() {
                Ok(job) => return Ok(job),
                Err(TryRecvError::Disconnected) => return Err(()),
                Err(TryRecvError::Empty) => {}
            }
            if Instant::now() >= until || !relax(&mut turns) {
                break;
            }
        }
    }
    rx.recv().map_err(|_| ())
}

/// The hot worker: confines itself, then polls its own channel for `spin` after each job before
/// it sleeps on it; `idle` says it is waiting.
fn hot_worker(
    policy: &SandboxPolicy,
    mode: Mode,
    jobs: &Receiver<Job>,
    idle: &AtomicBool,
    ready: &std::sync::mpsc::Sender<Result<Enforcement, SandboxError>>,
    spin: Duration,
) {
    let confined = confine_current_thread(policy, mode);
    let ok = confined.is_ok();
    let ready_again = || idle.store(true, Ordering::Release);
    // Ready before the pool is: its first caller finds this worker waiting.
    if ok {
        ready_again();
    }
    let _ = ready.send(confined);
    if !ok {
        return;
    }
    loop {
        match next_job(jobs, spin) {
            Ok(job) => job(&ready_again),
            Err(()) => return,
        }
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
            Ok(rx) => rx.recv().map_err(|_| ()),
            Err(_) => return,
        };
        match next {
            Ok(job) => job(&|| {}),
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
