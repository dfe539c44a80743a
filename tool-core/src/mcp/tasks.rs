//! Long-running tools served as tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663).
//!
//! An application declares which tools support tasks ([`TaskTools`]): `optional` (a task when
//! the request declares the extension, a plain call otherwise) or `required` (a request without
//! the extension is refused with `-32021`, naming the extension). A `tools/call` of such a tool
//! from a client that declared the extension (for its session, or in the request's `_meta`)
//! answers at once with a `CreateTaskResult`; the call runs in the background through the same
//! backend (the executor's whole pipeline) and the client polls `tasks/get`, answers the tool's
//! questions with `tasks/update` and may `tasks/cancel`.
//!
//! Task ids are minted by the server (128 random bits, hex) and never taken from the client: an
//! id in a `tasks/*` request is only looked up, after a shape check, and only among the tasks of
//! the same caller; anything else is `-32602`. The store is bounded ([`MAX_TASKS`] by default): a
//! task is kept for [`TASK_TTL`] after it was created, then dropped; when the store is full the
//! oldest finished task makes room, and with none finished a new task is refused. Below that bound
//! each client runs at most its quota of tasks at a time ([`super::quota`]), so one client cannot
//! fill the store for the others. Cancelling a task
//! fires its call's cancellation (the executor stops the tool; `ToolContext::cancellation`
//! fires), and the task is `cancelled` from then on, whatever the call still returns.
//!
//! A question the tool asks inside a task ([`crate::input`]) parks the task in `input_required`
//! with the question under its id in `inputRequests`; `tasks/update` delivers answers (checked
//! against their questions, as everywhere), a partial update leaves the other questions pending,
//! and the call resumes when all are answered. A tool declared with
//! [`TaskTools::with_tool_asking_first`] asks its first questions before it is a task: over a
//! stateless request they travel in input-required results (signed, single-use
//! `requestState`), and the retry that answers them becomes the task (SEP-2663's composition
//! with SEP-2322). Approval is not asked inside a task: a call that
//! needs it is denied (the client can call the tool without the extension to be asked).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, InputRequest as McpInputRequest,
    InputRequests, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tokio::sync::{oneshot, Notify};
use tokio_util::sync::CancellationToken;

use super::input::{declares, StatelessInput};
pub use super::quota::MAX_TASKS;
use super::quota::{server_full, Caller, ClientQuotas, Ledger, Slot};
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::input::{InputAnswer, InputError, InputHandler, InputKind, InputRequest};
use crate::reason::ReasonCode;

mod tools;

pub use tools::{TaskSupport, TaskTools};

/// How long a task is kept after it was created.
pub const TASK_TTL: Duration = Duration::from_secs(600);

/// The polling interval suggested to clients.
const POLL_INTERVAL_MS: u64 = 250;

/// Longest task id accepted in a request (the server's own ids are 32 hex digits).
const MAX_TASK_ID_LEN: usize = 64;

/// Where a task stands.
#[derive(Debug, Clone)]
enum State {
    Working,
    InputRequired,
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

impl State {
    fn is_terminal(&self) -> bool {
        matches!(
            self,
            State::Completed(_) | State::Failed(_) | State::Cancelled
        )
    }
}

/// The questions a task waits on, and the answers delivered so far.
#[derive(Debug, Default)]
struct Questions {
    /// Unanswered: id → the MCP input request and the question.
    pending: BTreeMap<String, (Value, InputRequest)>,
    /// Delivered and not yet taken by the call.
    answers: BTreeMap<String, Value>,
}

struct Entry {
    /// Who created it (the hash of the `Authorization` header, empty without one).
    owner: String,
    created: Instant,
    created_at: String,
    updated_at: String,
    state: State,
    cancel: CancellationToken,
    questions: Arc<Mutex<Questions>>,
    wake: Arc<Notify>,
    /// Notified at every change, for the replica that publishes it to a fleet.
    changed: Arc<Notify>,
    /// Its place in its client's quota while it runs; dropped when it ends.
    slot: Option<Slot>,
}

/// The tasks of one server, shared by all its connections.
pub(super) struct TaskStore {
    entries: Mutex<HashMap<String, Entry>>,
    quotas: ClientQuotas,
    running: Arc<Ledger>,
}

impl Default for TaskStore {
    fn default() -> Self {
        TaskStore::new(ClientQuotas::default())
    }
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore").finish_non_exhaustive()
    }
}

/// A `-32602` error with a reason code.
fn invalid(code: ReasonCode, message: String) -> ErrorData {
    ErrorData::invalid_params(message, Some(json!({"reason_code": code})))
}

/// The current UTC time as ISO 8601 (`2026-07-28T12:00:00.000Z`), as the audit log writes it.
pub(super) fn now_iso8601() -> String {
    crate::audit::timestamp_now()
}

fn new_task_id() -> Result<String, String> {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(|e| format!("no random source for a task id: {e}"))?;
    Ok(hex::encode(id))
}

/// Refuse a task id that is not of the shape the server mints ids in (before any lookup).
pub(super) fn check_id(id: &str) -> Result<(), ErrorData> {
    let ok = !id.is_empty()
        && id.len() <= MAX_TASK_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(invalid(
            ReasonCode::MalformedCall,
            "the taskId is not a task id this server issues".to_owned(),
        ))
    }
}

pub(super) fn unknown(id: &str) -> ErrorData {
    invalid(
        ReasonCode::InvalidArguments,
        format!("unknown task `{id}` (never created, expired, or another caller's)"),
    )
}

/// What a new task's call is given: its cancellation and its question channel.
pub(super) struct Started {
    pub(super) id: String,
    pub(super) created: CreateTaskResult,
    pub(super) cancel: CancellationToken,
    pub(super) input: Arc<TaskInput>,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl TaskStore {
    /// An empty store with these bounds.
    pub(super) fn new(quotas: ClientQuotas) -> Self {
        TaskStore {
            entries: Mutex::default(),
            running: Ledger::new(quotas.max_tasks_per_client()),
            quotas,
        }
    }

    /// The bounds it was made with.
    pub(super) fn quotas(&self) -> &ClientQuotas {
        &self.quotas
    }

    fn ttl_ms() -> u64 {
        u64::try_from(TASK_TTL.as_millis()).unwrap_or(u64::MAX)
    }

    fn task_of(id: &str, e: &Entry) -> Task {
        let status = match &e.state {
            State::Working => TaskStatus::Working,
            State::InputRequired => TaskStatus::InputRequired,
            State::Completed(_) => TaskStatus::Completed,
            State::Failed(_) => TaskStatus::Failed,
            State::Cancelled => TaskStatus::Cancelled,
        };
        Task::new(id, status, e.created_at.clone(), e.updated_at.clone())
            .with_ttl_ms(Self::ttl_ms())
            .with_poll_interval_ms(POLL_INTERVAL_MS)
    }

    /// Drop expired tasks (their calls are cancelled, their slots given back).
    fn purge(entries: &mut HashMap<String, Entry>, now: Instant) {
        entries.retain(|_, e| {
            let keep = now.duration_since(e.created) < TASK_TTL;
            if !keep {
                e.cancel.cancel();
            }
            keep
        });
    }

    /// A new task for `caller`, working. Refused when the caller runs its quota of tasks
    /// already, or when the store is full of unfinished tasks.
    pub(super) fn create(
        &self,
        caller: &Caller,
        caps: Option<ClientCapabilities>,
    ) -> Result<Started, ErrorData> {
        let id = new_task_id().map_err(|e| ErrorData::internal_error(e, None))?;
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        Self::purge(&mut entries, now);
        // The client's own quota first: a client at it is told so, whatever the store holds.
        let slot = self.running.acquire(&caller.client)?;
        let max = self.quotas.max_tasks();
        if entries.len() >= max {
            let oldest = entries
                .iter()
                .filter(|(_, e)| e.state.is_terminal())
                .min_by_key(|(_, e)| e.created)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    entries.remove(&k);
                }
                None => return Err(server_full("tasks are running", max)),
            }
        }
        let stamp = now_iso8601();
        let entry = Entry {
            owner: caller.id.clone(),
            created: now,
            created_at: stamp.clone(),
            updated_at: stamp,
            state: State::Working,
            cancel: CancellationToken::new(),
            questions: Arc::default(),
            wake: Arc::new(Notify::new()),
            changed: Arc::new(Notify::new()),
            slot: Some(slot),
        };
        let created = CreateTaskResult::new(Self::task_of(&id, &entry));
        let cancel = entry.cancel.clone();
        let input = Arc::new(TaskInput {
            caps,
            questions: Arc::clone(&entry.questions),
            wake: Arc::clone(&entry.wake),
            cancel: cancel.clone(),
            id: id.clone(),
            store: None,
        });
        entries.insert(id.clone(), entry);
        Ok(Started {
            id,
            created,
            cancel,
            input,
        })
    }

    fn with_entry<T>(
        &self,
        id: &str,
        owner: &str,
        f: impl FnOnce(&mut Entry) -> T,
    ) -> Result<T, ErrorData> {
        check_id(id)?;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        Self::purge(&mut entries, Instant::now());
        match entries.get_mut(id) {
            Some(e) if e.owner == owner => Ok(f(e)),
            _ => Err(unknown(id)),
        }
    }

    fn set_state(&self, id: &str, state: State) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = entries.get_mut(id) {
            // A cancelled or finished task stays as it is.
            if !e.state.is_terminal() {
                if state.is_terminal() {
                    e.slot = None;
                }
                e.state = state;
                e.updated_at = now_iso8601();
                e.changed.notify_one();
            }
        }
    }

    /// The call ended: its result (a tool result, also one with `isError`) or a protocol error.
    pub(super) fn finish(&self, id: &str, outcome: Result<JsonObject, ErrorData>) {
        let state = match outcome {
            Ok(result) => State::Completed(result),
            Err(e) => {
                let error = serde_json::to_value(&e)
                    .ok()
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default();
                State::Failed(error)
            }
        };
        self.set_state(id, state);
    }

    /// Forget a task that never became one (its call ended waiting for the first answers).
    pub(super) fn remove(&self, id: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.remove(id);
    }

    /// Make task `id` older by `by` (to expire it without waiting).
    #[cfg(test)]
    fn age(&self, id: &str, by: Duration) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = entries.get_mut(id) {
            e.created = e.created.checked_sub(by).unwrap_or(e.created);
        }
    }

    /// What finishes task `id` when its call ends: with the call's outcome, or, if the call's
    /// future is dropped or panics first, as failed (so the task ends and its slot is given back).
    pub(super) fn finisher(self: &Arc<Self>, id: &str) -> Finisher {
        Finisher {
            store: Arc::clone(self),
            id: id.to_owned(),
            done: false,
        }
    }

    /// `tasks/get`: the task with its status payload.
    pub(super) fn get(&self, id: &str, owner: &str) -> Result<DetailedTask, ErrorData> {
        self.with_entry(id, owner, |e| {
            let payload = match &e.state {
                State::Working => TaskPayload::Working,
                State::InputRequired => {
                    let q = e.questions.lock().unwrap_or_else(|p| p.into_inner());
                    let mut requests = InputRequests::new();
                    for (qid, (request, _)) in &q.pending {
                        if let Ok(r) = serde_json::from_value::<McpInputRequest>(request.clone()) {
                            requests.insert(qid.clone(), r);
                        }
                    }
                    if requests.is_empty() {
                        TaskPayload::Working
                    } else {
                        TaskPayload::InputRequired {
                            input_requests: requests,
                        }
                    }
                }
                State::Completed(result) => TaskPayload::Completed {
                    result: result.clone(),
                },
                State::Failed(error) => TaskPayload::Failed {
                    error: error.clone(),
                },
                State::Cancelled => TaskPayload::Cancelled,
            };
            DetailedTask::new(Self::task_of(id, e), payload)
        })
    }

    /// `tasks/update`: deliver answers to pending questions. Keys that name no pending question
    /// are ignored; answers are checked when the call takes them.
    pub(super) fn update(
        &self,
        id: &str,
        owner: &str,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        let wake = self.with_entry(id, owner, |e| {
            let mut q = e.questions.lock().unwrap_or_else(|p| p.into_inner());
            for (qid, value) in responses {
                if q.pending.remove(&qid).is_some() {
                    q.answers.insert(qid, value);
                }
            }
            e.updated_at = now_iso8601();
            e.changed.notify_one();
            Arc::clone(&e.wake)
        })?;
        wake.notify_waiters();
        Ok(())
    }

    /// `tasks/cancel`: fire the call's cancellation; the task is `cancelled` from now on. A
    /// finished task stays as it is (the same empty acknowledgement).
    pub(super) fn cancel(&self, id: &str, owner: &str) -> Result<(), ErrorData> {
        self.with_entry(id, owner, |e| {
            if !e.state.is_terminal() {
                e.state = State::Cancelled;
                e.updated_at = now_iso8601();
                e.slot = None;
                e.cancel.cancel();
                e.changed.notify_one();
            }
        })
    }

    /// Whether task `id` lives in this replica (running here, or ended here and kept).
    pub(super) fn holds(&self, id: &str) -> bool {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.contains_key(id)
    }

    /// What a fleet's publisher of task `id` waits on: notified at each change; `None` once the
    /// task is gone.
    pub(super) fn changes(&self, id: &str) -> Option<Arc<Notify>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(id).map(|e| Arc::clone(&e.changed))
    }

    /// The ids of the questions task `id` waits on.
    pub(super) fn pending_questions(&self, id: &str) -> Vec<String> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(id).map_or_else(Vec::new, |e| {
            let q = e.questions.lock().unwrap_or_else(|p| p.into_inner());
            q.pending.keys().cloned().collect()
        })
    }
}

/// Finishes its task once (see [`TaskStore::finisher`]).
pub(super) struct Finisher {
    store: Arc<TaskStore>,
    id: String,
    done: bool,
}

impl Finisher {
    /// The call ended with `outcome`.
    pub(super) fn finish(mut self, outcome: Result<JsonObject, ErrorData>) {
        self.done = true;
        self.store.finish(&self.id, outcome);
    }
}

impl Drop for Finisher {
    fn drop(&mut self) {
        if !self.done {
            let e = ErrorData::internal_error("the task's call ended without a result", None);
            self.store.finish(&self.id, Err(e));
        }
    }
}

/// The input of a tool that asks first: until its first round of questions is answered, the
/// questions are the stateless request's (answered from the verified state and the request's
/// answers, or pending for an input-required result); from then on, the task's.
pub(super) struct AskingFirstInput {
    before: Arc<StatelessInput>,
    task: Arc<TaskInput>,
    /// Fires when the first round was answered: the call is a task from then on.
    gate: Mutex<Option<oneshot::Sender<()>>>,
}

impl AskingFirstInput {
    pub(super) fn new(
        before: Arc<StatelessInput>,
        task: Arc<TaskInput>,
    ) -> (Arc<Self>, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        let input = Arc::new(AskingFirstInput {
            before,
            task,
            gate: Mutex::new(Some(tx)),
        });
        (input, rx)
    }

    fn gate_open(&self) -> bool {
        self.gate
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }
}

impl InputHandler for AskingFirstInput {
    fn supports(&self, kind: InputKind) -> bool {
        self.before.supports(kind)
    }

    fn refused(&self, kind: InputKind) {
        if !self.gate_open() {
            self.before.refused(kind);
        }
    }

    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>> {
        Box::pin(async move {
            if self.gate_open() {
                return self.task.ask(requests).await;
            }
            let answers = self.before.ask(requests).await?;
            if let Some(open) = self.gate.lock().unwrap_or_else(|p| p.into_inner()).take() {
                let _ = open.send(());
            }
            Ok(answers)
        })
    }
}

/// A task's approver: approval is not asked inside a task, so a call that needs it is denied.
pub(super) struct NoApprovalInTask;

impl Approver for NoApprovalInTask {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async {
            ApprovalDecision::Deny {
                reason: "approval is not asked inside a task; call the tool without the tasks \
                         extension to be asked"
                    .into(),
            }
        })
    }
}

/// A task's questions: parked in the task until `tasks/update` answers them all.
pub(super) struct TaskInput {
    caps: Option<ClientCapabilities>,
    questions: Arc<Mutex<Questions>>,
    wake: Arc<Notify>,
    cancel: CancellationToken,
    id: String,
    /// The store whose status to update; set when the task starts.
    store: Option<Arc<TaskStore>>,
}

impl TaskInput {
    /// This input, updating the task's status in `store`.
    pub(super) fn bound(self: Arc<Self>, store: Arc<TaskStore>) -> Arc<Self> {
        Arc::new(TaskInput {
            caps: self.caps.clone(),
            questions: Arc::clone(&self.questions),
            wake: Arc::clone(&self.wake),
            cancel: self.cancel.clone(),
            id: self.id.clone(),
            store: Some(store),
        })
    }

    fn set(&self, state: State) {
        if let Some(store) = &self.store {
            store.set_state(&self.id, state);
        }
    }
}

impl InputHandler for TaskInput {
    fn supports(&self, kind: InputKind) -> bool {
        declares(self.caps.as_ref(), kind)
    }

    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>> {
        Box::pin(async move {
            {
                let mut q = self.questions.lock().unwrap_or_else(|p| p.into_inner());
                for (id, _) in requests {
                    if q.pending.contains_key(id) || q.answers.contains_key(id) {
                        return Err(InputError::BadRequest(format!(
                            "question id `{id}` was asked twice in this task"
                        )));
                    }
                }
                for (id, request) in requests {
                    q.pending
                        .insert(id.clone(), (request.mcp_request(), request.clone()));
                }
            }
            self.set(State::InputRequired);
            loop {
                let woken = self.wake.notified();
                tokio::pin!(woken);
                woken.as_mut().enable();
                let ready = {
                    let q = self.questions.lock().unwrap_or_else(|p| p.into_inner());
                    requests.iter().all(|(id, _)| q.answers.contains_key(id))
                };
                if ready {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => return Err(InputError::Cancelled),
                    _ = &mut woken => {}
                }
            }
            let values: Vec<Value> = {
                let mut q = self.questions.lock().unwrap_or_else(|p| p.into_inner());
                requests
                    .iter()
                    .filter_map(|(id, _)| q.answers.remove(id))
                    .collect()
            };
            self.set(State::Working);
            requests
                .iter()
                .zip(values)
                .map(|((id, request), value)| {
                    request
                        .read_answer(&value)
                        .map_err(|e| InputError::Invalid(format!("inputResponses.{id}: {e}")))
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests;
