//! What this kernel offers, for start-up warnings and a `doctor` command.

use std::fmt;
use std::path::Path;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetStatus, Scope,
};
use serde::{Deserialize, Serialize};

use crate::confine::{abi_number, TARGET_ABI};
use crate::seccomp;

/// The confinement features of the running kernel, found by trying them on a throwaway thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Support {
    /// The Landlock ABI version (0: no Landlock, or not enabled at boot).
    pub landlock_abi: u8,
    /// Whether a Landlock ruleset with everything this crate asks for was fully enforced.
    pub landlock_full: bool,
    /// Whether this crate's seccomp filter could be installed.
    pub seccomp: bool,
    /// Whether user namespaces can be created (`/proc/sys/user/max_user_namespaces` > 0).
    pub user_namespaces: bool,
    /// Whether PID namespaces exist on this kernel.
    pub pid_namespaces: bool,
    /// Whether network namespaces exist on this kernel.
    pub net_namespaces: bool,
    /// Whether confined programs get a pids cgroup of their own (a process cap that binds root).
    #[serde(default)]
    pub pids_cgroup: bool,
    /// Whether mount namespaces exist on this kernel (a confined program's minimal root).
    #[serde(default)]
    pub mount_namespaces: bool,
    /// Whether confined programs get a memory cgroup of their own (a bound over all of a run's
    /// processes).
    #[serde(default)]
    pub memory_cgroup: bool,
}

impl Support {
    /// Probes the kernel. Confines (and then ends) one short-lived thread; the caller's threads
    /// are untouched.
    pub fn probe() -> Support {
        let (landlock_abi, landlock_full, seccomp) = std::thread::Builder::new()
            .name("tool-sandbox-probe".to_owned())
            .spawn(probe_on_this_thread)
            .ok()
            .and_then(|h| h.join().ok())
            .unwrap_or((0, false, false));
        let max_userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        Support {
            landlock_abi,
            landlock_full,
            seccomp,
            user_namespaces: Path::new("/proc/self/ns/user").exists() && max_userns > 0,
            pid_namespaces: Path::new("/proc/self/ns/pid").exists(),
            net_namespaces: Path::new("/proc/self/ns/net").exists(),
            pids_cgroup: crate::cgroup::available(),
            mount_namespaces: Path::new("/proc/self/ns/mnt").exists(),
            memory_cgroup: crate::cgroup::memory_available(),
        }
    }

    /// Whether `Mode::Required` can be met for threads (Landlock fully, and seccomp).
    pub fn threads_fully_confined(&self) -> bool {
        self.landlock_full && self.seccomp
    }

    /// Whether `Mode::Required` can be met for processes (also user, PID and mount namespaces).
    pub fn processes_fully_confined(&self) -> bool {
        self.threads_fully_confined()
            && self.user_namespaces
            && self.pid_namespaces
            && self.mount_namespaces
    }

    /// A short label: `landlock-v7+seccomp+userns+pidns+netns+mntns+pids+mem`, or `none`.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if self.landlock_abi > 0 {
            if self.landlock_full {
                parts.push(format!("landlock-v{}", self.landlock_abi));
            } else {
                parts.push(format!("landlock-v{}-partial", self.landlock_abi));
            }
        }
        for (on, name) in [
            (self.seccomp, "seccomp"),
            (self.user_namespaces, "userns"),
            (self.pid_namespaces, "pidns"),
            (self.net_namespaces, "netns"),
            (self.mount_namespaces, "mntns"),
            (self.pids_cgroup, "pids"),
            (self.memory_cgroup, "mem"),
        ] {
            if on {
                parts.push(name.to_owned());
            }
        }
        if parts.is_empty() {
            "none".to_owned()
        } else {
            parts.join("+")
        }
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

fn probe_on_this_thread() -> (u8, bool, bool) {
    let abi = TARGET_ABI;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
    let (landlock_abi, landlock_full) = match status {
        Ok(s) => {
            let n = match s.landlock {
                LandlockStatus::Available { effective_abi, .. } => abi_number(effective_abi),
                _ => 0,
            };
            (n, s.ruleset == RulesetStatus::FullyEnforced)
        }
        Err(_) => (0, false),
    };
    let seccomp = seccomp::apply_thread(false, false, false).is_ok();
    (landlock_abi, landlock_full, seccomp)
}
