//! Confining the calling thread: Landlock (files, TCP, scopes), then seccomp.

use std::fmt;

use std::path::PathBuf;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, NetPort,
    PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError,
    RulesetStatus, Scope, ABI,
};
use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::policy::{FsAccess, Mode, SandboxPolicy};
use crate::policy::{DEV_READ, DEV_READ_WRITE};
use crate::seccomp;

/// The Landlock ABI this crate asks for (file rights up to ABI 5, TCP rules from 4, scopes from 6).
pub(crate) const TARGET_ABI: ABI = ABI::V7;

/// How far Landlock was enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum LandlockEnforcement {
    /// Every requested right is handled by the kernel (ABI version of the running kernel).
    Full {
        /// The kernel's Landlock ABI version as used by this crate.
        abi: u8,
    },
    /// Some requested rights are not handled by this kernel (an older ABI): those are allowed.
    Partial {
        /// The kernel's Landlock ABI version.
        abi: u8,
    },
    /// Landlock is not enforced at all.
    None,
}

/// What was really enforced on a thread or process: recorded in every audit event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enforcement {
    /// Landlock file system, TCP and scope rules.
    pub landlock: LandlockEnforcement,
    /// The seccomp filter of this crate.
    pub seccomp: bool,
    /// The process runs as init of its own PID namespace (processes only).
    pub pid_namespace: bool,
    /// The process runs in an empty network namespace (processes without network only).
    pub net_namespace: bool,
    /// The process tree is counted by its own pids cgroup (`pids.max`, which binds root too;
    /// processes only).
    #[serde(default)]
    pub pids_cgroup: bool,
    /// The process runs in a mount namespace of its own with a minimal root: the system paths
    /// and devices read-only, the workspace, an empty `/tmp`, nothing else (processes only).
    #[serde(default)]
    pub mount_namespace: bool,
    /// The process tree's memory is bounded by its own memory cgroup (processes only).
    #[serde(default)]
    pub memory_cgroup: bool,
}

impl Enforcement {
    /// Nothing enforced (`Mode::Off`, or nothing available under `BestEffort`).
    pub const NONE: Enforcement = Enforcement {
        landlock: LandlockEnforcement::None,
        seccomp: false,
        pid_namespace: false,
        net_namespace: false,
        pids_cgroup: false,
        mount_namespace: false,
        memory_cgroup: false,
    };

    /// A short label for audit events: `landlock-v7+seccomp`, `landlock-v5-partial+seccomp+pidns`,
    /// `none`.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        match self.landlock {
            LandlockEnforcement::Full { abi } => parts.push(format!("landlock-v{abi}")),
            LandlockEnforcement::Partial { abi } => parts.push(format!("landlock-v{abi}-partial")),
            LandlockEnforcement::None => {}
        }
        if self.seccomp {
            parts.push("seccomp".to_owned());
        }
        if self.pid_namespace {
            parts.push("pidns".to_owned());
        }
        if self.net_namespace {
            parts.push("netns".to_owned());
        }
        if self.mount_namespace {
            parts.push("mntns".to_owned());
        }
        if self.pids_cgroup {
            parts.push("pids".to_owned());
        }
        if self.memory_cgroup {
            parts.push("mem".to_owned());
        }
        if parts.is_empty() {
            "none".to_owned()
        } else {
            parts.join("+")
        }
    }

    /// Whether Landlock and seccomp are both fully enforced.
    pub fn is_full(&self) -> bool {
        matches!(self.landlock, LandlockEnforcement::Full { .. }) && self.seccomp
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// Confines the calling thread, irreversibly, to `policy`; its future children inherit it.
///
/// Landlock: read (and execute) the system paths and the workspace, write the workspace only with
/// [`FsAccess::ReadWrite`], `/dev/null` read-write; no TCP bind/connect unless `policy.network`;
/// signals and abstract UNIX sockets scoped to this thread's domain. Then seccomp: the syscalls no
/// tool needs (ptrace, mount, bpf, keyctl, modules, namespaces, …) fail with `EPERM`, and without
/// network `socket()` of any family but `AF_UNIX`.
///
/// With [`Mode::Required`] anything not fully enforced is an error. On error the thread may be
/// partly confined already: do not use it for anything else (pool workers exit).
pub fn confine_current_thread(
    policy: &SandboxPolicy,
    mode: Mode,
) -> Result<Enforcement, SandboxError> {
    confine_prepared(policy, mode, None)
}

/// The read-only system paths and the device paths, opened once (by the helper's zygote, for
/// all its spares), each with whether it is a directory.
pub(crate) struct SystemPaths {
    read_paths: Vec<PathBuf>,
    system: Vec<(PathFd, bool)>,
    dev_read_write: Vec<(PathFd, bool)>,
    dev_read: Vec<(PathFd, bool)>,
}

impl SystemPaths {
    /// Opens what exists of `read_paths` and of the device paths (missing paths are skipped, as
    /// the policy says).
    pub(crate) fn open(read_paths: Vec<PathBuf>) -> SystemPaths {
        SystemPaths {
            system: open_existing(&read_paths),
            read_paths,
            dev_read_write: open_existing(DEV_READ_WRITE),
            dev_read: open_existing(DEV_READ),
        }
    }

    /// The read paths these were opened from.
    pub(crate) fn read_paths(&self) -> Vec<PathBuf> {
        self.read_paths.clone()
    }
}

/// Opens what exists of `paths`, noting which are directories.
fn open_existing<P: AsRef<std::path::Path>>(paths: &[P]) -> Vec<(PathFd, bool)> {
    paths
        .iter()
        .filter_map(|p| {
            let fd = PathFd::new(p).ok()?;
            let dir = rustix::fs::fstat(&fd)
                .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
                .unwrap_or(false);
            Some((fd, dir))
        })
        .collect()
}

/// Confinement begun before the policy is known (by the helper's spares, for the init they fork):
/// the seccomp filters applied to the calling process, and a Landlock ruleset holding the rules of
/// the system read paths and the device paths. Applying it then costs the workspace rule and the
/// system call that restricts.
pub(crate) struct Prepared {
    network: bool,
    system_read_paths: Vec<PathBuf>,
    /// The workspace rule is added at the request.
    ruleset: Result<RulesetCreated, SandboxError>,
    /// What applying the seccomp filters gave (they are in force when `Ok`).
    seccomp: Result<(), SandboxError>,
}

impl Prepared {
    /// Applies the class filter of `network` to the calling process (irreversibly: call it where
    /// the process will only ever run such programs, once it entered its namespaces), on top of
    /// the base filter whose result is `base` (applied by the zygote), and builds the Landlock
    /// ruleset of `paths`. Errors are kept for [`confine_prepared`] to report under `mode`.
    pub(crate) fn ahead(
        network: bool,
        mode: Mode,
        paths: &SystemPaths,
        base: Result<(), SandboxError>,
    ) -> Prepared {
        Prepared {
            network,
            system_read_paths: paths.read_paths.clone(),
            ruleset: system_ruleset(network, mode, paths),
            seccomp: base.and_then(|()| seccomp::apply_class(network)),
        }
    }
}

/// [`confine_current_thread`], continuing what `prepared` began. A prepared ruleset is used where
/// the policy keeps the system read paths it was made for; others are opened here. The seccomp
/// filters applied ahead are those of the policy's network class (the helper checks the class
/// first).
pub(crate) fn confine_prepared(
    policy: &SandboxPolicy,
    mode: Mode,
    prepared: Option<Prepared>,
) -> Result<Enforcement, SandboxError> {
    if mode == Mode::Off {
        return Ok(Enforcement::NONE);
    }
    policy.validate()?;
    let opened = || {
        system_ruleset(
            policy.network,
            mode,
            &SystemPaths::open(policy.system_read_paths.clone()),
        )
    };
    let (ruleset, seccomp) = match prepared {
        Some(p) if p.network != policy.network => {
            return Err(SandboxError::Setup(
                "confinement prepared for another network class".to_owned(),
            ))
        }
        Some(p) if p.system_read_paths == policy.system_read_paths => (p.ruleset?, Some(p.seccomp)),
        Some(p) => (opened()?, Some(p.seccomp)),
        None => (opened()?, None),
    };
    let landlock = restrict(ruleset, policy, mode)?;
    // A process (prepared ahead) has its base and class filters already and gets the mount filter
    // now that its root is built; a thread gets all of its rules here.
    let unix_sockets = !policy.unix_sockets.is_empty();
    let seccomp = match seccomp
        .map(|ahead| ahead.and_then(|()| seccomp::apply_mount()))
        .unwrap_or_else(|| {
            seccomp::apply_thread(policy.network, policy.tcp_sockets(), unix_sockets)
        }) {
        Ok(()) => true,
        Err(e) if mode == Mode::Required => return Err(e),
        Err(_) => false,
    };
    Ok(Enforcement {
        landlock,
        seccomp,
        pid_namespace: false,
        net_namespace: false,
        pids_cgroup: false,
        mount_namespace: false,
        memory_cgroup: false,
    })
}

fn ll_err(e: impl fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("landlock: {e}"))
}

/// Building the ruleset fails under `HardRequirement` only when the kernel lacks a feature.
fn ll_unavailable(e: impl fmt::Display) -> SandboxError {
    SandboxError::Unavailable(format!("landlock: {e}"))
}

fn compat_level(mode: Mode) -> CompatLevel {
    match mode {
        Mode::Required => CompatLevel::HardRequirement,
        _ => CompatLevel::BestEffort,
    }
}

/// A ruleset that handles every file right, TCP unless `network`, and every scope, with the rules
/// of the system read paths and the device paths of `paths` (everything but the workspace).
fn system_ruleset(
    network: bool,
    mode: Mode,
    paths: &SystemPaths,
) -> Result<RulesetCreated, SandboxError> {
    let abi = TARGET_ABI;
    let mut ruleset = Ruleset::default()
        .set_compatibility(compat_level(mode))
        .handle_access(AccessFs::from_all(abi))
        .map_err(ll_unavailable)?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(ll_unavailable)?;
    }
    let dev_rw = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    // As `landlock::path_beneath_rules` does: rights that only directories have are dropped
    // for a file.
    fn beneath(
        fds: &[(PathFd, bool)],
        access: BitFlags<AccessFs>,
    ) -> impl Iterator<Item = Result<PathBeneath<&PathFd>, RulesetError>> {
        let file_rights = AccessFs::from_file(TARGET_ABI);
        fds.iter().map(move |(fd, dir)| {
            let access = if *dir { access } else { access & file_rights };
            Ok(PathBeneath::new(fd, access))
        })
    }
    ruleset
        .scope(Scope::from_all(abi))
        .map_err(ll_unavailable)?
        .create()
        .map_err(ll_unavailable)?
        .add_rules(beneath(&paths.system, AccessFs::from_read(abi)))
        .map_err(ll_err)?
        .add_rules(beneath(&paths.dev_read_write, dev_rw))
        .map_err(ll_err)?
        .add_rules(beneath(&paths.dev_read, AccessFs::ReadFile.into()))
        .map_err(ll_err)
}

/// Adds the workspace rule to `ruleset` (read, or read and write) and restricts the calling
/// thread with it.
fn restrict(
    ruleset: RulesetCreated,
    policy: &SandboxPolicy,
    mode: Mode,
) -> Result<LandlockEnforcement, SandboxError> {
    let abi = TARGET_ABI;
    let workspace_access: BitFlags<AccessFs> = match policy.access {
        FsAccess::ReadOnly => AccessFs::from_read(abi),
        FsAccess::ReadWrite => AccessFs::from_all(abi),
    };
    // A missing workspace must fail, not be skipped as path_beneath_rules would.
    let workspace_fd = PathFd::new(&policy.workspace).map_err(|e| {
        SandboxError::InvalidPolicy(format!(
            "cannot open workspace {}: {e}",
            policy.workspace.display()
        ))
    })?;
    let mut ruleset = ruleset
        .add_rule(PathBeneath::new(workspace_fd, workspace_access))
        .map_err(ll_err)?;
    // The granted paths: like the workspace, a missing one fails (it was checked to exist).
    for grant in &policy.granted_paths {
        let fd = PathFd::new(&grant.path).map_err(|e| {
            SandboxError::InvalidPolicy(format!(
                "cannot open granted path {}: {e}",
                grant.path.display()
            ))
        })?;
        let mut access: BitFlags<AccessFs> = match grant.access {
            FsAccess::ReadOnly => AccessFs::from_read(abi),
            FsAccess::ReadWrite => AccessFs::from_all(abi),
        };
        if !grant.path.is_dir() {
            access &= AccessFs::from_file(abi);
        }
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(ll_err)?;
    }
    // TCP connections to the granted ports (TCP is handled only without `network`).
    if !policy.network {
        for port in &policy.tcp_connect_ports {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(ll_err)?;
        }
    }
    let status = ruleset.restrict_self().map_err(ll_err)?;
    let kernel_abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => abi_number(effective_abi),
        _ => 0,
    };
    let enforcement = match status.ruleset {
        RulesetStatus::FullyEnforced => LandlockEnforcement::Full { abi: kernel_abi },
        RulesetStatus::PartiallyEnforced => LandlockEnforcement::Partial { abi: kernel_abi },
        RulesetStatus::NotEnforced => LandlockEnforcement::None,
    };
    if mode == Mode::Required && !matches!(enforcement, LandlockEnforcement::Full { .. }) {
        return Err(SandboxError::Unavailable(format!(
            "landlock is not fully enforced ({:?}, kernel {:?})",
            status.ruleset, status.landlock
        )));
    }
    Ok(enforcement)
}

pub(crate) fn abi_number(abi: ABI) -> u8 {
    // The ABI enum is non-exhaustive; compare against the versions this crate knows.
    const KNOWN: [(ABI, u8); 7] = [
        (ABI::V1, 1),
        (ABI::V2, 2),
        (ABI::V3, 3),
        (ABI::V4, 4),
        (ABI::V5, 5),
        (ABI::V6, 6),
        (ABI::V7, 7),
    ];
    KNOWN
        .iter()
        .rev()
        .find(|(known, _)| abi >= *known)
        .map_or(0, |(_, n)| *n)
}
