//! A shorter scheduler slice for a thread that waits for hand-offs: with `fork.rs`, one of the
//! two places of this crate with `unsafe`, a single `sched_setattr(2)` on the calling thread.
//!
//! The kernel's fair scheduler (EEVDF, Linux 6.6 on) gives each thread a slice (1.4 ms on a
//! 2-core machine by default) and lets a thread that wakes preempt the running one only if the
//! woken thread's deadline comes first. A confined worker that wakes for a short job, on a core
//! kept busy by other work, then waits up to a whole slice of the busy thread before it runs. With
//! a short slice of its own (Linux 6.12 on) its deadline comes first and it runs at once; a
//! thread that really needs the core for long is only switched more often, its share unchanged.

#![allow(unsafe_code)]

use std::time::Duration;

/// The smallest slice the kernel takes (it clamps `sched_runtime` to 0.1–100 ms).
pub const MIN_SLICE: Duration = Duration::from_micros(100);

/// `SCHED_FLAG_KEEP_POLICY`: the thread keeps its policy (normal or batch).
const KEEP_POLICY: u64 = 0x08;

/// `struct sched_attr` of `sched_setattr(2)`, first version (48 bytes); the kernel accepts every
/// size it knows.
#[repr(C)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// Gives the calling thread a scheduler slice of `slice` (clamped by the kernel to 0.1–100 ms),
/// keeping its policy and its nice value.
///
/// A hint: a kernel before 6.12 accepts it and ignores it. An error when the kernel refuses
/// the call (a real-time thread, a filter that denies `sched_setattr`).
pub fn set_thread_slice(slice: Duration) -> std::io::Result<()> {
    // The nice value is part of the call: the thread's own, so it is neither raised nor lowered.
    let nice = rustix::process::getpriority_process(None)?;
    let attr = SchedAttr {
        size: size_of::<SchedAttr>() as u32,
        sched_policy: 0,
        sched_flags: KEEP_POLICY,
        sched_nice: nice,
        sched_priority: 0,
        sched_runtime: u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX),
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: `sched_setattr(0, &attr, 0)` reads `attr.size` bytes from `attr`, an initialized
    // `repr(C)` value with the kernel's layout that lives until the call returns, and changes
    // only the calling thread's scheduling parameters.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, std::ptr::from_ref(&attr), 0u32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Asks for `slice` for the calling thread, if one is given, as [`set_thread_slice`] does, and
/// ignores a refusal: the slice is a hint, and a thread the kernel refuses it to stays as it
/// was. Call it before the thread confines itself: its filter may not allow the call after.
pub fn ask_thread_slice(slice: Option<Duration>) {
    if let Some(slice) = slice {
        let _ = set_thread_slice(slice);
    }
}

/// The scheduler slice of the thread whose `/proc` directory is `task` (`/proc/thread-self`,
/// `/proc/self/task/TID`), from `se.slice` in its `sched` file; `None` where the kernel does not
/// show it there (or the thread is gone).
pub fn thread_slice(task: &std::path::Path) -> Option<Duration> {
    let text = std::fs::read_to_string(task.join("sched")).ok()?;
    let line = text.lines().find(|l| l.starts_with("se.slice"))?;
    line.split(':')
        .nth(1)?
        .trim()
        .parse()
        .ok()
        .map(Duration::from_nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own_slice() -> Option<Duration> {
        thread_slice(std::path::Path::new("/proc/thread-self"))
    }

    #[test]
    fn a_thread_gets_the_slice_it_asks_for_and_keeps_its_nice_value() {
        std::thread::spawn(|| {
            let Some(before) = own_slice() else {
                eprintln!("SKIPPED: this kernel does not show se.slice in /proc/thread-self/sched");
                return;
            };
            let nice = rustix::process::getpriority_process(None).expect("nice");
            set_thread_slice(Duration::from_micros(300)).expect("sched_setattr");
            assert_eq!(
                own_slice(),
                Some(Duration::from_micros(300)),
                "was {before:?}"
            );
            assert_eq!(
                rustix::process::getpriority_process(None).expect("nice"),
                nice
            );
            // Below the kernel's least: its least.
            set_thread_slice(Duration::from_micros(1)).expect("sched_setattr");
            assert_eq!(own_slice(), Some(MIN_SLICE));
        })
        .join()
        .expect("thread");
    }
}
