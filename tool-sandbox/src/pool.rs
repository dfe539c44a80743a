//! Worker threads confined once at start, for one capability class.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
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
    /// The workers' scheduler slice ([`set_thread_slice`](crate::set_thread_slice); `None`: the
    /// kernel's default). A short one lets a worker woken for a job run at once on a core that
    /// other work keeps busy, instead of after that work's slice.
    pub slice: Option<Duration>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            workers: 2,
            queue: 32,
            name: "confined".to_owned(),
            spin: Duration::ZERO,
            slice: None,
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
    jobs: Arc<Queue>,
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

impl Drop for Inner {
    fn drop(&mut self) {
        // Idle workers exit; busy ones after their job. (The hot worker's channel closes with
        // `hot`.)
        self.jobs.close();
    }
}

/// The jobs the shared workers take, in order.
///
/// A worker that finds it empty sleeps on `ready`, and a job wakes one sleeper only if there is
/// one, so a job costs at most one thread wake-up and a worker that wakes is the one that runs
/// it. (Workers waiting in turn on a mutex around a channel's receiver cost two: the one that
/// got the job wakes the next in line as it lets go of the mutex.)
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

#[derive(Default)]
struct QueueState {
    jobs: VecDeque<Job>,
    /// Workers asleep on `ready`.
    sleeping: usize,
    /// The pool is gone: no job comes any more.
    closed: bool,
}

impl std::fmt::Debug for QueueState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueState")
            .field("jobs", &self.jobs.len())
            .field("sleeping", &self.sleeping)
            .field("closed", &self.closed)
            .finish()
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A job never runs under the lock, so a poisoned lock still holds a consistent queue.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `job`, waking one sleeping worker if any; `Err(job)` once the pool is closed.
    fn push(&self, job: Job) -> Result<(), Job> {
        let wake = {
            let mut state = self.lock();
            if state.closed {
                return Err(job);
            }
            state.jobs.push_back(job);
            state.sleeping > 0
        };
        if wake {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// The next job, sleeping until there is one; `None` once the pool is closed and no job is
    /// left.
    fn pop(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state.sleeping += 1;
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
            state.sleeping -= 1;
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }
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
        let queue = Arc::new(Queue::default());
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
            let shared = Arc::clone(&queue);
            let ready = ready_tx.clone();
            let policy = policy.clone();
            let own = if i == 0 { hot_rx.take() } else { None };
            let (spin, slice) = (config.spin, config.slice);
            std::thread::Builder::new()
                .name(format!("{}-{i}", config.name))
                .spawn(move || match own {
                    Some((own, idle)) => {
                        hot_worker(&policy, mode, &own, &idle, &ready, spin, slice)
                    }
                    None => worker(&policy, mode, &shared, &ready, slice),
                })
                .map_err(|e| {
                    queue.close();
                    SandboxError::Setup(format!("cannot start a worker: {e}"))
                })?;
        }
        drop(ready_tx);
        let mut enforcement = None;
        for _ in 0..workers {
            let result = ready_rx
                .recv()
                .map_err(|_| SandboxError::Setup("a worker died while confining".to_owned()))
                .and_then(|r| r);
            match result {
                Ok(e) => {
                    enforcement.get_or_insert(e);
                }
                Err(e) => {
                    // The workers that did start exit (and the hot one, with its channel).
                    queue.close();
                    return Err(e);
                }
            }
        }
        Ok(ConfinedPool {
            inner: Arc::new(Inner {
                name: config.name,
                jobs: queue,
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
        // The queue holds no more jobs than there are permits: each job holds one.
        if let Some(job) = wrapped {
            if self.inner.jobs.push(job).is_err() {
                return Err(SandboxError::PoolClosed(self.inner.name.clone()));
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
    slice: Option<Duration>,
) {
    crate::slice::ask_thread_slice(slice);
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
    jobs: &Queue,
    ready: &std::sync::mpsc::Sender<Result<Enforcement, SandboxError>>,
    slice: Option<Duration>,
) {
    crate::slice::ask_thread_slice(slice);
    let confined = confine_current_thread(policy, mode);
    let ok = confined.is_ok();
    let _ = ready.send(confined);
    if !ok {
        return;
    }
    while let Some(job) = jobs.pop() {
        job(&|| {});
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
