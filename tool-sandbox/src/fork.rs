//! `fork` without `exec`, and closing the descriptors the helper inherited by mistake, for the
//! helper's zygote: with `slice.rs`, one of the two places of this crate with `unsafe`.
//!
//! Forking a multi-threaded process is unsound in general: the child has one thread, and locks
//! held by the others (the allocator's, stdio's) stay locked forever. The helper's zygote and
//! its spares never start a thread, so the child is a faithful copy. [`fork_single_threaded`]
//! checks that the process has exactly one thread before it forks, and refuses otherwise.

#![allow(unsafe_code)]

use nix::unistd::ForkResult;

use crate::error::SandboxError;

/// Forks the calling process, which must have exactly one thread (checked through
/// `/proc/self/status`; an error otherwise, and nothing is forked).
pub(crate) fn fork_single_threaded() -> Result<ForkResult, SandboxError> {
    let threads = thread_count()?;
    if threads != 1 {
        return Err(SandboxError::Setup(format!(
            "the sandbox helper must be single-threaded to fork, and it has {threads} threads \
             (call the helper dispatch first thing in `main`, before any thread starts)"
        )));
    }
    // SAFETY: the process has one thread (checked just above; the helper code that calls this
    // starts no thread, so the count cannot grow between the check and the fork). The child is
    // then an exact copy of a single-threaded process: no lock is held by a thread that does not
    // exist in the child, so it may allocate, print and run ordinary Rust code.
    unsafe { nix::unistd::fork() }.map_err(|e| SandboxError::Setup(format!("fork: {e}")))
}

/// Closes every descriptor above stderr that this process inherited, and returns how many it
/// closed.
///
/// `std::process::Command` passes on every descriptor of the executor that lacks `FD_CLOEXEC`
/// (a library's socket, a pipe opened by raw `pipe(2)`): without this, every init and program
/// would inherit them, and a pipe's write end kept open here would hide its end of file from
/// the executor. Called first thing in the zygote, before it opens anything.
pub(crate) fn close_inherited_fds() -> Result<usize, SandboxError> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let listing = rustix::fs::open(
        "/proc/self/fd",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| SandboxError::Setup(format!("cannot list /proc/self/fd: {e}")))?;
    let own = listing.as_raw_fd();
    let mut dir = rustix::fs::Dir::new(listing)
        .map_err(|e| SandboxError::Setup(format!("cannot list /proc/self/fd: {e}")))?;
    let mut inherited = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(|e| SandboxError::Setup(format!("/proc/self/fd: {e}")))?;
        let Some(fd) = entry
            .file_name()
            .to_str()
            .ok()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue; // `.` and `..`
        };
        if fd > 2 && fd != own {
            inherited.push(fd);
        }
    }
    drop(dir);
    let count = inherited.len();
    for fd in inherited {
        // SAFETY: `fd` was open when listed, and nothing has opened or closed a descriptor
        // since (one thread; the listing's own descriptor is skipped). No object of this
        // process owns it: the helper runs first thing in `main` and has opened nothing yet,
        // so it can only be a descriptor inherited across `exec`, which this takes ownership
        // of and closes, once.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
    }
    Ok(count)
}

/// The number of threads of this process, from `/proc/self/status`.
fn thread_count() -> Result<usize, SandboxError> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| SandboxError::Setup(format!("cannot read /proc/self/status: {e}")))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| SandboxError::Setup("no thread count in /proc/self/status".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_with_several_threads_is_never_forked() {
        // The test harness runs tests on threads of its own: keep one more alive for certain.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || rx.recv());
        let err = fork_single_threaded().expect_err("forked a multi-threaded process");
        assert!(err.to_string().contains("single-threaded"), "{err}");
        drop(tx);
        let _ = other.join();
    }

    #[test]
    fn the_thread_count_is_read() {
        assert!(thread_count().expect("count") >= 1);
    }
}
