//! Per-call context handed to tools, and the modifiers through which tools change session state.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::guard::path::WorkspacePath;
use crate::input::{
    ask_round, FormAnswer, InputAnswer, InputError, InputHandler, InputKind, InputRequest, Root,
    SampledMessage, Sampling,
};
use crate::process::Command;
use crate::reason::ReasonCode;
use crate::resource::{Resources, State};
use crate::sandbox::call::{CallSandbox, SyncRunner};

/// The cancellation token of calls and batches (re-exported so callers need no extra dependency).
pub use tokio_util::sync::CancellationToken;

/// The key prefix under which file tools record what they did to a file (`file_history/<path>`).
pub const FILE_HISTORY_PREFIX: &str = "file_history/";

/// A typed key into the session state: its name and the type of its value, so the tool that
/// writes an entry and the tool that reads it agree on both.
pub struct StateKey<T> {
    name: Cow<'static, str>,
    _value: PhantomData<fn() -> T>,
}

impl<T> StateKey<T> {
    /// A key with a fixed name.
    pub const fn new(name: &'static str) -> Self {
        StateKey {
            name: Cow::Borrowed(name),
            _value: PhantomData,
        }
    }

    /// A key with a name made at run time (e.g. `memory/<key>`).
    pub fn named(name: impl Into<String>) -> Self {
        StateKey {
            name: Cow::Owned(name.into()),
            _value: PhantomData,
        }
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl<T> Clone for StateKey<T> {
    fn clone(&self) -> Self {
        StateKey {
            name: self.name.clone(),
            _value: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for StateKey<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StateKey").field(&self.name).finish()
    }
}

/// A change to the session state, returned by a tool; the executor merges it in call order.
///
/// Keys are plain strings; by convention a tool namespaces its keys (`file_history/<path>`,
/// `memory/<key>`). Two concurrent calls that set the same key are a conflict.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextModifier {
    entries: BTreeMap<String, Value>,
}

impl ContextModifier {
    /// An empty modifier.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value`. A value that cannot be serialized is stored as `null`.
    pub fn set(&mut self, key: impl Into<String>, value: impl Serialize) -> &mut Self {
        let value = serde_json::to_value(value).unwrap_or(Value::Null);
        self.entries.insert(key.into(), value);
        self
    }

    /// Set a typed entry.
    pub fn put<T: Serialize>(&mut self, key: &StateKey<T>, value: &T) -> &mut Self {
        self.set(key.name(), value)
    }

    /// Builder form of [`ContextModifier::set`].
    pub fn with(mut self, key: impl Into<String>, value: impl Serialize) -> Self {
        self.set(key, value);
        self
    }

    /// The keys this modifier touches, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The entries, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// `true` when the modifier changes nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The session state: what modifiers have put there, read-only for tools.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionState {
    entries: BTreeMap<String, Value>,
}

impl SessionState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The raw value at `key`.
    pub fn get_value(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }

    /// The value at `key`, deserialized; `None` when absent or of another type.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.entries
            .get(key)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// The value of a typed entry; `None` when absent or of another type.
    pub fn read<T: DeserializeOwned>(&self, key: &StateKey<T>) -> Option<T> {
        self.get(key.name())
    }

    /// Every entry, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entries whose key starts with `prefix`, in key order, with the prefix removed.
    pub fn prefixed<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a Value)> {
        self.entries
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .map_while(move |(k, v)| k.strip_prefix(prefix).map(|rest| (rest, v)))
    }

    /// The file history: what file tools recorded per workspace-relative path, in path order.
    pub fn file_history(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.prefixed(FILE_HISTORY_PREFIX)
    }

    /// Apply a modifier (the executor does this; tools only return modifiers).
    pub fn apply(&mut self, modifier: &ContextModifier) {
        for (k, v) in &modifier.entries {
            self.entries.insert(k.clone(), v.clone());
        }
    }
}

/// A progress report from a running tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// The call that reports.
    pub call_id: String,
    /// Work done so far.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A short human-readable message.
    pub message: Option<String>,
}

/// Where progress reports go (a UI callback, a channel, an MCP notification).
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// A progress sink that queues reports, in the order they are made, for a receiver to stream
/// (reports made after the receiver is dropped are discarded).
pub fn progress_channel() -> (ProgressSink, tokio::sync::mpsc::UnboundedReceiver<Progress>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink: ProgressSink = Arc::new(move |p| {
        // A closed receiver means nobody listens any more, which is allowed.
        let _ = tx.send(p);
    });
    (sink, rx)
}

/// How severe a log message is: the syslog levels (RFC 5424) MCP uses, least severe first, so
/// `a >= b` reads "`a` is at least as severe as `b`".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name as MCP writes it (`debug`, `info`, ..., `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for LogLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown log level `{}`; expected one of: debug, info, notice, warning, error, critical, alert, emergency",
                    s.escape_debug()
                )
            })
    }
}

/// A message a running tool logged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogMessage {
    /// The call that logged it.
    pub call_id: String,
    /// How severe it is.
    pub level: LogLevel,
    /// The message.
    pub message: String,
}

/// Where a call's log messages go, and from which level on: messages below the level are
/// dropped in the tool's context, before anything is built or sent.
#[derive(Clone)]
pub struct LogSink {
    min: LogLevel,
    send: Arc<dyn Fn(LogMessage) + Send + Sync>,
}

impl std::fmt::Debug for LogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogSink")
            .field("min", &self.min)
            .finish_non_exhaustive()
    }
}

impl LogSink {
    /// Messages at `min` or more severe go to `send`.
    pub fn new(min: LogLevel, send: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        LogSink {
            min,
            send: Arc::new(send),
        }
    }

    /// The least severe level that is sent.
    pub fn min_level(&self) -> LogLevel {
        self.min
    }

    /// `true` when a message at `level` is sent.
    pub fn enabled(&self, level: LogLevel) -> bool {
        level >= self.min
    }

    /// Send a message if its level is enabled.
    pub fn send(&self, message: LogMessage) {
        if self.enabled(message.level) {
            (self.send)(message);
        }
    }
}

/// A log sink that queues messages at `min` and above, in the order they are logged, for a
/// receiver to stream (messages logged after the receiver is dropped are discarded).
pub fn log_channel(min: LogLevel) -> (LogSink, tokio::sync::mpsc::UnboundedReceiver<LogMessage>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = LogSink::new(min, move |m| {
        let _ = tx.send(m);
    });
    (sink, rx)
}

/// Everything a tool may know about the call it serves. One per call, never shared or global.
#[derive(Clone)]
pub struct ToolContext {
    // Shared with the session, the in-flight list and the executor: cloned per call, not copied.
    session_id: Arc<str>,
    call_id: Arc<str>,
    workspace: Arc<Path>,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    log: Option<LogSink>,
    state: Arc<SessionState>,
    output_budget: Option<usize>,
    // A call has a handful of path arguments at most: a list searched in order beats a map.
    paths: Vec<(String, WorkspacePath)>,
    // The call's confinement (its tool's class, deadline and record); `None` outside an executor.
    sandbox: Option<Arc<CallSandbox>>,
    // The executor's resources, for `State<T>` parameters.
    resources: Option<Arc<Resources>>,
    // Who answers the tool's questions; `None`: nobody (every question is refused).
    input: Option<Arc<dyn InputHandler>>,
    // What the call's questions came to, shared by the context's clones and the run step.
    input_tally: Arc<InputTally>,
    // The runtime the input handler was set on: a sync handler's questions are driven there.
    input_runtime: Option<tokio::runtime::Handle>,
}

/// The questions one call asked: how many, and the reason code of the last that failed (the
/// call's code when the tool then fails).
#[derive(Debug, Default)]
pub(crate) struct InputTally {
    asked: std::sync::atomic::AtomicUsize,
    fault: std::sync::Mutex<Option<ReasonCode>>,
}

impl InputTally {
    /// The reason code of the last question that failed, if any.
    pub(crate) fn fault(&self) -> Option<ReasonCode> {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, code: ReasonCode) {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(code);
    }
}

/// The one answer of a one-form round.
fn only_form(mut answers: Vec<InputAnswer>) -> Result<FormAnswer, InputError> {
    match answers.pop() {
        Some(InputAnswer::Form(a)) => Ok(a),
        _ => Err(InputError::Invalid("the answer is not a form's".into())),
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
            .field("workspace", &self.workspace)
            .field("output_budget", &self.output_budget)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for one call. The executor builds these; tests may too.
    pub fn new(
        session_id: impl Into<String>,
        call_id: impl Into<String>,
        workspace: impl Into<PathBuf>,
    ) -> Self {
        ToolContext::for_call(
            Arc::from(session_id.into()),
            Arc::from(call_id.into()),
            Arc::from(workspace.into()),
            CancellationToken::new(),
            Arc::new(SessionState::new()),
        )
    }

    /// The executor's constructor: everything shared is passed in, nothing is made only to be
    /// replaced.
    pub(crate) fn for_call(
        session_id: Arc<str>,
        call_id: Arc<str>,
        workspace: Arc<Path>,
        cancel: CancellationToken,
        state: Arc<SessionState>,
    ) -> Self {
        ToolContext {
            session_id,
            call_id,
            workspace,
            cancel,
            progress: None,
            log: None,
            state,
            output_budget: None,
            paths: Vec::new(),
            sandbox: None,
            resources: None,
            input: None,
            input_tally: Arc::default(),
            input_runtime: None,
        }
    }

    /// The call's confinement (set by the executor's run step).
    pub(crate) fn with_sandbox(mut self, sandbox: Option<Arc<CallSandbox>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The resources `State<T>` parameters are filled from (the executor sets its own; a test
    /// that calls a handler directly sets them here).
    pub fn with_resources(mut self, resources: Arc<Resources>) -> Self {
        self.resources = Some(resources);
        self
    }

    /// The resource of type `T`, for a `State<T>` parameter (used by `#[tool]`-generated code).
    pub(crate) fn resource<T: Clone + Send + Sync + 'static>(&self) -> Option<State<T>> {
        self.resources.as_deref()?.get::<T>()
    }

    /// Where a sync handler of this call runs (used by `#[tool]`-generated code).
    pub(crate) fn sync_runner(&self) -> SyncRunner {
        SyncRunner(self.sandbox.clone())
    }

    /// A program to start confined to this call's declaration: the workspace (read-only for
    /// `safe`/`read_only` tools), no network unless the tool is `open_world`, its own PID
    /// namespace, rlimits, a cleared environment, the call's timeout and cancellation. See
    /// [`crate::process`].
    pub fn command(&self, program: impl Into<String>) -> Command {
        Command::new(program.into(), self.sandbox.clone(), self.cancel.clone())
    }

    /// Answer the tool's questions here (see [`ToolContext::ask`]).
    pub fn with_input(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input = Some(handler);
        self.input_runtime = tokio::runtime::Handle::try_current().ok();
        self
    }

    /// What this call's questions came to (for the run step).
    pub(crate) fn input_tally(&self) -> Arc<InputTally> {
        Arc::clone(&self.input_tally)
    }

    /// Use this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = token;
        self
    }

    /// Send progress reports here.
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Send log messages here (see [`ToolContext::log`]).
    pub fn with_log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// A read-only snapshot of the session state.
    pub fn with_state(mut self, state: Arc<SessionState>) -> Self {
        self.state = state;
        self
    }

    /// The remaining output budget in bytes.
    pub fn with_output_budget(mut self, budget: Option<usize>) -> Self {
        self.output_budget = budget;
        self
    }

    /// Guarded paths, by argument name (set by the executor after the path guard).
    pub(crate) fn with_paths(mut self, paths: Vec<(String, WorkspacePath)>) -> Self {
        self.paths = paths;
        self
    }

    /// The session this call belongs to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// This call's id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The workspace root (absolute, canonical).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The cancellation token; long-running tools should check it or select on it.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// `true` once the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Report progress (ignored when nobody listens).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                call_id: self.call_id.to_string(),
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Log a message about this call. It goes only where the caller asked for messages at this
    /// level or a more severe one: over MCP, as a `notifications/message` to the request that
    /// set `logLevel` in its `_meta` (or, for a 2025-11-25 client, after `logging/setLevel`);
    /// on the command line, to stderr. Nobody asked: nothing is sent, and nothing is built.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if let Some(sink) = self.log.as_ref().filter(|s| s.enabled(level)) {
            sink.send(LogMessage {
                call_id: self.call_id.to_string(),
                level,
                message: message.into(),
            });
        }
    }

    /// `true` when questions of this kind can be asked: there is an input handler, and (over
    /// MCP) the client declared the capability. A tool that can do without the input checks
    /// this first; asking anyway is refused with `input_unavailable`.
    pub fn can_ask(&self, kind: InputKind) -> bool {
        self.input.as_ref().is_some_and(|h| h.supports(kind))
    }

    /// Ask one round of questions (see [`crate::input`]), each under an id of the tool's
    /// choosing; the answers come back in order. Over a stateless MCP request the first call
    /// ends with [`InputError::Pending`] (return it, e.g. with `?`): the call runs again from
    /// the start once the client answers, and then this returns the answers. Ask before acting.
    pub async fn ask(
        &self,
        requests: Vec<(String, InputRequest)>,
    ) -> Result<Vec<InputAnswer>, InputError> {
        let result = self.ask_checked(&requests).await;
        if let Err(e) = &result {
            self.input_tally.record(e.code());
        }
        result
    }

    async fn ask_checked(
        &self,
        requests: &[(String, InputRequest)],
    ) -> Result<Vec<InputAnswer>, InputError> {
        ask_round(
            self.input.as_deref(),
            &self.input_tally.asked,
            &self.cancel,
            requests,
            "call",
        )
        .await
    }

    /// [`ToolContext::ask`] for a **sync** handler: blocks the handler's thread (its confined
    /// worker, or the blocking pool) until the answers come, with the same checks, limits,
    /// cancellation and reason codes. The questions travel on the runtime the executor runs
    /// on. Never call it from an async handler (it would block a runtime thread, and tokio
    /// refuses with a panic, which the executor reports as `panicked`): use `ask` there.
    pub fn ask_blocking(
        &self,
        requests: Vec<(String, InputRequest)>,
    ) -> Result<Vec<InputAnswer>, InputError> {
        match &self.input_runtime {
            Some(rt) => rt.block_on(self.ask(requests)),
            None => futures::executor::block_on(self.ask(requests)),
        }
    }

    /// [`ToolContext::elicit`] for a sync handler (see [`ToolContext::ask_blocking`]).
    pub fn elicit_blocking(
        &self,
        id: impl Into<String>,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<FormAnswer, InputError> {
        only_form(self.ask_blocking(vec![(id.into(), InputRequest::form(message, schema))])?)
    }

    /// Ask the user to fill in a form (`schema`: an object of primitive properties).
    pub async fn elicit(
        &self,
        id: impl Into<String>,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<FormAnswer, InputError> {
        only_form(
            self.ask(vec![(id.into(), InputRequest::form(message, schema))])
                .await?,
        )
    }

    /// Ask the caller's model for a message.
    pub async fn sample(
        &self,
        id: impl Into<String>,
        sampling: Sampling,
    ) -> Result<SampledMessage, InputError> {
        let mut answers = self
            .ask(vec![(id.into(), InputRequest::sample(sampling))])
            .await?;
        match answers.pop() {
            Some(InputAnswer::Message(m)) => Ok(m),
            _ => Err(InputError::Invalid("the answer is not a message".into())),
        }
    }

    /// Ask for the caller's roots.
    pub async fn list_roots(&self, id: impl Into<String>) -> Result<Vec<Root>, InputError> {
        let mut answers = self.ask(vec![(id.into(), InputRequest::roots())]).await?;
        match answers.pop() {
            Some(InputAnswer::Roots(r)) => Ok(r),
            _ => Err(InputError::Invalid(
                "the answer is not a list of roots".into(),
            )),
        }
    }

    /// `true` when a message at `level` would be sent (to skip building an expensive one).
    pub fn log_enabled(&self, level: LogLevel) -> bool {
        self.log.as_ref().is_some_and(|s| s.enabled(level))
    }

    /// The session state as it was when this call started.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// Output bytes this call may still produce, when a budget is set.
    pub fn output_budget(&self) -> Option<usize> {
        self.output_budget
    }

    /// The guarded path for a declared path argument.
    pub fn path_arg(&self, name: &str) -> Option<&WorkspacePath> {
        self.paths
            .iter()
            .find_map(|(n, p)| (n == name).then_some(p))
    }
}
