//! The executor: every call goes parse → lookup → filters → validate → path guard → permissions →
//! script gate → approval → run → outcome + audit, and any step can refuse with a stable reason
//! code. A refused call never reaches the handler.
//!
//! Error budget: every result other than `ok` counts as a failure, refusals included (a model that
//! keeps sending calls that cannot run is stuck as surely as one whose tools keep failing), except
//! `cancelled` (the caller's decision, not the model's) and the budget refusal itself. A success
//! resets the count. When the count reaches the budget, calls are refused with
//! `error_budget_exhausted` until [`Session::reset_budget`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tracing::field::Empty;
use tracing::Instrument;

use crate::approval::{
    risk_allows_session_grant, risk_needs_approval, ApprovalDecision, ApprovalReason,
    ApprovalRequest, ApprovalStatus, Approver,
};
use crate::audit::{timestamp_now, AuditEvent, AuditSink, NoopAuditSink, SafetyAudit};
use crate::call::{parse_call, ParseError, ParseLimits, ToolCall};
use crate::context::{ContextModifier, ToolContext};
use crate::decl::{Risk, ToolDecl};
use crate::guard::path::{PathGuard, WorkspaceError, WorkspacePath};
use crate::outcome::{ReasonCode, ToolOutcome};
use crate::registry::{RegisteredTool, Registry};

mod batch;
mod gate;
mod options;
mod session;

pub use batch::BatchOptions;
pub use gate::{GateAudit, GateDecision, GateRiskLevel, GateVerdict, ScriptGate};
pub use options::CallOptions;
pub use session::Session;

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
struct ArgRule {
    tool: Option<String>,
    key: String,
    value: Value,
}

impl ArgRule {
    fn applies(&self, decl: &ToolDecl) -> bool {
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

/// How an [`Executor`] enforces declarations: the workspace, who approves, where audit goes,
/// limits and trusted argument rules. The conservative defaults: no approver (deny anything that
/// needs approval), no audit, no script gate (refuse tools with script arguments), budget
/// [`DEFAULT_ERROR_BUDGET`], timeout [`DEFAULT_TIMEOUT`], output cap [`DEFAULT_OUTPUT_CAP`],
/// batch concurrency [`DEFAULT_MAX_CONCURRENCY`], no session-wide output budget.
#[derive(Clone)]
pub struct ExecutorConfig {
    workspace: PathBuf,
    approver: Option<Arc<dyn Approver>>,
    audit: Arc<dyn AuditSink>,
    script_gate: Option<Arc<dyn ScriptGate>>,
    error_budget: u32,
    default_timeout: Duration,
    default_output_cap: usize,
    tool_limits: HashMap<String, ToolLimits>,
    filters: Vec<ArgumentFilter>,
    overrides: Vec<ArgRule>,
    defaults: Vec<ArgRule>,
    max_edit_rounds: u32,
    parse_limits: ParseLimits,
    max_concurrency: usize,
    session_output_budget: Option<usize>,
}

impl std::fmt::Debug for ExecutorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorConfig")
            .field("workspace", &self.workspace)
            .field("approver", &self.approver.is_some())
            .field("script_gate", &self.script_gate.is_some())
            .field("error_budget", &self.error_budget)
            .field("default_timeout", &self.default_timeout)
            .field("default_output_cap", &self.default_output_cap)
            .field("tool_limits", &self.tool_limits)
            .field("filters", &self.filters.len())
            .field("overrides", &self.overrides)
            .field("defaults", &self.defaults)
            .field("max_edit_rounds", &self.max_edit_rounds)
            .field("max_concurrency", &self.max_concurrency)
            .field("session_output_budget", &self.session_output_budget)
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
            audit: Arc::new(NoopAuditSink),
            script_gate: None,
            error_budget: DEFAULT_ERROR_BUDGET,
            default_timeout: DEFAULT_TIMEOUT,
            default_output_cap: DEFAULT_OUTPUT_CAP,
            tool_limits: HashMap::new(),
            filters: Vec::new(),
            overrides: Vec::new(),
            defaults: Vec::new(),
            max_edit_rounds: DEFAULT_MAX_EDIT_ROUNDS,
            parse_limits: ParseLimits::default(),
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            session_output_budget: None,
        }
    }

    /// Ask this approver when a call needs approval.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Send one audit event per call here.
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = sink;
        self
    }

    /// Judge every call's final arguments with this gate (the static script scan).
    pub fn script_gate(mut self, gate: Arc<dyn ScriptGate>) -> Self {
        self.script_gate = Some(gate);
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

    /// Limits for [`Executor::execute_text`].
    pub fn parse_limits(mut self, limits: ParseLimits) -> Self {
        self.parse_limits = limits;
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
}

/// The executor could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorError {
    /// The workspace root does not exist or is not a directory.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

/// The three ways a call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The handler ran and reported success.
    Ok,
    /// The handler never ran.
    Refused,
    /// The handler ran (or started) and failed: error outcome, timeout, panic, cancellation.
    Failed,
}

impl CallStatus {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Refused => "refused",
            CallStatus::Failed => "failed",
        }
    }
}

/// What one call came to.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The tool, when the call parsed.
    pub tool: Option<String>,
    /// The call id (the provider's, or one the executor made up).
    pub call_id: String,
    /// How the call ended.
    pub status: CallStatus,
    /// Why it was refused or failed; `None` when `ok`.
    pub code: Option<ReasonCode>,
    /// What went wrong, for the model; `None` when `ok`.
    pub message: Option<String>,
    /// The tool's output (capped); `None` unless `ok`.
    pub output: Option<Value>,
    /// The context change the tool returned, if any.
    pub modifier: Option<ContextModifier>,
    /// `true` when the modifier was merged into the session state.
    pub modifier_applied: bool,
    /// `true` when the output or message was cut at the output cap.
    pub truncated: bool,
    /// How approval went.
    pub approval: ApprovalStatus,
    /// Time from receipt to result.
    pub duration: Duration,
}

impl CallResult {
    /// `true` when the status is `ok`.
    pub fn is_ok(&self) -> bool {
        self.status == CallStatus::Ok
    }
}

/// Runs tool calls of a [`Registry`] under an [`ExecutorConfig`]. Share it behind an `Arc`; it
/// keeps no per-conversation state itself (that lives in [`Session`]s).
pub struct Executor {
    registry: Arc<Registry>,
    guard: PathGuard,
    // The guard's root, shared with every call's context.
    root: Arc<Path>,
    config: ExecutorConfig,
    next_session: AtomicU64,
    next_call: AtomicU64,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("registry", &self.registry)
            .field("workspace", &self.guard.root())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// How a call ended, before it is turned into a [`CallResult`].
enum Verdict {
    Ok {
        output: Value,
        modifier: Option<ContextModifier>,
    },
    Refused(ReasonCode, String),
    Failed(ReasonCode, String),
}

/// What the steps learned about a call, for the result, the audit event and tracing.
struct Record {
    risk: Option<Risk>,
    approval: ApprovalStatus,
    rule_ids: Vec<String>,
    safety: Option<GateAudit>,
    args_sha256: Option<String>,
    truncated: bool,
    options: CallOptions,
}

impl Record {
    fn new() -> Self {
        Record {
            risk: None,
            approval: ApprovalStatus::NotReached,
            rule_ids: Vec::new(),
            safety: None,
            args_sha256: None,
            truncated: false,
            options: CallOptions::default(),
        }
    }
}

/// The tracing span of one call; the outcome fields are recorded when it ends.
fn call_span(session: &Session, tool: Option<&str>, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        "tool.call",
        session.id = %session.id(),
        tool.name = tool.unwrap_or(""),
        tool.call_id = %call_id,
        tool.status = Empty,
        tool.code = Empty,
        tool.approval = Empty,
        tool.safety.rule_ids = Empty,
    )
}

/// Where a running call belongs: its batch (whose cancellation stops it) and where its progress
/// reports go.
#[derive(Default, Clone)]
struct RunEnv {
    parent: Option<tokio_util::sync::CancellationToken>,
    progress: Option<crate::context::ProgressSink>,
}

/// A call that passed steps 3–7.
struct Checked {
    args: Value,
    paths: Vec<(String, WorkspacePath)>,
    review: Option<(String, Vec<String>)>,
}

impl Executor {
    /// Build an executor; the workspace root is canonicalized here and must be a directory.
    pub fn new(registry: Arc<Registry>, config: ExecutorConfig) -> Result<Self, ExecutorError> {
        let guard = PathGuard::new(&config.workspace)?;
        let root = Arc::from(guard.root());
        Ok(Executor {
            registry,
            guard,
            root,
            config,
            next_session: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
        })
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The canonical workspace root.
    pub fn workspace(&self) -> &Path {
        self.guard.root()
    }

    /// Start a session with a fresh id (`session-N`).
    pub fn new_session(&self) -> Arc<Session> {
        let n = self.next_session.fetch_add(1, Ordering::Relaxed);
        Arc::new(Session::new(
            format!("session-{n}"),
            self.config.session_output_budget,
        ))
    }

    /// Start a session with the caller's id (e.g. a conversation id).
    pub fn session_with_id(&self, id: impl Into<String>) -> Arc<Session> {
        Arc::new(Session::new(id.into(), self.config.session_output_budget))
    }

    /// Cancel one in-flight call of `session` (by id), or all of them (`None`).
    pub fn cancel(&self, session: &Session, call_id: Option<&str>) {
        match call_id {
            Some(id) => {
                session.cancel_call(id);
            }
            None => session.cancel_all(),
        }
    }

    /// Parse `text` as one call and execute it; a parse failure is a `malformed_call` refusal.
    pub async fn execute_text(&self, session: &Session, text: &str) -> CallResult {
        let parsed = parse_call(text, &self.config.parse_limits);
        self.execute_parsed(session, parsed, true).await
    }

    /// Execute one call; a context modifier the tool returns is merged into the session state.
    pub async fn execute(&self, session: &Session, call: ToolCall) -> CallResult {
        self.execute_parsed(session, Ok(call), true).await
    }

    /// Execute one call without merging its context modifier (returned in the result), for
    /// callers that merge a batch's modifiers themselves with [`Session::apply_modifier`].
    pub async fn execute_unmerged(&self, session: &Session, call: ToolCall) -> CallResult {
        self.execute_parsed(session, Ok(call), false).await
    }

    /// Execute a parse result: a parse error becomes a `malformed_call` refusal that is audited
    /// and counted like any other.
    pub async fn execute_parsed(
        &self,
        session: &Session,
        parsed: Result<ToolCall, ParseError>,
        merge_modifier: bool,
    ) -> CallResult {
        self.execute_inner(session, parsed, merge_modifier, CallOptions::default())
            .await
    }

    async fn execute_inner(
        &self,
        session: &Session,
        parsed: Result<ToolCall, ParseError>,
        merge_modifier: bool,
        options: CallOptions,
    ) -> CallResult {
        let start = Instant::now();
        let (tool, call_id) = self.identify(&parsed);
        let span = call_span(session, tool.as_deref(), &call_id);
        let mut rec = Record::new();
        rec.options = options;
        let verdict = async {
            if let Some(refused) = self.budget_refusal(session) {
                return refused;
            }
            match parsed {
                Err(e) => Verdict::Refused(e.code(), e.to_string()),
                Ok(call) => self.pipeline(session, &call_id, call, &mut rec).await,
            }
        }
        .instrument(span.clone())
        .await;
        self.finish(
            session,
            tool,
            call_id,
            verdict,
            rec,
            merge_modifier,
            start,
            &span,
        )
    }

    /// The tool name (when parsed) and the call id (the provider's, or a fresh `call-N`).
    fn identify(&self, parsed: &Result<ToolCall, ParseError>) -> (Option<String>, String) {
        let (tool, call_id) = match parsed {
            Ok(call) => (Some(call.name.clone()), call.id.clone()),
            Err(_) => (None, None),
        };
        let call_id =
            call_id.unwrap_or_else(|| numbered_id(self.next_call.fetch_add(1, Ordering::Relaxed)));
        (tool, call_id)
    }

    /// The refusal owed when the session's error budget is spent.
    fn budget_refusal(&self, session: &Session) -> Option<Verdict> {
        let budget = self.config.error_budget;
        (budget > 0 && session.consecutive_failures() >= budget).then(|| {
            Verdict::Refused(
                ReasonCode::ErrorBudgetExhausted,
                format!(
                    "{budget} consecutive calls failed in this session; no more calls run \
                     until the error budget is reset"
                ),
            )
        })
    }

    /// Steps 2–9 for a parsed call.
    async fn pipeline(
        &self,
        session: &Session,
        call_id: &str,
        call: ToolCall,
        rec: &mut Record,
    ) -> Verdict {
        match self.prepare(session, call_id, call, rec).await {
            Ok((tool, checked)) => {
                self.run(session, call_id, tool, checked, rec, &RunEnv::default())
                    .await
            }
            Err(refused) => refused,
        }
    }

    /// Steps 2–8: everything before the handler may start. `Ok` means the call may run as
    /// checked; `Err` is the refusal.
    async fn prepare(
        &self,
        session: &Session,
        call_id: &str,
        call: ToolCall,
        rec: &mut Record,
    ) -> Result<(&RegisteredTool, Checked), Verdict> {
        let Some(tool) = self.registry.get(&call.name) else {
            return Err(Verdict::Refused(
                ReasonCode::UnknownTool,
                format!("no tool named `{}` is registered", call.name),
            ));
        };
        let decl = tool.decl();
        rec.risk = Some(decl.risk);
        let mut args = call.arguments;
        let mut round = 0u32;
        let checked = loop {
            let checked = match self.check(tool, args, rec) {
                Ok(c) => c,
                Err(v) => return Err(v),
            };
            let review = checked.review.is_some();
            if !review && !risk_needs_approval(decl.risk) {
                rec.approval = ApprovalStatus::NotRequired;
                break checked;
            }
            let grant_allowed = !review && risk_allows_session_grant(decl.risk);
            if grant_allowed && session.has_grant(&decl.name) {
                rec.approval = ApprovalStatus::SessionGrant;
                break checked;
            }
            let Some(approver) = rec.options.approver_or(self.config.approver.as_ref()) else {
                rec.approval = ApprovalStatus::NoApprover;
                return Err(match checked.review {
                    Some((summary, _)) => Verdict::Refused(
                        ReasonCode::ReviewRequired,
                        format!("the safety scan asks for human review and no approver is configured: {summary}"),
                    ),
                    None => Verdict::Refused(
                        ReasonCode::ApprovalDenied,
                        format!(
                            "`{}` (risk `{}`) needs approval and no approver is configured",
                            decl.name, decl.risk
                        ),
                    ),
                });
            };
            let request = ApprovalRequest {
                session_id: session.id().to_owned(),
                call_id: call_id.to_owned(),
                tool: decl.name.clone(),
                risk: decl.risk,
                args: checked.args.clone(),
                reason: match &checked.review {
                    Some((summary, rule_ids)) => ApprovalReason::Review {
                        summary: summary.clone(),
                        rule_ids: rule_ids.clone(),
                    },
                    None => ApprovalReason::Risk { risk: decl.risk },
                },
                session_grant_allowed: grant_allowed,
                round,
            };
            let decision = AssertUnwindSafe(approver.decide(&request))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| ApprovalDecision::Deny {
                    reason: "the approver failed".to_owned(),
                });
            match decision {
                ApprovalDecision::Approve => {
                    rec.approval = ApprovalStatus::Approved;
                    break checked;
                }
                ApprovalDecision::ApproveForSession if grant_allowed => {
                    session.grant(&decl.name);
                    rec.approval = ApprovalStatus::ApprovedForSession;
                    break checked;
                }
                ApprovalDecision::ApproveForSession => {
                    rec.approval = ApprovalStatus::Approved;
                    break checked;
                }
                ApprovalDecision::Deny { reason } => {
                    rec.approval = ApprovalStatus::Denied;
                    return Err(Verdict::Refused(
                        ReasonCode::ApprovalDenied,
                        format!("approval denied: {reason}"),
                    ));
                }
                ApprovalDecision::Edit { args: edited } => {
                    round += 1;
                    if round > self.config.max_edit_rounds {
                        rec.approval = ApprovalStatus::EditLimit;
                        return Err(Verdict::Refused(
                            ReasonCode::ApprovalDenied,
                            format!(
                                "the arguments were edited more than {} times",
                                self.config.max_edit_rounds
                            ),
                        ));
                    }
                    match edited {
                        Value::Object(m) => args = m,
                        _ => {
                            return Err(Verdict::Refused(
                                ReasonCode::InvalidArguments,
                                "the edited arguments are not a JSON object".to_owned(),
                            ))
                        }
                    }
                }
            }
        };
        if self.config.audit.is_enabled() {
            rec.args_sha256 = Some(hex::encode(Sha256::digest(crate::schema::canonical_bytes(
                &checked.args,
            ))));
        }
        Ok((tool, checked))
    }

    /// Steps 3–7 on one version of the arguments.
    fn check(
        &self,
        tool: &RegisteredTool,
        mut args: Map<String, Value>,
        rec: &mut Record,
    ) -> Result<Checked, Verdict> {
        let decl = tool.decl();
        let refuse = |code, msg: String| Err(Verdict::Refused(code, msg));

        // 3. filters, then trusted overrides and defaults.
        for f in &self.config.filters {
            if let Err(reason) = f(decl, &mut args) {
                return refuse(ReasonCode::InvalidArguments, reason);
            }
        }
        for rule in self.config.overrides.iter().filter(|r| r.applies(decl)) {
            args.insert(rule.key.clone(), rule.value.clone());
        }
        for rule in self.config.defaults.iter().filter(|r| r.applies(decl)) {
            args.entry(rule.key.clone())
                .or_insert_with(|| rule.value.clone());
        }
        let mut args = Value::Object(args);

        // 4. schema.
        if !tool.validator().is_valid(&args) {
            let found = crate::schema::violations(tool.validator(), &args);
            let list: Vec<String> = found.iter().map(ToString::to_string).collect();
            return refuse(
                ReasonCode::InvalidArguments,
                format!(
                    "the arguments do not match the schema of `{}`: {}",
                    decl.name,
                    list.join("; ")
                ),
            );
        }

        // 5. paths: all of them, then refuse if any is bad.
        let mut paths = Vec::new();
        let mut bad = Vec::new();
        if let Value::Object(map) = &mut args {
            for name in tool.def().guarded_path_args() {
                match map.get_mut(&name) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(raw)) => match self.guard.check(raw) {
                        Ok(wp) => {
                            match wp.as_path().to_str() {
                                // Reuse the argument's buffer for its normalized form.
                                Some(norm) => {
                                    raw.clear();
                                    raw.push_str(norm);
                                }
                                None => *raw = wp.as_path().to_string_lossy().into_owned(),
                            }
                            // A name listed twice is checked twice but kept once: both checks
                            // give the same path.
                            if !paths.iter().any(|(n, _): &(String, _)| *n == name) {
                                paths.push((name, wp));
                            }
                        }
                        Err(e) => bad.push(format!("`{name}`: {e}")),
                    },
                    Some(_) => {
                        return refuse(
                            ReasonCode::InvalidArguments,
                            format!("path argument `{name}` must be a string"),
                        )
                    }
                }
            }
        }
        if !bad.is_empty() {
            return refuse(ReasonCode::PathOutsideWorkspace, bad.join("; "));
        }

        // 6. the tool's own rule.
        if let Some(check) = tool.def().permission_check() {
            let verdict = std::panic::catch_unwind(AssertUnwindSafe(|| check(&args)))
                .unwrap_or_else(|_| Err("the permission check failed".to_owned()));
            if let Err(reason) = verdict {
                return refuse(ReasonCode::PermissionDenied, reason);
            }
        }

        // 7. the script gate; unscanned scripts never run.
        let mut review = None;
        match &self.config.script_gate {
            Some(gate) => {
                let (verdict, audit) =
                    std::panic::catch_unwind(AssertUnwindSafe(|| gate.check_audited(decl, &args)))
                        .unwrap_or_else(|_| {
                            let deny = GateVerdict::Deny {
                                rule_ids: vec!["SCAN-ERROR".to_owned()],
                                message: "the safety scanner failed".to_owned(),
                            };
                            (deny, None)
                        });
                rec.safety = audit;
                match verdict {
                    GateVerdict::Allow => {}
                    GateVerdict::Review { summary, rule_ids } => {
                        rec.rule_ids.clone_from(&rule_ids);
                        review = Some((summary, rule_ids));
                    }
                    GateVerdict::ReviewBlocked { rule_ids, message } => {
                        rec.rule_ids = rule_ids;
                        return refuse(ReasonCode::ReviewRequired, message);
                    }
                    GateVerdict::Deny { rule_ids, message } => {
                        rec.rule_ids = rule_ids;
                        return refuse(ReasonCode::SafetyDenied, message);
                    }
                }
            }
            None if !decl.script_args.is_empty() => {
                return refuse(
                    ReasonCode::SafetyDenied,
                    format!(
                        "`{}` takes scripts and no script scanner is configured",
                        decl.name
                    ),
                );
            }
            None => {}
        }
        Ok(Checked {
            args,
            paths,
            review,
        })
    }

    /// Step 9: run the handler under timeout, cancellation and panic isolation.
    async fn run(
        &self,
        session: &Session,
        call_id: &str,
        tool: &RegisteredTool,
        checked: Checked,
        rec: &mut Record,
        env: &RunEnv,
    ) -> Verdict {
        let decl = tool.decl();
        let limits = self
            .config
            .tool_limits
            .get(&decl.name)
            .copied()
            .unwrap_or_default();
        let timeout = limits
            .timeout
            .or(decl.timeout)
            .unwrap_or(self.config.default_timeout);
        let cap = limits.output_cap.unwrap_or(self.config.default_output_cap);
        let budget = session.output_remaining().map_or(cap, |left| left.min(cap));
        let call_id: Arc<str> = Arc::from(call_id);
        let in_flight = session.begin_call(&call_id, env.parent.as_ref());
        let token = in_flight.token.clone();
        if token.is_cancelled() {
            return Verdict::Refused(
                ReasonCode::Cancelled,
                "the call was cancelled before it started".to_owned(),
            );
        }
        let mut ctx = ToolContext::for_call(
            session.shared_id(),
            call_id,
            Arc::clone(&self.root),
            token.clone(),
            session.state(),
        )
        .with_output_budget(Some(budget))
        .with_paths(checked.paths);
        if let Some(sink) = &env.progress {
            ctx = ctx.with_progress(sink.clone());
        }
        let (ctx, _cancel_link) = rec.options.attach(ctx, &token);
        let handler = tool.def().handler();
        let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(ctx, checked.args))) {
            Ok(Ok(fut)) => fut,
            Ok(Err(e)) => return Verdict::Refused(ReasonCode::InvalidArguments, e.message),
            Err(panic) => {
                return Verdict::Failed(ReasonCode::Panicked, panic_message(panic.as_ref()))
            }
        };
        // The deadline is taken where `tokio::time::timeout` would take it: before the first poll.
        let deadline = tokio::time::Instant::now().checked_add(timeout);
        let mut fut = AssertUnwindSafe(fut).catch_unwind();
        // Cancellation wins over a first poll, as the biased `select!` below has it.
        if token.is_cancelled() {
            return Verdict::Failed(ReasonCode::Cancelled, "the call was cancelled".to_owned());
        }
        // Most handlers finish on their first poll; `timeout` polls the handler before its timer
        // too, so a first poll that is ready gives what the full machinery would, without a
        // timer or a cancellation waiter.
        let outcome = match futures::poll!(&mut fut) {
            std::task::Poll::Ready(r) => Ok(r),
            std::task::Poll::Pending => {
                let timed = async {
                    match deadline {
                        Some(at) => tokio::time::timeout_at(at, fut).await,
                        // Past the clock's range: no timer, as `timeout` does.
                        None => Ok(fut.await),
                    }
                };
                tokio::select! {
                    biased;
                    _ = token.cancelled() => {
                        return Verdict::Failed(
                            ReasonCode::Cancelled,
                            "the call was cancelled".to_owned(),
                        )
                    }
                    r = timed => r,
                }
            }
        };
        drop(in_flight);
        let verdict = match outcome {
            Err(_) => Verdict::Failed(
                ReasonCode::Timeout,
                format!("the call ran longer than {} ms", timeout.as_millis()),
            ),
            Ok(Err(panic)) => Verdict::Failed(ReasonCode::Panicked, panic_message(panic.as_ref())),
            Ok(Ok(ToolOutcome::Error { message })) => {
                Verdict::Failed(ReasonCode::ToolError, message)
            }
            Ok(Ok(ToolOutcome::Ok { modifier, .. }))
                if decl.read_only() && modifier.as_ref().is_some_and(|m| !m.is_empty()) =>
            {
                Verdict::Failed(
                    ReasonCode::ToolError,
                    format!(
                        "`{}` is declared {} and may not change the session context",
                        decl.name, decl.risk
                    ),
                )
            }
            Ok(Ok(ToolOutcome::Ok { output, modifier })) => Verdict::Ok { output, modifier },
        };
        match verdict {
            Verdict::Ok { output, modifier } => {
                let (output, cut) = cap_value(output, cap);
                rec.truncated = cut;
                Verdict::Ok { output, modifier }
            }
            Verdict::Failed(code, message) => {
                let (message, cut) = cap_text(message, cap);
                rec.truncated = cut;
                Verdict::Failed(code, message)
            }
            refused @ Verdict::Refused(..) => refused,
        }
    }

    /// Step 10: build the result, count it against the budget, audit it.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        session: &Session,
        tool: Option<String>,
        call_id: String,
        verdict: Verdict,
        mut rec: Record,
        merge_modifier: bool,
        start: Instant,
        span: &tracing::Span,
    ) -> CallResult {
        // Charged here, in result order, so concurrent calls share the session budget
        // deterministically.
        let verdict = match verdict {
            Verdict::Ok { output, modifier } => {
                let (output, cut) = charge_session_budget(session, output);
                rec.truncated |= cut;
                Verdict::Ok { output, modifier }
            }
            other => other,
        };
        let (status, code, message, output, modifier) = match verdict {
            Verdict::Ok { output, modifier } => {
                (CallStatus::Ok, None, None, Some(output), modifier)
            }
            Verdict::Refused(code, msg) => (CallStatus::Refused, Some(code), Some(msg), None, None),
            Verdict::Failed(code, msg) => (CallStatus::Failed, Some(code), Some(msg), None, None),
        };
        let counted = !matches!(
            code,
            Some(ReasonCode::Cancelled | ReasonCode::ErrorBudgetExhausted)
        );
        if counted {
            session.record(status == CallStatus::Ok);
        }
        let modifier_applied = match &modifier {
            Some(m) if merge_modifier && !m.is_empty() => {
                session.apply_modifier(m);
                true
            }
            _ => false,
        };
        let duration = start.elapsed();
        span.record("tool.status", status.as_str());
        span.record("tool.approval", rec.approval.as_str());
        if let Some(code) = code {
            span.record("tool.code", code.as_str());
        }
        if !rec.rule_ids.is_empty() {
            span.record("tool.safety.rule_ids", rec.rule_ids.join(",").as_str());
        }
        tracing::debug!(parent: span, duration_ms = duration.as_millis() as u64, "tool call finished");
        if self.config.audit.is_enabled() {
            let scanned_findings = !rec.rule_ids.is_empty();
            let event = AuditEvent {
                timestamp: timestamp_now(),
                session: session.id().to_owned(),
                tool: tool.clone(),
                call_id: call_id.clone(),
                status,
                code,
                risk: rec.risk,
                approval: rec.approval,
                rule_ids: rec.rule_ids,
                duration_ms: duration.as_millis().try_into().unwrap_or(u64::MAX),
                args_sha256: rec.args_sha256,
                registry_fingerprint: self.registry.fingerprint().to_owned(),
                truncated: rec.truncated,
                safety: rec.safety.map(|gate| SafetyAudit {
                    gate,
                    blocked: matches!(
                        code,
                        Some(ReasonCode::SafetyDenied | ReasonCode::ReviewRequired)
                    ) || (code == Some(ReasonCode::ApprovalDenied) && scanned_findings),
                    approval: rec.approval,
                }),
            };
            if let Err(e) = self.config.audit.record(&event) {
                tracing::error!(parent: span, error = %e, "the audit event could not be written");
            }
        }
        CallResult {
            tool,
            call_id,
            status,
            code,
            message,
            output,
            modifier,
            modifier_applied,
            truncated: rec.truncated,
            approval: rec.approval,
            duration,
        }
    }
}

/// Which limit cut an output; the marker names it.
#[derive(Clone, Copy)]
enum Limit {
    /// The per-call output cap.
    Call,
    /// What remained of the session's output budget.
    Session,
}

/// The marker appended where output was cut.
fn cut_marker(limit: Limit, shown: usize, total: usize) -> String {
    match limit {
        Limit::Call => format!("\n[output truncated: showing {shown} of {total} bytes]"),
        Limit::Session => format!(
            "\n[output truncated at the session's output budget: showing {shown} of {total} bytes]"
        ),
    }
}

/// Cut text to at most `cap` bytes (on a character boundary) plus the marker.
fn cap_text(text: String, cap: usize) -> (String, bool) {
    cap_text_at(text, cap, Limit::Call)
}

fn cap_text_at(text: String, cap: usize, limit: Limit) -> (String, bool) {
    if text.len() <= cap {
        return (text, false);
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = text[..end].to_owned();
    out.push_str(&cut_marker(limit, end, text.len()));
    (out, true)
}

/// Cap an output: strings are cut; structured output over the cap becomes its cut JSON text
/// (no longer valid JSON, which the marker says).
fn cap_value(value: Value, cap: usize) -> (Value, bool) {
    cap_value_at(value, cap, Limit::Call)
}

fn cap_value_at(value: Value, cap: usize, limit: Limit) -> (Value, bool) {
    match value {
        Value::String(s) => {
            let (s, cut) = cap_text_at(s, cap, limit);
            (Value::String(s), cut)
        }
        other => {
            let text = other.to_string();
            if text.len() <= cap {
                return (other, false);
            }
            let (s, cut) = cap_text_at(text, cap, limit);
            (Value::String(s), cut)
        }
    }
}

/// The bytes an output costs against the session budget.
fn output_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    }
}

/// Charge an output to the session's remaining budget, cutting what does not fit.
fn charge_session_budget(session: &Session, output: Value) -> (Value, bool) {
    let len = output_len(&output);
    let granted = session.take_output(len);
    if granted >= len {
        return (output, false);
    }
    cap_value_at(output, granted, Limit::Session)
}

/// `call-N`, written without the formatting machinery (this runs on every call without an id).
fn numbered_id(n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        // `rest % 10` is a single digit.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut id = String::with_capacity(5 + digits.len() - at);
    id.push_str("call-");
    for &d in &digits[at..] {
        id.push(char::from(d));
    }
    id
}

/// A panic payload as text.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    format!("the tool panicked: {text}")
}

#[cfg(test)]
mod tests {
    use super::numbered_id;

    #[test]
    fn numbered_ids_match_the_formatted_ones() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(numbered_id(n), format!("call-{n}"));
        }
    }
}
