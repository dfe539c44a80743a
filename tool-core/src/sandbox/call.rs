//! What one executor keeps per capability class and per tool, and what one call records about
//! its confinement.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Semaphore;

use super::kernel::{ConfinedPool, Launcher, SandboxPolicy};
use super::runtime::ConfinedRuntime;
use crate::reason::ReasonCode;

pub(crate) use super::label::{intern, NONE, NOT_RUN};

/// How programs of one class are started confined.
#[derive(Debug)]
pub(crate) struct ProcessRuntime {
    pub(crate) policy: SandboxPolicy,
    pub(crate) launcher: Launcher,
}

/// What confines the handlers and programs of one capability class.
#[derive(Debug)]
pub(crate) struct ClassRuntime {
    /// The class name: `read_only`, `read_write+net`, …
    pub(crate) name: &'static str,
    /// The confined workers for sync handlers (`None`: they run unconfined, see the label).
    pub(crate) pool: Option<ConfinedPool>,
    /// What a sync handler of this class runs under: the pool's enforcement, or `none`.
    pub(crate) handler_label: &'static str,
    /// The confined runtime for async `#[tool]` handlers (opt-in).
    pub(crate) async_rt: Option<ConfinedRuntime>,
    /// How programs are started, or why they cannot be.
    pub(crate) process: Result<ProcessRuntime, String>,
    /// What a refusal says about the class, e.g. `read_only: reads the workspace, writes nothing`.
    pub(crate) rules: &'static str,
    /// What the resources of its tools grant on top of the class (`None`: nothing).
    pub(crate) grants: Option<super::grant::Grants>,
}

/// One tool's share of its class: the class, and the slots that bound how many of its sync calls
/// may hold confined workers at once (a tool stuck in the kernel exhausts its own slots only).
#[derive(Debug)]
pub(crate) struct ToolRuntime {
    pub(crate) class: Arc<ClassRuntime>,
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) slot_count: usize,
    /// The resource limits of the programs the tool starts.
    pub(crate) limits: super::limits::ProcessLimits,
    /// What the tool declares that chose its class, for refusals.
    pub(crate) decl: Declared,
}

/// The parts of a tool's declaration that chose its class.
#[derive(Debug)]
pub(crate) struct Declared {
    pub(crate) name: String,
    pub(crate) risk: crate::decl::Risk,
    pub(crate) open_world: bool,
}

/// What one call learned about its confinement, for its result and audit event.
#[derive(Debug, Default)]
struct CallRecord {
    /// What confined the handler (set when it was dispatched).
    handler: Option<&'static str>,
    /// What confined the last program the call started.
    process: Option<String>,
    /// The reason code a confined program's end calls for (`timeout`, `cancelled`,
    /// `sandbox_unavailable`) when the handler then fails.
    code: Option<ReasonCode>,
    /// The call had to wait for one of its tool's slots.
    waited: bool,
}

/// One call's confinement: its tool's class, its deadline, and what it recorded.
#[derive(Debug)]
pub(crate) struct CallSandbox {
    pub(crate) tool: Arc<ToolRuntime>,
    pub(crate) deadline: Option<tokio::time::Instant>,
    /// The caller's runtime, when the handler runs on a confined one: programs are launched
    /// from here (a confined thread may not create the helper's namespaces).
    pub(crate) outside: Option<tokio::runtime::Handle>,
    record: Mutex<CallRecord>,
}

impl CallSandbox {
    pub(crate) fn new(
        tool: Arc<ToolRuntime>,
        deadline: Option<tokio::time::Instant>,
        outside: Option<tokio::runtime::Handle>,
    ) -> Self {
        CallSandbox {
            tool,
            deadline,
            outside,
            record: Mutex::new(CallRecord::default()),
        }
    }

    fn record(&self) -> std::sync::MutexGuard<'_, CallRecord> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn class(&self) -> &ClassRuntime {
        &self.tool.class
    }

    pub(crate) fn set_handler(&self, label: &'static str) {
        self.record().handler = Some(label);
    }

    pub(crate) fn set_waited(&self) {
        self.record().waited = true;
    }

    pub(crate) fn set_process(&self, label: String) {
        self.record().process = Some(label);
    }

    pub(crate) fn set_code(&self, code: ReasonCode) {
        self.record().code = Some(code);
    }

    /// The reason code a program's end called for, if any.
    pub(crate) fn code(&self) -> Option<ReasonCode> {
        self.record().code
    }

    /// Whether the call waited for a slot of its tool.
    pub(crate) fn waited(&self) -> bool {
        self.record().waited
    }

    /// Whether the handler ran on a confined worker.
    pub(crate) fn handler_confined(&self) -> bool {
        self.record().handler.is_some_and(|l| l != NONE)
    }

    /// What enforced the call: the handler's confinement, then the last program's, then the
    /// grants of the tool's resources (`…; grants: read_write /var/lib/app, tcp host:443`).
    pub(crate) fn label(&self) -> &'static str {
        let r = self.record();
        let handler = r.handler.unwrap_or(NONE);
        // The grants of the tool's resources, where something enforced them.
        let grants = match (
            &self.tool.class.grants,
            handler != NONE || r.process.is_some(),
        ) {
            (Some(g), true) => format!("; grants: {g}"),
            _ => String::new(),
        };
        match &r.process {
            None if grants.is_empty() => handler,
            None => intern(&format!("{handler}{grants}")),
            Some(p) => intern(&format!("{handler}; process: {p}{grants}")),
        }
    }
}

/// Where a sync handler runs: made by generated code from the call's context, before the handler
/// takes the context. Not public API.
#[doc(hidden)]
#[derive(Debug)]
pub struct SyncRunner(pub(crate) Option<Arc<CallSandbox>>);
