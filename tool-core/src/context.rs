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
use crate::process::Command;
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

/// Everything a tool may know about the call it serves. One per call, never shared or global.
#[derive(Clone)]
pub struct ToolContext {
    // Shared with the session, the in-flight list and the executor: cloned per call, not copied.
    session_id: Arc<str>,
    call_id: Arc<str>,
    workspace: Arc<Path>,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    state: Arc<SessionState>,
    output_budget: Option<usize>,
    // A call has a handful of path arguments at most: a list searched in order beats a map.
    paths: Vec<(String, WorkspacePath)>,
    // The call's confinement (its tool's class, deadline and record); `None` outside an executor.
    sandbox: Option<Arc<CallSandbox>>,
    // The executor's resources, for `State<T>` parameters.
    resources: Option<Arc<Resources>>,
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
        ToolContext {
            session_id: Arc::from(session_id.into()),
            call_id: Arc::from(call_id.into()),
            workspace: Arc::from(workspace.into()),
            cancel: CancellationToken::new(),
            progress: None,
            state: Arc::new(SessionState::new()),
            output_budget: None,
            paths: Vec::new(),
            sandbox: None,
            resources: None,
        }
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
            state,
            output_budget: None,
            paths: Vec::new(),
            sandbox: None,
            resources: None,
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
