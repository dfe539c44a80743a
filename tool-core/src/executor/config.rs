//! How an executor enforces declarations: [`ExecutorConfig`] and its defaults.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::approval::Approver;
use crate::audit::{AuditKey, AuditLogError, AuditSink, JsonlAuditSink, NoopAuditSink};
use crate::call::ParseLimits;
use crate::decl::ToolDecl;
use crate::gate::{ScanMode, ScriptGate};
use crate::resource::Resources;
use crate::sandbox::setup::{Mode, SandboxConfig};
use crate::schema::export::Dialect;

/// Default longest run time of a call whose tool declares no timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default output cap in bytes.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;
/// Default number of consecutive failures before a session is stopped.
pub const DEFAULT_ERROR_BUDGET: u32 = 5;
/// Default number of times an approver may edit one call's arguments.
pub const DEFAULT_MAX_EDIT_ROUNDS: u32 = 3;
/// Default number of concurrency-safe calls of one batch that run at the same time.
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// A caller-supplied transform of a call's arguments, run before the trusted overrides and
/// defaults; `Err(reason)` refuses the call with `invalid_arguments`.
pub type ArgumentFilter =
    Arc<dyn Fn(&ToolDecl, &mut Map<String, Value>) -> Result<(), String> + Send + Sync>;

/// Per-tool limits that override the declaration and the configured defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimits {
    /// Longest run time.
    pub timeout: Option<Duration>,
    /// Output cap in bytes.
    pub output_cap: Option<usize>,
}

/// A trusted argument value: for one tool, or (tool `None`) for every tool whose schema has the
/// property.
#[derive(Debug, Clone)]
pub(super) struct ArgRule {
    tool: Option<String>,
    pub(super) key: String,
    pub(super) value: Value,
}

impl ArgRule {
    pub(super) fn applies(&self, decl: &ToolDecl) -> bool {
        match &self.tool {
            Some(t) => *t == decl.name,
            None => decl
                .input_schema
                .get("properties")
                .and_then(|p| p.get(&self.key))
                .is_some(),
        }
    }
}

/// How an [`Executor`](super::Executor) enforces declarations: the workspace, who approves, where audit goes,
/// limits and trusted argument rules. The conservative defaults: no approver (deny anything that
/// needs approval), no audit, script gate: the scanner with its default policy under the `safety`
/// feature, judged against the workspace (without the feature, tools with script arguments fail
/// [`Executor::new`](super::Executor::new)), scan
/// [`ScanMode::On`], budget
/// [`DEFAULT_ERROR_BUDGET`], timeout [`DEFAULT_TIMEOUT`], output cap [`DEFAULT_OUTPUT_CAP`],
/// batch concurrency [`DEFAULT_MAX_CONCURRENCY`], no session-wide output budget, kernel
/// confinement [`Mode::Required`] (see [`crate::sandbox`]).
#[derive(Clone)]
pub struct ExecutorConfig {
    pub(super) workspace: PathBuf,
    pub(super) approver: Option<Arc<dyn Approver>>,
    pub(super) input: Option<Arc<dyn crate::input::InputHandler>>,
    pub(super) audit: Arc<dyn AuditSink>,
    pub(super) script_gate: Option<Arc<dyn ScriptGate>>,
    pub(super) scan: ScanMode,
    pub(super) error_budget: u32,
    pub(super) default_timeout: Duration,
    pub(super) default_output_cap: usize,
    pub(super) tool_limits: HashMap<String, ToolLimits>,
    pub(super) filters: Vec<ArgumentFilter>,
    pub(super) overrides: Vec<ArgRule>,
    pub(super) defaults: Vec<ArgRule>,
    pub(super) max_edit_rounds: u32,
    pub(super) parse_limits: ParseLimits,
    pub(super) dialect: Option<Dialect>,
    pub(super) max_concurrency: usize,
    pub(super) session_output_budget: Option<usize>,
    pub(super) log: Option<crate::context::LogSink>,
    pub(crate) sandbox: SandboxConfig,
    pub(super) resources: Resources,
}

impl std::fmt::Debug for ExecutorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorConfig")
            .field("workspace", &self.workspace)
            .field("approver", &self.approver.is_some())
            .field("input", &self.input.is_some())
            .field("script_gate", &self.script_gate.is_some())
            .field("scan", &self.scan)
            .field("error_budget", &self.error_budget)
            .field("default_timeout", &self.default_timeout)
            .field("default_output_cap", &self.default_output_cap)
            .field("tool_limits", &self.tool_limits)
            .field("filters", &self.filters.len())
            .field("overrides", &self.overrides)
            .field("defaults", &self.defaults)
            .field("max_edit_rounds", &self.max_edit_rounds)
            .field("dialect", &self.dialect)
            .field("max_concurrency", &self.max_concurrency)
            .field("session_output_budget", &self.session_output_budget)
            .field(
                "log",
                &self.log.as_ref().map(crate::context::LogSink::min_level),
            )
            .field("sandbox", &self.sandbox)
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl ExecutorConfig {
    /// A configuration for this workspace root (required: relative paths are resolved against it,
    /// never against the process working directory).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        ExecutorConfig {
            workspace: workspace.into(),
            approver: None,
            input: None,
            audit: Arc::new(NoopAuditSink),
            script_gate: None,
            scan: ScanMode::On,
            error_budget: DEFAULT_ERROR_BUDGET,
            default_timeout: DEFAULT_TIMEOUT,
            default_output_cap: DEFAULT_OUTPUT_CAP,
            tool_limits: HashMap::new(),
            filters: Vec::new(),
            overrides: Vec::new(),
            defaults: Vec::new(),
            max_edit_rounds: DEFAULT_MAX_EDIT_ROUNDS,
            parse_limits: ParseLimits::default(),
            dialect: None,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            session_output_budget: None,
            log: None,
            sandbox: SandboxConfig::default(),
            resources: Resources::new(),
        }
    }

    /// Register `value` as the resource `State<T>` parameters of type `T` receive, a clone per
    /// call (see [`crate::resource`]; share one instance as an `Arc<T>`); a later value of the same
    /// type replaces it. Every tool's resources must be registered:
    /// [`Executor::new`](super::Executor::new) refuses to start otherwise.
    pub fn resource<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.resources.insert(value);
        self
    }

    /// Register `value` as a resource (as [`ExecutorConfig::resource`]) with what the tools that
    /// take it need from the kernel sandbox: paths outside the workspace, UNIX sockets, TCP
    /// ports ([`Grants`](crate::sandbox::Grants)). Every tool with a `State<T>` of this type is
    /// confined with the grants added; [`Executor::new`](super::Executor::new) refuses a grant
    /// that is not valid ([`ExecutorError::InvalidGrant`](super::ExecutorError::InvalidGrant)).
    ///
    /// ```no_run
    /// use std::sync::{Arc, Mutex};
    /// use tool_core::sandbox::Grants;
    /// # struct Db;
    /// // The database's directory: its `-journal` is created beside it.
    /// let config = tool_core::ExecutorConfig::new(".")
    ///     .resource_with_grants(Arc::new(Mutex::new(Db)), Grants::new().read_write("/var/lib/app"));
    /// # let _ = config;
    /// ```
    pub fn resource_with_grants<T: Clone + Send + Sync + 'static>(
        mut self,
        value: T,
        grants: crate::sandbox::Grants,
    ) -> Self {
        self.resources.insert_with_grants(value, grants);
        self
    }

    /// Register every resource of `resources` (replacing those of the same types).
    pub fn resources(mut self, resources: &Resources) -> Self {
        self.resources.extend(resources);
        self
    }

    /// Where tools' log messages go for calls whose [`CallOptions`](super::CallOptions) name no
    /// sink of their own (the command line sends them to stderr); without one, nowhere.
    pub fn log_sink(mut self, sink: crate::context::LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Ask this approver when a call needs approval.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Answer tools' questions ([`ToolContext::ask`](crate::context::ToolContext::ask)) here, for
    /// calls whose [`CallOptions`](super::CallOptions) name no handler of their own; without
    /// one, every question is refused with `input_unavailable`.
    pub fn input_handler(mut self, handler: Arc<dyn crate::input::InputHandler>) -> Self {
        self.input = Some(handler);
        self
    }

    /// Send one audit event per call here.
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = sink;
        self
    }

    /// Send one audit event per call to the keyed JSONL log at `path`, under `key`, with a
    /// checkpoint every [`DEFAULT_EPOCH_LINES`](crate::audit::DEFAULT_EPOCH_LINES) lines (see
    /// [`JsonlAuditSink::open_keyed`]). Fails with `audit_tampered`
    /// ([`AuditLogError::reason_code`]) when the log was changed since its last checkpoint.
    pub fn keyed_audit_log(
        self,
        path: impl AsRef<std::path::Path>,
        key: &AuditKey,
    ) -> Result<Self, AuditLogError> {
        let sink = JsonlAuditSink::open_keyed(path, key, crate::audit::DEFAULT_EPOCH_LINES)?;
        Ok(self.audit(Arc::new(sink)))
    }

    /// Judge every call's final arguments with this gate (the static script scan), instead of the
    /// default (see [`Executor::new`](super::Executor::new)).
    pub fn script_gate(mut self, gate: Arc<dyn ScriptGate>) -> Self {
        self.script_gate = Some(gate);
        self
    }

    /// Whether the script gate judges calls (default [`ScanMode::On`]). With [`ScanMode::Off`]
    /// the gate is not asked and tools with script arguments run unscanned: only for scripts
    /// confined by other means. Every audit event records the mode.
    pub fn scan(mut self, mode: ScanMode) -> Self {
        self.scan = mode;
        self
    }

    /// Stop a session after this many consecutive failures; `0` disables the budget.
    pub fn error_budget(mut self, n: u32) -> Self {
        self.error_budget = n;
        self
    }

    /// Timeout for tools that declare none.
    pub fn default_timeout(mut self, t: Duration) -> Self {
        self.default_timeout = t;
        self
    }

    /// Output cap (bytes) for tools without their own limit.
    pub fn default_output_cap(mut self, bytes: usize) -> Self {
        self.default_output_cap = bytes;
        self
    }

    /// Limits for one tool, taking precedence over its declaration and the defaults.
    pub fn tool_limits(mut self, tool: impl Into<String>, limits: ToolLimits) -> Self {
        self.tool_limits.insert(tool.into(), limits);
        self
    }

    /// Add a caller-supplied argument transform (run in the order added, before overrides).
    pub fn argument_filter<F>(mut self, f: F) -> Self
    where
        F: Fn(&ToolDecl, &mut Map<String, Value>) -> Result<(), String> + Send + Sync + 'static,
    {
        self.filters.push(Arc::new(f));
        self
    }

    /// Always set `key` to `value` (whatever the model sent) for `tool`, or, with `None`, for
    /// every tool whose schema has a `key` property.
    pub fn override_arg(
        mut self,
        tool: Option<&str>,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        self.overrides.push(ArgRule {
            tool: tool.map(str::to_owned),
            key: key.into(),
            value: value.into(),
        });
        self
    }

    /// Set `key` to `value` when the model left it out (e.g. a default `cwd`), for `tool` or, with
    /// `None`, for every tool whose schema has a `key` property.
    pub fn default_arg(
        mut self,
        tool: Option<&str>,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        self.defaults.push(ArgRule {
            tool: tool.map(str::to_owned),
            key: key.into(),
            value: value.into(),
        });
        self
    }

    /// How many times an approver may edit one call's arguments before the call is refused.
    pub fn max_edit_rounds(mut self, n: u32) -> Self {
        self.max_edit_rounds = n;
        self
    }

    /// Limits for calls given as text ([`CallInput::Text`](super::CallInput::Text)).
    pub fn parse_limits(mut self, limits: ParseLimits) -> Self {
        self.parse_limits = limits;
        self
    }

    /// Read every call's arguments as shaped by `dialect`'s exported schema, whatever its envelope
    /// says, and map them back before validation
    /// ([`Dialect::map_back`](crate::schema::export::Dialect::map_back)). By default each call is
    /// mapped from the dialect of its envelope ([`crate::call::ToolCall::dialect`]): OpenAI calls
    /// as strict OpenAI, the others unchanged.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }

    /// How many concurrency-safe calls of one batch may run at the same time (at least 1).
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = n.max(1);
        self
    }

    /// Output bytes a new session may return in total over all its calls (`None`, the default:
    /// only the per-call cap applies). Output over what remains is cut with a marker.
    pub fn session_output_budget(mut self, bytes: Option<usize>) -> Self {
        self.session_output_budget = bytes;
        self
    }

    /// How much kernel confinement to demand (default [`Mode::Required`]; see
    /// [`crate::sandbox`]): sync handlers run on workers confined to their tool's capability
    /// class, programs started through [`ToolContext::command`](crate::ToolContext::command) in
    /// the sandbox helper. Under `Required` on a kernel without support, tools with script
    /// arguments are refused with `sandbox_unavailable` and in-process handlers run with the
    /// static guards only, after a warning when the executor starts.
    pub fn sandbox(mut self, mode: Mode) -> Self {
        self.sandbox.mode = mode;
        self
    }

    /// The sandbox helper binary (`tool-sandbox-exec`) that confines spawned programs. Default:
    /// the program itself when it called
    /// [`dispatch_helper`](crate::sandbox::dispatch_helper), else `tool-sandbox-exec` next to the
    /// executable (or one directory up); without one, programs are not started
    /// (`sandbox_unavailable`).
    pub fn sandbox_helper(mut self, path: impl Into<PathBuf>) -> Self {
        self.sandbox.helper = Some(path.into());
        self
    }

    /// Run async `#[tool]` handlers confined (default `true`): on a current-thread tokio runtime
    /// per capability class whose thread is confined like the sync workers (their
    /// `spawn_blocking` threads inherit it). A call costs a hand-off to that thread and back,
    /// without a thread wake-up on short handlers (see [`sandbox_spin`](Self::sandbox_spin)).
    ///
    /// All async handlers of one class share that thread: they run concurrently while they
    /// await, but CPU-bound stretches of them run one at a time, and
    /// `tokio::task::block_in_place` (multi-thread runtimes only) panics there; such a handler
    /// is better written sync. `false` runs async handlers on the caller's runtime, unconfined,
    /// and their audit events say `none`. Dynamic tools' handlers always run on the caller's
    /// runtime.
    pub fn sandbox_async(mut self, yes: bool) -> Self {
        self.sandbox.confine_async = yes;
        self
    }

    /// How long a confined worker polls for its next job, and a caller for a sync handler's
    /// result, before either sleeps (default [`DEFAULT_SPIN`](crate::sandbox::DEFAULT_SPIN);
    /// `Duration::ZERO`: never). Spinning trades that much busy CPU per call for no thread
    /// wake-up on short handlers; it happens only while the machine has a core to spare
    /// (`tool_sandbox::spare_core`): when every core has work, both sides sleep at once.
    pub fn sandbox_spin(mut self, spin: Duration) -> Self {
        self.sandbox.spin = spin;
        self
    }

    /// The scheduler slice the confined workers and runtimes ask the kernel for (default
    /// [`DEFAULT_SLICE`](crate::sandbox::DEFAULT_SLICE), the kernel's least; `None`: the
    /// kernel's default). On a core that other work keeps busy, a confined thread woken for a
    /// call then runs at once instead of after that work's slice; a long handler is only
    /// switched more often, its share of the CPU unchanged. Linux 6.12 on; ignored before.
    pub fn sandbox_slice(mut self, slice: Option<Duration>) -> Self {
        self.sandbox.slice = slice;
        self
    }

    /// Confined workers per capability class (default
    /// [`DEFAULT_WORKERS`](crate::sandbox::DEFAULT_WORKERS), at least 1).
    pub fn sandbox_workers(mut self, n: usize) -> Self {
        self.sandbox.workers = n.max(1);
        self
    }

    /// How many sync calls of one tool may hold confined workers at once (default
    /// [`DEFAULT_TOOL_SLOTS`](crate::sandbox::DEFAULT_TOOL_SLOTS), at least 1): a tool stuck
    /// in the kernel exhausts its own slots only; further calls of it wait within their timeout.
    pub fn sandbox_tool_slots(mut self, n: usize) -> Self {
        self.sandbox.tool_slots = n.max(1);
        self
    }

    /// The resource limits of every program a tool starts (default [`ProcessLimits::default`]:
    /// 1 GiB of memory over all of a run's processes, 256 processes, 256 MiB per written file,
    /// 60 CPU seconds). A program that reaches one is stopped, and a handler that fails with it
    /// gets the reason code `resource_limit`.
    ///
    /// [`ProcessLimits::default`]: crate::process::ProcessLimits::default
    pub fn sandbox_limits(mut self, limits: crate::process::ProcessLimits) -> Self {
        self.sandbox.limits = limits;
        self
    }

    /// The resource limits of the programs one tool starts, instead of
    /// [`sandbox_limits`](Self::sandbox_limits)'.
    pub fn sandbox_tool_limits(
        mut self,
        tool: impl Into<String>,
        limits: crate::process::ProcessLimits,
    ) -> Self {
        self.sandbox.tool_limits.insert(tool.into(), limits);
        self
    }
}
