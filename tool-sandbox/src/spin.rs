//! When a thread may busy-wait for a hand-off, and the busy wait itself.
//!
//! A hand-off between two threads that both poll costs a few cache-line transfers; one where the
//! waiting side sleeps costs a thread wake-up, tens of microseconds on a small virtual machine.
//! Polling only pays while the machine has a core to spare: when every core has work, a thread
//! that polls takes its turn from the very thread it waits for, and the scheduler, which sees a
//! thread that never sleeps, gives both less. So a thread polls only while [`spare_core`] says the
//! machine has a core for it, and sleeps at once otherwise: under contention a hand-off costs a
//! wake-up, as an unconfined call's own I/O does, never a scheduler time slice.

use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How long a reading of the machine's run queues stands before the next caller reads again.
const SAMPLE_EVERY: Duration = Duration::from_millis(2);

/// A value alone on its cache line (128 bytes: two lines, for CPUs that fetch them in pairs).
/// Every busy wait reads these statics while the thread at the other end of its hand-off writes
/// its own state; sharing a line with whatever the linker put next to them would make each
/// such write cost the waiting side a cache miss.
#[repr(align(128))]
struct Alone<T>(T);

/// The last reading: microseconds since [`epoch`] when it was taken, shifted left by one, and in
/// the low bit whether the machine was busy then. Zero: never read.
static READING: Alone<AtomicU64> = Alone(AtomicU64::new(0));

/// Idle spinners of this process now (see [`IdleSpin`]).
static IDLE_SPINNERS: Alone<AtomicUsize> = Alone(AtomicUsize::new(0));

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The cores this process may run on (affinity and cgroup quota), at least 1.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether the machine has a core to spare for a busy wait now: the runnable tasks of the whole
/// machine (the fourth field of `/proc/loadavg`, which counts the reader), less this process's
/// idle spinners (which would give way), fit on the cores this process may use.
///
/// Read at most every 2 ms, by whichever thread asks first once the reading is stale; a thread
/// that may not read `/proc` (a confined one) uses the last reading, and never tries again. With
/// no reading at all (no `/proc`), the answer is yes, as before there was a gauge.
pub fn spare_core() -> bool {
    let now = epoch().elapsed().as_micros() as u64;
    let last = READING.0.load(Ordering::Relaxed);
    let taken = last >> 1;
    if last != 0 && now.saturating_sub(taken) < SAMPLE_EVERY.as_micros() as u64 {
        return last & 1 == 0;
    }
    if !may_read() {
        return last & 1 == 0;
    }
    // One thread reads; the others use the stale reading meanwhile.
    let claimed = (now.max(1) << 1) | (last & 1);
    if READING
        .0
        .compare_exchange(last, claimed, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        return last & 1 == 0;
    }
    match runnable_tasks() {
        Some(running) => {
            let busy = running.saturating_sub(IDLE_SPINNERS.0.load(Ordering::Relaxed)) > cores();
            READING
                .0
                .store((claimed & !1) | u64::from(busy), Ordering::Relaxed);
            !busy
        }
        None => {
            // Not here: the reading stays as it was, for a thread that may read to renew.
            CANNOT_READ.with(|c| c.set(true));
            let _ = READING
                .0
                .compare_exchange(claimed, last, Ordering::Relaxed, Ordering::Relaxed);
            last & 1 == 0
        }
    }
}

thread_local! {
    /// This thread may not open `/proc/loadavg` (it is confined): it never tries again.
    static CANNOT_READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn may_read() -> bool {
    !CANNOT_READ.with(std::cell::Cell::get)
}

/// The number of runnable tasks on the machine, counting the caller (`/proc/loadavg`'s fourth
/// field, `running/total`).
fn runnable_tasks() -> Option<usize> {
    let mut buf = [0u8; 128];
    let mut file = std::fs::File::open("/proc/loadavg").ok()?;
    let n = file.read(&mut buf).ok()?;
    parse_runnable(buf.get(..n)?)
}

/// `0.52 0.58 0.59 3/467 12345` → 3.
fn parse_runnable(text: &[u8]) -> Option<usize> {
    let field = text.split(|&b| b == b' ').nth(3)?;
    let running = field.split(|&b| b == b'/').next()?;
    std::str::from_utf8(running).ok()?.parse().ok()
}

/// Receives from `rx`, polling it for up to `spin` before it waits (`Duration::ZERO`: waits at
/// once), and only while the machine has a core to spare ([`spare_core`]). A short job on another
/// thread is usually done before a wake-up of this one would even be scheduled; the poll yields
/// the thread now and then, and stops as soon as the machine is busy.
pub async fn recv_spinning<T>(
    mut rx: oneshot::Receiver<T>,
    spin: Duration,
) -> Result<T, oneshot::error::RecvError> {
    if !spin.is_zero() && spare_core() {
        let until = Instant::now() + spin;
        let mut turns = 0u32;
        loop {
            match rx.try_recv() {
                Ok(value) => return Ok(value),
                Err(oneshot::error::TryRecvError::Closed) => break,
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            if Instant::now() >= until || !relax(&mut turns) {
                break;
            }
        }
    }
    rx.await
}

/// How many turns of a busy wait go between two looks at whether the machine still has a core
/// to spare (an atomic load and a clock read).
const LOOK_EVERY: u32 = 8;

/// How many turns go between two yields of the thread: a few microseconds of polling. A yield is
/// a system call, and a result that comes while the spinner is in it waits for it to return.
const YIELD_EVERY: u32 = 64;

/// One turn of a busy wait: a spin hint; now and then a look at whether the machine still has a
/// core to spare, `false` when it has none (stop polling); and more rarely a yield, so a machine
/// that became busy since the last reading of its run queues runs whatever the spinner waits for.
pub(crate) fn relax(turns: &mut u32) -> bool {
    *turns = turns.wrapping_add(1);
    if *turns % YIELD_EVERY == 0 {
        std::thread::yield_now();
        spare_core()
    } else if *turns % LOOK_EVERY == 0 {
        std::hint::spin_loop();
        spare_core()
    } else {
        std::hint::spin_loop();
        true
    }
}

/// The right of an idle thread to spin while it waits for work, process-wide: at most one thread
/// per core but one spins idle at once (at least one), whatever the pools and runtimes, so that
/// idle spinners never crowd out the threads doing the work on a small machine; and none while
/// the machine has no core to spare ([`spare_core`]). Those that get none sleep at once.
#[derive(Debug)]
pub struct IdleSpin(());

impl IdleSpin {
    /// A right to spin if one is free now.
    pub fn try_start() -> Option<IdleSpin> {
        if !spare_core() {
            return None;
        }
        let cap = cores().saturating_sub(1).max(1);
        IDLE_SPINNERS
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < cap).then_some(n + 1)
            })
            .ok()
            .map(|_| IdleSpin(()))
    }

    /// Whether the holder should go on spinning: the machine still has a core to spare.
    pub fn still_worth_it(&self) -> bool {
        spare_core()
    }
}

impl Drop for IdleSpin {
    fn drop(&mut self) {
        IDLE_SPINNERS.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_runnable_count_of_loadavg() {
        assert_eq!(parse_runnable(b"0.52 0.58 0.59 3/467 12345\n"), Some(3));
        assert_eq!(parse_runnable(b"12.00 8.10 4.02 17/1024 99"), Some(17));
        assert_eq!(parse_runnable(b"0.52 0.58 0.59"), None);
        assert_eq!(parse_runnable(b"0.52 0.58 0.59 x/467 1"), None);
        assert_eq!(parse_runnable(b""), None);
    }

    #[test]
    fn the_machine_reading_counts_at_least_the_reader() {
        // On Linux `/proc/loadavg` is there and counts the thread reading it.
        if let Some(n) = runnable_tasks() {
            assert!(n >= 1, "{n}");
        }
    }

    /// A machine whose cores all run a busy loop has no core to spare (within a few readings),
    /// and has one again once the loops stop.
    #[test]
    fn a_busy_machine_has_no_core_to_spare() {
        if runnable_tasks().is_none() {
            return;
        }
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let loops: Vec<_> = (0..cores() + 1)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut saw_busy = false;
        while Instant::now() < deadline {
            if !spare_core() {
                saw_busy = true;
                break;
            }
            std::thread::sleep(SAMPLE_EVERY);
        }
        stop.store(true, Ordering::Relaxed);
        for l in loops {
            l.join().expect("joined");
        }
        assert!(saw_busy, "more busy loops than cores, yet a core to spare");
    }
}
