//! Building an executor's confinement from its registry and configuration: [`Mode`],
//! [`SandboxConfig`], [`support`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::call::{intern, CallSandbox, ClassRuntime, Declared, ProcessRuntime, ToolRuntime, NONE};
use super::grant::{GrantAccess, Grants};
use super::helper::helper_embedded;
use super::kernel::{
    default_system_read_paths, ConfinedPool, FsAccess, KernelMode, Launcher, PathGrant, PoolConfig,
    SandboxPolicy, Support,
};
use super::limits::ProcessLimits;
use super::runtime::ConfinedRuntime;
use crate::decl::ToolDecl;
use crate::registry::Registry;

/// How much kernel confinement an executor demands (see [`crate::sandbox`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The default. Everything the declaration allows, and nothing else, is enforced by the
    /// kernel where it can be; where it cannot, what needs confinement (scripts, spawned
    /// programs) is refused with `sandbox_unavailable`, and in-process handlers run with the
    /// static guards only, after a loud warning at start-up.
    #[default]
    Required,
    /// Confine with what the kernel offers; the audit records what that was.
    BestEffort,
    /// Confine nothing (you bring your own container); the audit records `none`.
    Off,
}

impl Mode {
    /// The stable name: `required`, `best_effort`, `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Required => "required",
            Mode::BestEffort => "best_effort",
            Mode::Off => "off",
        }
    }

    fn kernel(self) -> KernelMode {
        match self {
            Mode::Required => KernelMode::Required,
            Mode::BestEffort => KernelMode::BestEffort,
            Mode::Off => KernelMode::Off,
        }
    }
}

/// Default confined workers per capability class.
pub const DEFAULT_WORKERS: usize = 4;
/// Default slots per tool: how many of one tool's sync calls may hold workers of its class at
/// once (running or queued). Calls over it wait, within their timeout.
pub const DEFAULT_TOOL_SLOTS: usize = 2;

/// Default busy wait of a confined worker or runtime for its next job, and of a caller for a
/// handler's result, before either sleeps: a short handler then costs no thread wake-up. Only
/// while the machine has a core to spare (`tool_sandbox::spare_core`); otherwise none.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

/// Default scheduler slice of the confined workers and runtimes (the kernel's least, 0.1 ms;
/// Linux 6.12 on, ignored before): woken for a call on a core that other work keeps busy, they run
/// at once instead of after that work's slice (1.4 ms by default on 2 cores).
pub const DEFAULT_SLICE: Duration = Duration::from_micros(100);

/// The sandbox part of an [`ExecutorConfig`](crate::ExecutorConfig).
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub(crate) mode: Mode,
    pub(crate) helper: Option<PathBuf>,
    pub(crate) workers: usize,
    pub(crate) tool_slots: usize,
    pub(crate) confine_async: bool,
    pub(crate) spin: Duration,
    pub(crate) slice: Option<Duration>,
    pub(crate) limits: ProcessLimits,
    pub(crate) tool_limits: HashMap<String, ProcessLimits>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: Mode::Required,
            helper: None,
            workers: DEFAULT_WORKERS,
            tool_slots: DEFAULT_TOOL_SLOTS,
            confine_async: true,
            spin: DEFAULT_SPIN,
            slice: Some(DEFAULT_SLICE),
            limits: ProcessLimits::default(),
            tool_limits: HashMap::new(),
        }
    }
}

/// What this kernel offers for confinement, e.g. `landlock-v7+seccomp+userns+pidns+netns`, or
/// `none` (probed once per process).
pub fn support() -> String {
    probe().label()
}

fn probe() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(Support::probe)
}

/// The capability class of a declaration: risk `safe`/`read_only` read only, anything else reads
/// and writes the workspace; `open_world` adds the network.
fn class_of(decl: &ToolDecl) -> (FsAccess, bool) {
    let access = if decl.read_only() {
        FsAccess::ReadOnly
    } else {
        FsAccess::ReadWrite
    };
    (access, decl.open_world)
}

fn class_index(access: FsAccess, network: bool) -> usize {
    match (access, network) {
        (FsAccess::ReadOnly, false) => 0,
        (FsAccess::ReadOnly, true) => 1,
        (FsAccess::ReadWrite, false) => 2,
        (FsAccess::ReadWrite, true) => 3,
    }
}

const CLASS_NAMES: [&str; 4] = ["read_only", "read_only+net", "read_write", "read_write+net"];
const CLASS_RULES: [&str; 4] = [
    "it may read the workspace and write nothing, and has no network",
    "it may read the workspace and write nothing",
    "it may read and write the workspace only, and has no network",
    "it may read and write the workspace only",
];

/// The system paths the worker pools may read: the programs' list without the user database.
fn pool_read_paths() -> Vec<PathBuf> {
    default_system_read_paths()
        .into_iter()
        .filter(|p| p != Path::new("/etc/passwd") && p != Path::new("/etc/group"))
        .collect()
}

/// An executor's confinement: per tool, its class's pool and program launcher.
#[derive(Debug)]
pub(crate) struct Confinement {
    pub(crate) mode: Mode,
    // Looked up on every call: by name comparison, which costs less than hashing it.
    tools: BTreeMap<String, Arc<ToolRuntime>>,
}

impl Confinement {
    /// Probes the kernel, starts a confined pool per class the registry uses, finds the helper.
    /// Never fails: what cannot be confined is refused per call (or, for in-process handlers
    /// under `Required` on a kernel without support, run with the static guards after a warning).
    pub(crate) fn new(
        root: &Path,
        registry: &Registry,
        config: &SandboxConfig,
        grants: &HashMap<String, Grants>,
    ) -> Self {
        let mode = config.mode;
        let support = if mode == Mode::Off {
            None
        } else {
            Some(probe())
        };
        let threads_ok = support.is_some_and(Support::threads_fully_confined);
        let processes_ok = support.is_some_and(Support::processes_fully_confined);
        let label = support.map_or_else(|| NONE.to_owned(), Support::label);
        let needs_process = registry.iter().any(|t| !t.decl().script_args.is_empty());
        if mode == Mode::Required && !threads_ok {
            tracing::warn!(
                kernel = %label,
                "kernel sandbox unavailable: in-process tool handlers run with the static guards \
                 only, and tools with script arguments are refused (sandbox_unavailable)"
            );
        }
        let launcher = locate_helper(config, mode);
        if let Err(e) = &launcher {
            if needs_process && mode != Mode::Off {
                tracing::warn!(error = %e, "tools with script arguments will be refused");
            }
        }
        // A class per capability, set of declared UNIX sockets and set of grants of the tools'
        // resources: tools that declare sockets or take granted resources get pools and programs
        // of their own, which may reach those (and only those).
        let mut classes: HashMap<(usize, Vec<String>, Grants), Arc<ClassRuntime>> = HashMap::new();
        let mut tools = BTreeMap::new();
        let no_grants = Grants::new();
        for tool in registry.iter() {
            let decl = tool.decl();
            let (access, network) = class_of(decl);
            let i = class_index(access, network);
            let granted = grants.get(&decl.name).unwrap_or(&no_grants);
            let mut sockets = decl.unix_sockets.clone();
            sockets.extend(
                granted
                    .unix_sockets
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned()),
            );
            sockets.sort();
            sockets.dedup();
            let class = classes
                .entry((i, sockets, granted.clone()))
                .or_insert_with_key(|(_, sockets, grants)| {
                    Arc::new(build_class(
                        root,
                        Class {
                            index: i,
                            access,
                            network,
                            sockets,
                            grants,
                        },
                        mode,
                        config,
                        threads_ok,
                        processes_ok,
                        &label,
                        &launcher,
                    ))
                })
                .clone();
            let slots = config.tool_slots.max(1);
            let limits = config
                .tool_limits
                .get(&decl.name)
                .unwrap_or(&config.limits)
                .clone();
            tools.insert(
                decl.name.clone(),
                Arc::new(ToolRuntime {
                    class,
                    slots: Arc::new(Semaphore::new(slots)),
                    slot_count: slots,
                    limits,
                    decl: Declared {
                        name: decl.name.clone(),
                        risk: decl.risk,
                        open_world: decl.open_world,
                    },
                }),
            );
        }
        Confinement { mode, tools }
    }

    /// The confinement of one call of `tool` (`async_fn`: its handler is an async `#[tool]`
    /// function's, which runs on the class's confined runtime when there is one).
    pub(crate) fn call(
        &self,
        tool: &str,
        async_fn: bool,
        deadline: Option<tokio::time::Instant>,
    ) -> Option<Arc<CallSandbox>> {
        let rt = self.tools.get(tool)?;
        let outside = if async_fn && rt.class.async_rt.is_some() {
            tokio::runtime::Handle::try_current().ok()
        } else {
            None
        };
        Some(Arc::new(CallSandbox::new(
            Arc::clone(rt),
            deadline,
            outside,
        )))
    }

    /// Why a call of `decl` must be refused before its handler runs: a tool with script
    /// arguments whose programs cannot be confined (under `Required` or `BestEffort`).
    pub(crate) fn refusal(&self, decl: &ToolDecl) -> Option<String> {
        if decl.script_args.is_empty() || self.mode == Mode::Off {
            return None;
        }
        let rt = self.tools.get(&decl.name)?;
        match &rt.class.process {
            Ok(_) => None,
            Err(why) => Some(format!(
                "`{}` runs scripts, and they cannot be confined here: {why}",
                decl.name
            )),
        }
    }
}

/// What one class of an executor's confinement does, as `doctor` reports it.
#[derive(Debug)]
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `doctor` only
pub(crate) struct ClassReport {
    /// The class name (`read_only`, `read_write+grants`, …).
    pub(crate) name: &'static str,
    /// The tools of the class, sorted.
    pub(crate) tools: Vec<String>,
    /// What confines its sync handlers (`none` when nothing does).
    pub(crate) sync_handlers: &'static str,
    /// What confines its async `#[tool]` handlers (`none` when nothing does).
    pub(crate) async_handlers: &'static str,
    /// Whether its programs can be started confined, or why not.
    pub(crate) programs: Result<(), String>,
    /// What its tools' resources grant.
    pub(crate) grants: Option<String>,
}

impl Confinement {
    /// Per class, what it confines: read from the pools, runtimes and launchers this
    /// confinement started, so it says what calls will get.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `doctor` only
    pub(crate) fn report(&self) -> Vec<ClassReport> {
        let mut by_class: Vec<(Arc<ClassRuntime>, Vec<String>)> = Vec::new();
        for (tool, rt) in &self.tools {
            match by_class.iter_mut().find(|(c, _)| Arc::ptr_eq(c, &rt.class)) {
                Some((_, tools)) => tools.push(tool.clone()),
                None => by_class.push((Arc::clone(&rt.class), vec![tool.clone()])),
            }
        }
        let mut out: Vec<ClassReport> = by_class
            .into_iter()
            .map(|(class, mut tools)| {
                tools.sort();
                ClassReport {
                    name: class.name,
                    tools,
                    sync_handlers: class.handler_label,
                    async_handlers: class.async_rt.as_ref().map_or(NONE, |rt| rt.label),
                    programs: class.process.as_ref().map(|_| ()).map_err(Clone::clone),
                    grants: class.grants.as_ref().map(ToString::to_string),
                }
            })
            .collect();
        out.sort_by(|a, b| (a.name, &a.tools).cmp(&(b.name, &b.tools)));
        out
    }
}

fn locate_helper(config: &SandboxConfig, mode: Mode) -> Result<Launcher, String> {
    let kmode = mode.kernel();
    let found = match &config.helper {
        Some(path) => Launcher::locate(Some(path), kmode),
        None if helper_embedded() => Launcher::current_exe(kmode),
        // A program that dispatched too late can still use a separate helper beside it.
        None => match (
            Launcher::locate(None, kmode),
            super::helper::embedding_failed(),
        ) {
            (Err(_), Some(why)) => return Err(why),
            (found, _) => found,
        },
    };
    found.map_err(|e| format!("{e}. Fix: {}", super::helper::MAIN_FIX))
}

/// Why an executor whose tools run scripts must not start: the program called
/// `dispatch_helper` too late to be its own helper, and names no other (none is given, and no
/// `tool-sandbox-exec` lies beside the executable). `None` under
/// `Mode::Off`, without script tools, or with a helper.
pub(crate) fn startup_refusal(registry: &Registry, config: &SandboxConfig) -> Option<String> {
    if config.mode == Mode::Off || config.helper.is_some() {
        return None;
    }
    let why = super::helper::embedding_failed()?;
    if Launcher::locate(None, config.mode.kernel()).is_ok() {
        return None;
    }
    let scripts: Vec<&str> = registry
        .iter()
        .filter(|t| !t.decl().script_args.is_empty())
        .map(|t| t.decl().name.as_str())
        .collect();
    if scripts.is_empty() {
        return None;
    }
    Some(format!(
        "tools with scripts ({}) cannot be confined: {why}",
        scripts.join(", ")
    ))
}

/// What a class is made of: its capability, the UNIX sockets its tools declare and the grants
/// of their resources.
struct Class<'a> {
    index: usize,
    access: FsAccess,
    network: bool,
    sockets: &'a [String],
    grants: &'a Grants,
}

#[allow(clippy::too_many_arguments)]
fn build_class(
    root: &Path,
    class: Class<'_>,
    mode: Mode,
    config: &SandboxConfig,
    threads_ok: bool,
    processes_ok: bool,
    kernel_label: &str,
    launcher: &Result<Launcher, String>,
) -> ClassRuntime {
    let Class {
        index: i,
        access,
        network,
        sockets,
        grants,
    } = class;
    let granted = !grants.paths.is_empty() || (!network && !grants.connect.is_empty());
    let name = match (sockets.is_empty(), granted) {
        (true, false) => CLASS_NAMES[i],
        (false, false) => intern(&format!("{}+unix", CLASS_NAMES[i])),
        (true, true) => intern(&format!("{}+grants", CLASS_NAMES[i])),
        (false, true) => intern(&format!("{}+unix+grants", CLASS_NAMES[i])),
    };
    let ports = if network {
        Vec::new()
    } else {
        grants.ports().into_iter().collect()
    };
    let policy = SandboxPolicy::new(root, access, network)
        .and_then(|p| p.with_unix_sockets(sockets.iter().map(PathBuf::from)))
        .and_then(|p| {
            p.with_granted_paths(grants.paths.iter().map(|(path, access)| PathGrant {
                path: path.clone(),
                access: match access {
                    GrantAccess::Read => FsAccess::ReadOnly,
                    GrantAccess::ReadWrite => FsAccess::ReadWrite,
                },
            }))
        })
        .and_then(|p| p.with_tcp_connect_ports(ports))
        .map_err(|e| e.to_string());
    let pool = match (&policy, mode) {
        (_, Mode::Off) => None,
        (_, Mode::Required) if !threads_ok => None,
        (Err(e), _) => {
            tracing::warn!(class = name, error = %e, "no confined workers for this class");
            None
        }
        (Ok(policy), _) => {
            let started = policy
                .clone()
                .with_system_read_paths(pool_read_paths())
                .and_then(|p| {
                    ConfinedPool::new(
                        &p,
                        mode.kernel(),
                        PoolConfig {
                            workers: config.workers.max(1),
                            queue: 64,
                            name: format!("tool-{name}"),
                            spin: config.spin,
                            slice: config.slice,
                        },
                    )
                });
            match started {
                Ok(pool) => Some(pool),
                Err(e) => {
                    tracing::warn!(
                        class = name,
                        error = %e,
                        "kernel sandbox unavailable: sync handlers of this class run with the \
                         static guards only"
                    );
                    None
                }
            }
        }
    };
    let handler_label = pool
        .as_ref()
        .map_or(NONE, |p| intern(&p.enforcement().label()));
    let grants = if grants.is_empty() {
        None
    } else {
        Some(grants.clone())
    };
    let async_rt = match (&policy, mode) {
        (Ok(policy), Mode::BestEffort) | (Ok(policy), Mode::Required)
            if config.confine_async && (threads_ok || mode == Mode::BestEffort) =>
        {
            let started = policy
                .clone()
                .with_system_read_paths(pool_read_paths())
                .map_err(|e| e.to_string())
                .and_then(|p| {
                    ConfinedRuntime::start(p, mode.kernel(), name, config.spin, config.slice)
                });
            match started {
                Ok(rt) => Some(rt),
                Err(e) => {
                    tracing::warn!(
                        class = name,
                        error = %e,
                        "kernel sandbox unavailable: async handlers of this class run unconfined"
                    );
                    None
                }
            }
        }
        _ => None,
    };
    let process = match (policy, launcher) {
        (_, _) if mode == Mode::Required && !processes_ok => Err(format!(
            "this kernel does not offer everything a confined program needs (it offers \
             `{kernel_label}`; needed: Landlock ABI 7 fully, seccomp, user and PID namespaces)"
        )),
        (Err(e), _) => Err(e),
        (_, Err(e)) => Err(e.clone()),
        (Ok(policy), Ok(launcher)) => Ok(ProcessRuntime {
            policy,
            launcher: launcher.clone(),
        }),
    };
    ClassRuntime {
        name,
        pool,
        handler_label,
        async_rt,
        process,
        rules: CLASS_RULES[i],
        grants,
    }
}
