//! The resource limits of the programs a tool starts: [`ProcessLimits`].

use super::kernel::{LimitHit, Rlimits};

/// The resource limits of the programs a tool starts, over each run's whole process tree where
/// the kernel can count it (set with
/// [`ExecutorConfig::sandbox_limits`](crate::ExecutorConfig::sandbox_limits) and
/// [`sandbox_tool_limits`](crate::ExecutorConfig::sandbox_tool_limits)). `None` is no limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessLimits {
    /// Memory of all of a run's processes together, page cache included
    /// (a memory cgroup; where the machine has none, only `address_space_bytes` binds, per
    /// process). Default 1 GiB.
    pub memory_bytes: Option<u64>,
    /// Processes in the run's tree, root included (a pids cgroup, else `RLIMIT_NPROC`).
    /// Default 256.
    pub processes: Option<u64>,
    /// The largest file a process may write (`RLIMIT_FSIZE`). Default 256 MiB.
    pub file_size_bytes: Option<u64>,
    /// CPU seconds per process (`RLIMIT_CPU`). Default 60.
    pub cpu_secs: Option<u64>,
    /// Address space per process (`RLIMIT_AS`). Default 4 GiB.
    pub address_space_bytes: Option<u64>,
    /// Open files per process (`RLIMIT_NOFILE`). Default 1024.
    pub open_files: Option<u64>,
}

impl Default for ProcessLimits {
    fn default() -> Self {
        ProcessLimits {
            memory_bytes: Some(1 << 30),
            processes: Some(256),
            file_size_bytes: Some(256 << 20),
            cpu_secs: Some(60),
            address_space_bytes: Some(4 << 30),
            open_files: Some(1024),
        }
    }
}

impl ProcessLimits {
    pub(crate) fn kernel(&self) -> Rlimits {
        Rlimits {
            cpu_secs: self.cpu_secs,
            address_space_bytes: self.address_space_bytes,
            processes: self.processes,
            file_size_bytes: self.file_size_bytes,
            open_files: self.open_files,
            memory_bytes: self.memory_bytes,
        }
    }

    /// What `hit` was set to, for messages.
    pub(crate) fn describe(&self, hit: LimitHit) -> String {
        let mib = |b: Option<u64>| b.map_or("no limit".to_owned(), |b| format!("{} MiB", b >> 20));
        match hit {
            LimitHit::Memory => format!(
                "its memory limit ({} over all its processes)",
                mib(self.memory_bytes)
            ),
            LimitHit::Processes => format!(
                "its process limit ({})",
                self.processes
                    .map_or("no limit".to_owned(), |n| n.to_string())
            ),
            LimitHit::FileSize => {
                format!(
                    "its file size limit ({} per file)",
                    mib(self.file_size_bytes)
                )
            }
            LimitHit::Cpu => format!(
                "its CPU limit ({} s)",
                self.cpu_secs
                    .map_or("no limit".to_owned(), |n| n.to_string())
            ),
        }
    }
}
