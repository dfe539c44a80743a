//! Kernel confinement derived from a tool's declaration.
//!
//! A declaration says what a tool may do; this crate makes the kernel hold it to that, whatever
//! its handler or script does. It does not depend on the executor: the executor maps a
//! declaration to a [`SandboxPolicy`] (risk `safe`/`read_only` → [`FsAccess::ReadOnly`], riskier
//! → [`FsAccess::ReadWrite`], `open_world` → `network`) and uses one of three mechanisms:
//!
//! - [`confine_current_thread`]: confines the calling thread, irreversibly (it and its future
//!   children);
//! - [`ConfinedPool`]: worker threads of one capability class, confined once at start, for sync
//!   handlers; bounded slots, panics returned as errors;
//! - [`SandboxedCommand`] run through a [`Launcher`]: a program confined by the helper binary
//!   `tool-sandbox-exec`, in its own user, PID, IPC, mount (and without network, network) namespaces,
//!   with rlimits, output caps, a timeout and cancellation that kill the whole tree. The helper
//!   runs as a zygote per launcher and forks a prepared init per program (see [`helper`]), so the
//!   program is the only `exec` of a run.
//!
//! The crate's `unsafe` is in two places: that fork (`src/fork.rs`), done only by the
//! single-threaded helper after it checked it has one thread, and one `sched_setattr` call that
//! gives the calling thread a shorter scheduler slice ([`set_thread_slice`], `src/slice.rs`);
//! everything else is safe code.
//!
//! [`Support::probe`] says what the running kernel offers; [`Enforcement`] says what was enforced
//! on a given thread or process (`landlock-v7+seccomp`, `none`, …) for audit events.
//!
//! # What is enforced, and by what
//!
//! | rule | by |
//! | --- | --- |
//! | read (and execute) only the workspace and the system read paths | Landlock (ABI ≥ 1) |
//! | write, create, remove, rename, truncate only inside the workspace, and only for `ReadWrite` | Landlock (truncate ABI ≥ 3) |
//! | no new hard link or rename that moves a file across the workspace boundary | Landlock `REFER` (ABI ≥ 2) |
//! | no TCP `bind`/`connect` without `network` | Landlock (ABI ≥ 4) |
//! | no `socket()` but `AF_UNIX` without `network` (so no UDP, raw, netlink, vsock) | seccomp |
//! | no signals to processes outside the sandbox, no abstract UNIX sockets outside it | Landlock scopes (ABI ≥ 6) |
//! | no ptrace, process_vm_*, mount family, chroot, unshare/setns/namespace `clone`, bpf, perf, userfaultfd, keyctl, modules, kexec, reboot, swap, clock/host name setting, io_uring | seccomp (`EPERM`; `clone3` and x32 syscalls get `ENOSYS`) |
//! | processes: no child outlives the call (`&`, `setsid`, `nohup`): they live in a PID namespace whose init is killed at the end | PID namespace |
//! | processes without network: an empty network namespace (only a down loopback) | network namespace |
//! | processes: no capability outside the sandbox (a user namespace mapping the caller only) | user namespace |
//! | processes: CPU, address space, file size, open files, processes | rlimits |
//! | processes: at most `Rlimits::processes` (+2 for the helpers) tasks in the tree, root included | a pids cgroup per tree, where the machine offers a writable pids hierarchy ([`cgroup::available`]; label `+pids`) |
//! | processes: environment cleared to `PATH`, `LANG`, `HOME`, `TMPDIR` and what the caller adds | the helper |
//! | processes: a minimal root — system paths and devices as read-only binds, an empty `/tmp`, the workspace (read-only for `ReadOnly`), the declared UNIX sockets, nothing else of the host — so no metadata change (`chmod`, `utime`, `setxattr`), no extended attribute read and no pathname UNIX socket outside | a mount namespace ([`mountns`]; label `+mntns`) |
//! | processes: no change to the mount table (`mount`, `umount2`, `pivot_root`, `move_mount`, `open_tree`, `fsopen`, `fsmount`, `fspick`, `fsconfig`, `mount_setattr`) | seccomp (the mount filter, loaded once the root is built), and Landlock for most |
//! | processes: memory of the whole tree | a memory cgroup per tree, where the machine offers a writable memory hierarchy (label `+mem`); hits reported in [`ProcessOutput::limits_hit`] |
//! | threads: no metadata call (`chmod`/`fchmod*`, `chown`/`fchown*`, `utime*`, every `*xattr`), no `socket(AF_UNIX)` nor datagram `socketpair` unless the policy declares a UNIX socket | seccomp |
//!
//! `Mode::Required` (the default) refuses to run anything when any of these is not available;
//! `BestEffort` runs with what there is and says so in [`Enforcement`]; `Off` enforces nothing
//! and reports `none`.
//!
//! # What is not enforced
//!
//! - **Kernels without Landlock** (or older ABIs): nothing file- or TCP-related is enforced there;
//!   `Required` refuses, `BestEffort` reports `none`/`partial`. Another OS: nothing.
//! - **Hard links that already exist**: Landlock is path-based; a hard link inside the workspace
//!   to a file outside, made by someone else before the call, is readable through its workspace
//!   path. The workspace file operations refuse files with more than one link for that reason.
//!   (Making such a link from inside the sandbox is refused.)
//! - **UDP for `network` tools**: Landlock has no UDP rules; open-world tools may send UDP.
//! - **Threads still see `stat` results** of any path, and a thread whose policy declares a UNIX
//!   socket may connect to any pathname UNIX socket the process can see (Landlock ABI 7 has no
//!   right for it; programs reach only the declared ones).
//! - **Disk**: each written file is bounded (`RLIMIT_FSIZE`), not the total of a run.
//! - **Threads are confined, not processes**: other threads of the executor stay unconfined, and
//!   memory is shared: a handler with its own `unsafe` code could corrupt another thread's state.
//!   Open file descriptors inherited by a confined thread stay usable (Landlock checks at open).
//! - **Reading through `/proc` is not granted** (so `/proc/self/...` does not work in scripts); the
//!   system read paths are a list, not `/etc` as a whole (`/etc/shadow` stays unreadable).
//! - **`RLIMIT_NPROC` does not bind root**: the kernel exempts uid 0, and the user namespace maps
//!   the caller (root stays root inside, without outside capabilities). The pids cgroup binds root
//!   too, but it needs a pids hierarchy the executor may write (root, or a delegated cgroup v2
//!   subtree with `pids` in `cgroup.subtree_control`); without one, run the executor as an
//!   unprivileged user for a process cap. The enforcement label says whether the cgroup held.
//! - **Seccomp is a deny list**, not an allow list: programs run by tools need a wide syscall set;
//!   Landlock and the namespaces carry the isolation, seccomp removes kernel attack surface.
//! - **A run lives as long as its run socket**: a timeout, a cancellation, a dropped run future
//!   or the death of the executor closes it, and the init of the run's PID namespace then exits,
//!   which empties the namespace. Nothing inside the namespace can kill that init.
#![warn(missing_docs)]

pub mod cgroup;
mod command;
mod confine;
mod error;
mod fork;
pub mod helper;
mod init;
pub mod mountns;
mod policy;
mod pool;
mod probe;
mod protocol;
mod seccomp;
mod slice;
mod spin;
mod zygote;

pub use command::{Launcher, Outcome, ProcessOutput, SandboxedCommand, HELPER_NAME};
pub use confine::{confine_current_thread, Enforcement, LandlockEnforcement};
pub use error::SandboxError;
pub use policy::{
    default_system_read_paths, CapabilityClass, FsAccess, LimitHit, Mode, PathGrant, Rlimits,
    SandboxPolicy, DEFAULT_MEMORY_BYTES,
};
pub use pool::{ConfinedPool, PoolConfig};
pub use probe::Support;
pub use slice::{ask_thread_slice, set_thread_slice, thread_slice, MIN_SLICE};
pub use spin::{recv_spinning, spare_core, IdleSpin};
pub use tokio_util::sync::CancellationToken;
