//! The seccomp filters: syscalls no tool needs fail with `EPERM`.
//!
//! A deny list, not an allow list: programs run by tools (bash, Python, compilers) use a wide and
//! changing set of syscalls, and Landlock already confines what they reach. The list removes what
//! can escape or attack the kernel: debugging other processes, mounting, namespaces, BPF, kernel
//! keyrings and modules, io_uring (which bypasses per-syscall filtering), and without network every
//! socket family but `AF_UNIX`.
//!
//! Confined *threads* get more: they share the executor's file system view (a thread cannot have
//! a mount namespace of its own), and Landlock has no access right for metadata or for pathname
//! UNIX sockets. So a thread may not change or read file metadata outside its file descriptors'
//! contents (the `chmod`, `chown`, `utime` and `*xattr` families, path- and descriptor-based
//! alike: a file opened for reading is enough to `fchmod` it as root), nor create a UNIX socket
//! unless its tool declares one ([`thread_rules`]). Confined *programs* do not need these rules:
//! they see a minimal root in which everything outside the workspace is mounted read-only or not
//! at all (see [`crate::mountns`]).

use std::collections::BTreeMap;

use seccompiler::{
    apply_filter, sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp,
    SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

use crate::error::SandboxError;

/// Syscalls that enter or make namespaces, denied by the class filter ([`class_filter`]): the
/// helper's spares apply it after they entered their namespaces, on top of the base filter the
/// zygote applied once for all of them.
pub(crate) const NAMESPACE_SYSCALLS: [(&str, i64); 2] =
    [("unshare", libc::SYS_unshare), ("setns", libc::SYS_setns)];

/// Syscalls that change the mount table, denied by the mount filter ([`mount_filter`]): a helper's
/// init applies it once it built the program's minimal root, at the request; threads get it with
/// their other rules. (Landlock also refuses most of them to a restricted process, but not
/// `mount_setattr`, which could make a read-only bind writable again.)
pub(crate) const MOUNT_SYSCALLS: [(&str, i64); 10] = [
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("move_mount", libc::SYS_move_mount),
    ("open_tree", libc::SYS_open_tree),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("mount_setattr", libc::SYS_mount_setattr),
];

/// Syscalls that change or read file metadata, denied to confined threads ([`thread_rules`]).
/// The `*xattrat` calls (Linux 6.13) have one number on every architecture.
pub(crate) fn metadata_syscalls() -> Vec<(&'static str, i64)> {
    let mut list = vec![
        ("fchmod", libc::SYS_fchmod),
        ("fchmodat", libc::SYS_fchmodat),
        ("fchmodat2", 452),
        ("fchown", libc::SYS_fchown),
        ("fchownat", libc::SYS_fchownat),
        ("utimensat", libc::SYS_utimensat),
        ("setxattr", libc::SYS_setxattr),
        ("lsetxattr", libc::SYS_lsetxattr),
        ("fsetxattr", libc::SYS_fsetxattr),
        ("removexattr", libc::SYS_removexattr),
        ("lremovexattr", libc::SYS_lremovexattr),
        ("fremovexattr", libc::SYS_fremovexattr),
        ("getxattr", libc::SYS_getxattr),
        ("lgetxattr", libc::SYS_lgetxattr),
        ("fgetxattr", libc::SYS_fgetxattr),
        ("listxattr", libc::SYS_listxattr),
        ("llistxattr", libc::SYS_llistxattr),
        ("flistxattr", libc::SYS_flistxattr),
        ("setxattrat", 463),
        ("getxattrat", 464),
        ("listxattrat", 465),
        ("removexattrat", 466),
    ];
    #[cfg(target_arch = "x86_64")]
    list.extend([
        ("chmod", libc::SYS_chmod),
        ("chown", libc::SYS_chown),
        ("lchown", libc::SYS_lchown),
        ("utime", libc::SYS_utime),
        ("utimes", libc::SYS_utimes),
        ("futimesat", libc::SYS_futimesat),
    ]);
    list
}

/// Syscalls denied to every confined thread and process by the base filter ([`base_filter`]);
/// [`NAMESPACE_SYSCALLS`] are denied too, by the class filter, and [`MOUNT_SYSCALLS`] by the mount
/// filter.
pub(crate) fn denied_syscalls() -> Vec<(&'static str, i64)> {
    let mut list = vec![
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_readv", libc::SYS_process_vm_readv),
        ("process_vm_writev", libc::SYS_process_vm_writev),
        ("pidfd_getfd", libc::SYS_pidfd_getfd),
        ("kcmp", libc::SYS_kcmp),
        ("chroot", libc::SYS_chroot),
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
        ("reboot", libc::SYS_reboot),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("acct", libc::SYS_acct),
        ("quotactl", libc::SYS_quotactl),
        ("settimeofday", libc::SYS_settimeofday),
        ("clock_settime", libc::SYS_clock_settime),
        ("clock_adjtime", libc::SYS_clock_adjtime),
        ("adjtimex", libc::SYS_adjtimex),
        ("sethostname", libc::SYS_sethostname),
        ("setdomainname", libc::SYS_setdomainname),
        ("syslog", libc::SYS_syslog),
        ("vhangup", libc::SYS_vhangup),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("fanotify_init", libc::SYS_fanotify_init),
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
    ];
    #[cfg(target_arch = "x86_64")]
    list.extend([
        ("iopl", libc::SYS_iopl),
        ("ioperm", libc::SYS_ioperm),
        ("uselib", libc::SYS_uselib),
    ]);
    list
}

/// `clone` flags that create namespaces: denied like `unshare`.
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

fn target_arch() -> Result<TargetArch, SandboxError> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|e| SandboxError::Unavailable(format!("seccomp: unsupported architecture: {e}")))
}

fn sc_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("seccomp: {e}"))
}

/// A filter that denies `rules` (and nothing else) with `EPERM`, for this architecture.
fn deny(rules: BTreeMap<i64, Vec<SeccompRule>>) -> Result<BpfProgram, SandboxError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch()?,
    )
    .map_err(sc_err)?;
    filter.try_into().map_err(sc_err)
}

/// The base filter: the deny list of [`denied_syscalls`], the same for every confined thread and
/// process. All fail with `EPERM`.
pub(crate) fn base_filter() -> Result<BpfProgram, SandboxError> {
    deny(
        denied_syscalls()
            .into_iter()
            .map(|(_, nr)| (nr, Vec::new()))
            .collect(),
    )
}

type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Every call of `syscalls` denied, whatever its arguments.
fn unconditional(syscalls: &[(&str, i64)]) -> Rules {
    syscalls.iter().map(|(_, nr)| (*nr, Vec::new())).collect()
}

/// A rule that matches when argument `arg` (a 32-bit value) compares to `value` by `op`.
fn arg_rule(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompRule, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(sc_err)
}

/// Both rule sets in one: a syscall is denied when either denies it (an unconditional denial
/// stays unconditional).
fn merge(mut into: Rules, from: Rules) -> Rules {
    for (nr, rules) in from {
        match into.get_mut(&nr) {
            None => {
                into.insert(nr, rules);
            }
            Some(existing) if existing.is_empty() => {}
            Some(_) if rules.is_empty() => {
                into.insert(nr, rules);
            }
            Some(existing) => existing.extend(rules),
        }
    }
    into
}

/// The class rules: [`NAMESPACE_SYSCALLS`], namespace-creating `clone`, and (without network)
/// `socket()` and `socketpair()` of any family but `AF_UNIX`.
fn class_rules(network: bool) -> Result<Rules, SandboxError> {
    let mut rules = unconditional(&NAMESPACE_SYSCALLS);
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = u64::from(flag.unsigned_abs());
            arg_rule(0, SeccompCmpOp::MaskedEq(flag), flag)
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    if !network {
        let not_unix = arg_rule(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
        rules.insert(libc::SYS_socket, vec![not_unix.clone()]);
        rules.insert(libc::SYS_socketpair, vec![not_unix]);
    }
    Ok(rules)
}

/// What threads are denied on top of the class rules: the [`metadata_syscalls`], and UNIX
/// sockets unless the tool declares one (`unix_sockets`): `socket(AF_UNIX, …)` (a new socket can
/// `connect` or `sendto` any pathname socket the process can see: Landlock has no right for
/// that) and `socketpair(AF_UNIX, SOCK_DGRAM)` (a datagram socket can `sendmsg` to any address).
/// A stream or seqpacket `socketpair` stays allowed: its two ends reach only each other.
fn thread_rules(unix_sockets: bool) -> Result<Rules, SandboxError> {
    let mut rules = unconditional(&metadata_syscalls());
    if !unix_sockets {
        let unix = arg_rule(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?;
        rules.insert(libc::SYS_socket, vec![unix]);
        let datagram = SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(0xf),
            libc::SOCK_DGRAM as u64,
        )
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(sc_err)?;
        rules.insert(libc::SYS_socketpair, vec![datagram]);
    }
    Ok(rules)
}

/// The class filter: [`class_rules`]. All fail with `EPERM`.
pub(crate) fn class_filter(network: bool) -> Result<BpfProgram, SandboxError> {
    deny(class_rules(network)?)
}

/// The mount filter: [`MOUNT_SYSCALLS`]. All fail with `EPERM`.
pub(crate) fn mount_filter() -> Result<BpfProgram, SandboxError> {
    deny(unconditional(&MOUNT_SYSCALLS))
}

/// The one filter a confined thread gets on top of the base filter: the class rules, the mount
/// filter's and [`thread_rules`]. All fail with `EPERM`.
///
/// A thread without network that may connect to granted TCP ports (`tcp`) may also create
/// `SOCK_STREAM` sockets of the IP families with protocol TCP (or the default), nothing else of
/// them ([`tcp_rules`]): Landlock then decides which ports they connect to.
pub(crate) fn thread_filter(
    network: bool,
    tcp: bool,
    unix_sockets: bool,
) -> Result<BpfProgram, SandboxError> {
    let mut class = class_rules(network)?;
    if !network && tcp {
        class.insert(libc::SYS_socket, tcp_rules()?);
    }
    let rules = merge(class, unconditional(&MOUNT_SYSCALLS));
    deny(merge(rules, thread_rules(unix_sockets)?))
}

/// The `socket()` rules of a thread without network that may reach granted TCP ports: denied
/// are the families but `AF_UNIX`, `AF_INET` and `AF_INET6`, and of the IP families every type
/// but `SOCK_STREAM` (no UDP, raw, SCTP, packet sockets) and every protocol but the default and
/// TCP (no MPTCP, SCTP streams).
fn tcp_rules() -> Result<Vec<SeccompRule>, SandboxError> {
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(sc_err)
    };
    let rule = |conds: Vec<SeccompCondition>| SeccompRule::new(conds).map_err(sc_err);
    let mut rules = vec![rule(vec![
        cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?,
        cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
        cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
    ])?];
    for family in [libc::AF_INET, libc::AF_INET6] {
        // Every type but `SOCK_STREAM` (1), the flags masked off.
        for ty in (0..16u64).filter(|t| *t != libc::SOCK_STREAM as u64) {
            rules.push(rule(vec![
                cond(0, SeccompCmpOp::Eq, family as u64)?,
                cond(1, SeccompCmpOp::MaskedEq(0xf), ty)?,
            ])?);
        }
        rules.push(rule(vec![
            cond(0, SeccompCmpOp::Eq, family as u64)?,
            cond(2, SeccompCmpOp::Ne, 0)?,
            cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
        ])?);
    }
    Ok(rules)
}

// Classic BPF opcodes (linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;
const NR_OFFSET: u32 = 0;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// A second filter whose syscalls fail with `ENOSYS`, so libc falls back instead of failing:
/// `clone3` (its flags sit in memory a filter cannot read, so `clone` is what gets checked), and on
/// x86_64 the x32 syscall numbers (which would bypass a deny list keyed by x86_64 numbers). The
/// architecture is checked by the main filter, installed before this one.
pub(crate) fn enosys_filter() -> BpfProgram {
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let clone3 = libc::SYS_clone3 as u32;
    let mut prog = vec![stmt(LD_W_ABS, NR_OFFSET)];
    if cfg!(target_arch = "x86_64") {
        // nr >= __X32_SYSCALL_BIT → ENOSYS.
        prog.push(jump(JGE_K, 0x4000_0000, 2, 0));
    }
    prog.push(jump(JEQ_K, clone3, 1, 0));
    prog.push(stmt(RET_K, libc::SECCOMP_RET_ALLOW));
    // Both jumps land here.
    prog.push(stmt(RET_K, enosys));
    prog
}

/// Loads the base filter and the `ENOSYS` filter on the calling thread (no `TSYNC`: other threads
/// stay as they are), setting `no_new_privs`. The architecture is checked by the base filter,
/// installed first. The helper's zygote does this once; what it forks inherits both.
pub(crate) fn apply_base() -> Result<(), SandboxError> {
    apply_filter(&base_filter()?).map_err(sc_err)?;
    apply_filter(&enosys_filter()).map_err(sc_err)
}

/// Loads the class filter of `network` on the calling thread (after the process entered the
/// namespaces it needs: the filter denies entering others).
pub(crate) fn apply_class(network: bool) -> Result<(), SandboxError> {
    apply_filter(&class_filter(network)?).map_err(sc_err)
}

/// Loads the mount filter on the calling thread (once the program's minimal root is built).
pub(crate) fn apply_mount() -> Result<(), SandboxError> {
    apply_filter(&mount_filter()?).map_err(sc_err)
}

/// Every filter of a confined thread: [`apply_base`], then the [`thread_filter`].
pub(crate) fn apply_thread(
    network: bool,
    tcp: bool,
    unix_sockets: bool,
) -> Result<(), SandboxError> {
    apply_base()?;
    apply_filter(&thread_filter(network, tcp, unix_sockets)?).map_err(sc_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_holds_what_no_tool_needs() {
        let names: Vec<&str> = denied_syscalls()
            .iter()
            .chain(&NAMESPACE_SYSCALLS)
            .chain(&MOUNT_SYSCALLS)
            .map(|(n, _)| *n)
            .collect();
        for required in [
            "ptrace",
            "mount",
            "umount2",
            "bpf",
            "keyctl",
            "add_key",
            "request_key",
            "init_module",
            "finit_module",
            "delete_module",
            "kexec_load",
            "reboot",
            "swapon",
            "swapoff",
            "unshare",
            "setns",
            "perf_event_open",
            "io_uring_setup",
        ] {
            assert!(names.contains(&required), "{required} is not denied");
        }
    }

    #[test]
    fn filters_compile_for_this_architecture() {
        assert!(!base_filter().expect("base").is_empty());
        let without = class_filter(false).expect("no network");
        let with = class_filter(true).expect("network");
        assert!(
            without.len() > with.len(),
            "the socket rules are in the class filter"
        );
        let enosys = enosys_filter();
        assert_eq!(enosys.last().map(|i| i.code), Some(RET_K));
    }
}
