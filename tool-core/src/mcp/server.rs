//! The MCP server: a [`McpBackend`] behind rmcp's `ServerHandler`, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    ClientCapabilities, CompleteRequestParams, CompleteResult, ContentBlock, CreateTaskResult,
    DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, MetaObject, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, ToolsCapability, UnsubscribeRequestParams, UpdateTaskParams,
    TASKS_EXTENSION_ID,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::backend::{McpBackend, McpCallContext, McpCallOutcome};
use super::catalog::Catalog;
use super::elicitation::ElicitationApprover;
use super::headers::check_header_annotations;
use super::http_guard::{check_body, MAX_BODY_BYTES};
use super::input::{known_answers, PeerInput, StatelessInput};
use super::input_required::{
    approval_answer, approval_question, args_hash, supports_form_elicitation, tool_questions,
    AnsweredApprover, ApprovalMark, ApprovalStates, AskingApprover, GrantedApprover, Progress,
    RecordingApprover, MAX_INPUT_ROUNDS, PROMPTS_GET,
};
use super::prompts::{PromptInput, Prompts};
use super::quota::{caller_of, is_stateless, ClientQuotas};
use super::resources::{Resources, Subscriptions};
use super::stdio_guard::guarded;
use super::tasks::{AskingFirstInput, NoApprovalInTask, TaskStore, TaskSupport, TaskTools};

use super::content::call_result;
use super::logging::{level_from_mcp, log_forwarder, request_level, ConnectionLogLevel};
use super::progress::progress_forwarder;
use crate::approval::Approver;
use crate::input::{InputHandler, InputKind};
use crate::reason::ReasonCode;

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake failed.
    #[error("mcp handshake failed: {0}")]
    Handshake(String),
    /// Binding or serving the socket failed.
    #[error("mcp transport: {0}")]
    Io(#[from] std::io::Error),
    /// The service task ended abnormally.
    #[error("mcp service task failed: {0}")]
    Task(String),
    /// What is served is not valid (a tool's `x-mcp-header` declarations); nothing was served.
    #[error("mcp server not started: {0}")]
    Invalid(String),
}

/// An MCP server over a backend. Cheap to clone: one per HTTP session (2025-11-25) or per
/// request (2026-07-28, stateless).
pub struct McpServer<B> {
    backend: Arc<B>,
    /// Signs and checks approval `requestState`s; shared by every connection of this server.
    /// `None` when the process has no random source: approval over input-required results is
    /// then denied.
    states: Option<Arc<ApprovalStates>>,
    /// The level this connection asked for with `logging/setLevel`.
    log_level: ConnectionLogLevel,
    /// Resources and prompts, shared by every connection.
    catalog: Arc<Catalog>,
    /// This connection's resource subscriptions (2025-11-25).
    subscriptions: Arc<Subscriptions>,
    /// The tools served as tasks, and the tasks of every connection.
    tasks: Arc<TaskTools>,
    task_store: Arc<TaskStore>,
}

impl<B> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            backend: Arc::clone(&self.backend),
            states: self.states.clone(),
            log_level: self.log_level.clone(),
            catalog: Arc::clone(&self.catalog),
            subscriptions: Arc::clone(&self.subscriptions),
            tasks: Arc::clone(&self.tasks),
            task_store: Arc::clone(&self.task_store),
        }
    }
}

/// How long a client may keep a `tools/list` result (the list does not change while serving).
const TOOLS_LIST_TTL_MS: u64 = 300_000;

/// The `_meta` and `structuredContent` key that carries a refusal's or failure's reason code.
pub const REASON_CODE_KEY: &str = "reason_code";

/// The `_meta` and `structuredContent` key that carries a tool's own error code
/// ([`ToolError`](crate::outcome::ToolError)), next to [`REASON_CODE_KEY`].
pub const ERROR_CODE_KEY: &str = "error_code";

impl<B: McpBackend> McpServer<B> {
    /// Serve this backend.
    pub fn new(backend: B) -> Self {
        McpServer::from_arc(Arc::new(backend))
    }

    /// Serve a shared backend.
    pub fn from_arc(backend: Arc<B>) -> Self {
        McpServer {
            backend,
            states: signing_states(&ClientQuotas::default()),
            log_level: ConnectionLogLevel::default(),
            catalog: Arc::default(),
            subscriptions: Arc::default(),
            tasks: Arc::default(),
            task_store: Arc::default(),
        }
    }

    /// Bound running tasks and outstanding input-required rounds, server-wide and per client
    /// (defaults: [`ClientQuotas::new`]). Set before serving: it starts the server's tasks and
    /// signing key afresh.
    pub fn with_client_quotas(mut self, quotas: ClientQuotas) -> Self {
        self.task_store = Arc::new(TaskStore::new(quotas));
        self.states = signing_states(&quotas);
        self
    }

    /// Let one client run at most `n` tasks at a time (the other bounds unchanged).
    pub fn with_max_tasks_per_client(self, n: usize) -> Self {
        let quotas = self.task_store.quotas().with_max_tasks_per_client(n);
        self.with_client_quotas(quotas)
    }

    /// Let one client have at most `n` input-required rounds outstanding (the other bounds
    /// unchanged).
    pub fn with_max_pending_per_client(self, n: usize) -> Self {
        let quotas = self.task_store.quotas().with_max_pending_per_client(n);
        self.with_client_quotas(quotas)
    }

    /// Also serve these tools as tasks (the `io.modelcontextprotocol/tasks` extension).
    pub fn with_tasks(mut self, tasks: TaskTools) -> Self {
        self.tasks = Arc::new(tasks);
        self
    }

    /// Also offer these resources (`resources/list`, `resources/read`, templates, subscriptions).
    pub fn with_resources(mut self, resources: Resources) -> Self {
        Arc::make_mut(&mut self.catalog).resources = Some(resources);
        self
    }

    /// Also offer these prompts (`prompts/list`, `prompts/get`).
    pub fn with_prompts(mut self, prompts: Prompts) -> Self {
        Arc::make_mut(&mut self.catalog).prompts = Some(prompts);
        self
    }

    /// Check what is served before serving it: the quotas, every tool's `x-mcp-header`
    /// declarations.
    pub fn check(&self) -> Result<(), ServeError> {
        self.task_store
            .quotas()
            .check()
            .map_err(ServeError::Invalid)?;
        let listed = self.backend.list_tools();
        for name in self.tasks.names() {
            if !listed
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
            {
                return Err(ServeError::Invalid(format!(
                    "tool `{name}` is declared as a task, and no such tool is served"
                )));
            }
        }
        for tool in listed {
            if let Some(schema) = tool.get("inputSchema") {
                check_header_annotations(schema).map_err(|e| {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
                    ServeError::Invalid(format!("tool `{name}`: {e}"))
                })?;
            }
        }
        Ok(())
    }

    /// The server for a new client connection: the backend's per-connection copy, or this one,
    /// with the connection's own log level.
    pub fn for_connection(&self) -> Self {
        match self.backend.for_connection() {
            Some(backend) => McpServer {
                backend: Arc::new(backend),
                states: self.states.clone(),
                log_level: ConnectionLogLevel::default(),
                catalog: Arc::clone(&self.catalog),
                subscriptions: Arc::default(),
                tasks: Arc::clone(&self.tasks),
                task_store: Arc::clone(&self.task_store),
            },
            None => McpServer {
                backend: Arc::clone(&self.backend),
                states: self.states.clone(),
                log_level: ConnectionLogLevel::default(),
                catalog: Arc::clone(&self.catalog),
                subscriptions: Arc::default(),
                tasks: Arc::clone(&self.tasks),
                task_store: Arc::clone(&self.task_store),
            },
        }
    }

    /// The tools, sorted by name (a stable `tools/list` order whatever the backend's).
    fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let mut tools = self
            .backend
            .list_tools()
            .into_iter()
            .map(|v| {
                serde_json::from_value::<Tool>(v).map_err(|e| {
                    ErrorData::internal_error(
                        format!("a tool entry is not a valid MCP tool: {e}"),
                        None,
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(tools)
    }

    /// Run one call with `approver` and `input`, and map the outcome to a result or an error.
    async fn run_call(
        &self,
        name: String,
        args: Map<String, Value>,
        approver: Arc<dyn Approver>,
        input: Option<Arc<dyn InputHandler>>,
        context: &RequestContext<RoleServer>,
    ) -> Result<McpCallOutcome, ErrorData> {
        let mut ctx =
            McpCallContext::new(context.id.to_string(), context.ct.clone()).with_approver(approver);
        if let Some(input) = input {
            ctx = ctx.with_input(input);
        }
        // Log messages only for a request (or, on 2025-11-25, a connection) that asked for them.
        let logs = request_level(context.meta.log_level(), &self.log_level).map(|min| {
            let (sink, flush) = log_forwarder(context.peer.clone(), name.clone(), min);
            ctx = ctx.clone().with_log(sink);
            flush
        });
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (sink, forwarder) = progress_forwarder(context.peer.clone(), token);
            ctx = ctx.clone().with_progress(sink);
            forwarder
        });
        let outcome = self.backend.call_tool(name.clone(), args, ctx).await;
        if let Some(flush) = forwarder {
            // Progress must reach the client before the result does.
            flush.flush().await;
        }
        if let Some(flush) = logs {
            flush.flush().await;
        }
        if outcome == McpCallOutcome::UnknownTool {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                Some(
                    json!({"reason": "unknown_tool", REASON_CODE_KEY: "unknown_tool", "tool": name}),
                ),
            ));
        }
        Ok(outcome)
    }

    /// A 2026-07-28 call: approval and the tool's questions through input-required results.
    async fn call_stateless(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let caps = context.client_capabilities();
        let caller = caller_of(&context);
        let responses = request.input_responses.unwrap_or_default();
        let prior = match (request.request_state.as_deref(), &self.states) {
            (Some(state), Some(states)) => Some(
                states
                    .redeem(state, &name, &args, &caller)
                    .map_err(|r| invalid_params(r.code, r.message))?,
            ),
            (Some(_), None) => {
                return Err(invalid_params(
                    ReasonCode::ApprovalStateInvalid,
                    "this server cannot verify a requestState (no signing key)".into(),
                ))
            }
            (None, _) => None,
        };
        let progress = prior.clone().unwrap_or_default();
        let asking =
            AskingApprover::new(supports_form_elicitation(caps.as_ref()) && self.states.is_some());
        let base: Arc<dyn Approver> = match (&progress.approval, progress.ticket(&name)) {
            (Some(ApprovalMark::Granted { .. }), Some(ticket)) => GrantedApprover::new(ticket),
            (Some(ApprovalMark::Asked { .. }), Some(ticket)) => {
                match approval_answer(Some(&responses)) {
                    Some(Ok(answer)) => AnsweredApprover::new(ticket, answer),
                    Some(Err(e)) => return Err(invalid_params(ReasonCode::MalformedCall, e)),
                    // No answer to the question: ask it again, with a new state.
                    None => asking.clone(),
                }
            }
            _ => asking.clone(),
        };
        let approver = RecordingApprover::new(base);
        let input = Arc::new(StatelessInput::new(
            caps.clone(),
            known_answers(prior.as_ref(), responses),
        ));
        let outcome = self
            .run_call(
                name.clone(),
                args.clone(),
                approver.clone(),
                Some(input.clone()),
                &context,
            )
            .await?;
        let round = input.take_round();
        let next_round = progress.round.saturating_add(1);
        if let (
            Some(asked),
            Some(states),
            McpCallOutcome::Refused {
                code: ReasonCode::ApprovalDenied,
                ..
            },
        ) = (asking.asked(), &self.states, &outcome)
        {
            let next = Progress {
                round: next_round,
                approval: Some(ApprovalMark::Asked {
                    args: args_hash(&asked.args),
                }),
                answers: progress.answers.clone(),
                asked: Default::default(),
            };
            if next_round > MAX_INPUT_ROUNDS {
                return Ok(too_many_rounds().into());
            }
            let question = states
                .issue(&name, &args, &caller, &next)?
                .and_then(|state| approval_question(&asked, state));
            return match question {
                Ok(q) => Ok(q.into()),
                Err(e) => Ok(result_of(McpCallOutcome::refused(
                    ReasonCode::ApprovalDenied,
                    format!("the approval question could not be built: {e}"),
                ))
                .into()),
            };
        }
        if matches!(outcome, McpCallOutcome::Ok { .. }) {
            return Ok(result_of(outcome).into());
        }
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        if let (false, Some(states)) = (round.pending.is_empty(), &self.states) {
            if next_round > MAX_INPUT_ROUNDS {
                return Ok(too_many_rounds().into());
            }
            let granted = approver.approved().or(match &progress.approval {
                Some(ApprovalMark::Granted { args }) => Some(args.clone()),
                _ => None,
            });
            let next = Progress::after_round(
                next_round,
                granted.map(|args| ApprovalMark::Granted { args }),
                round.used,
                &round.pending,
            );
            let questions = states
                .issue(&name, &args, &caller, &next)?
                .and_then(|state| tool_questions(&round.pending, state));
            return Ok(match questions {
                Ok(q) => q.into(),
                Err(e) => result_of(McpCallOutcome::failed(
                    ReasonCode::InputLimitExceeded,
                    format!("the tool's questions could not be asked: {e}"),
                ))
                .into(),
            });
        }
        Ok(result_of(outcome).into())
    }
}

impl<B: McpBackend> McpServer<B> {
    /// Start `name` as a task: the call runs in the background, the client gets the task.
    fn start_task(
        &self,
        name: String,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let started = self
            .task_store
            .create(&caller_of(context), context.client_capabilities())?;
        let input = started.input.bound(Arc::clone(&self.task_store));
        let ctx = McpCallContext::new(format!("task-{}", started.id), started.cancel)
            .with_approver(Arc::new(NoApprovalInTask))
            .with_input(input);
        let backend = Arc::clone(&self.backend);
        let done = self.task_store.finisher(&started.id);
        tokio::spawn(async move {
            let outcome = backend.call_tool(name.clone(), args, ctx).await;
            done.finish(task_result(&name, outcome));
        });
        Ok(started.created)
    }

    /// A task of a tool that asks first: the call runs as a task at once, and answers with it as
    /// soon as the tool's first questions are answered (or it ends); a call that ended waiting
    /// for them was no task: it answers with an input-required result, as a plain call would.
    async fn start_task_asking_first(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let caller = caller_of(&context);
        let responses = request.input_responses.unwrap_or_default();
        let Some(states) = &self.states else {
            return Err(invalid_params(
                ReasonCode::ApprovalStateInvalid,
                "this server cannot sign a requestState (no signing key)".into(),
            ));
        };
        let prior = match request.request_state.as_deref() {
            Some(state) => Some(
                states
                    .redeem(state, &name, &args, &caller)
                    .map_err(|r| invalid_params(r.code, r.message))?,
            ),
            None => None,
        };
        let caps = context.client_capabilities();
        let before = Arc::new(StatelessInput::new(
            caps.clone(),
            known_answers(prior.as_ref(), responses),
        ));
        let started = self.task_store.create(&caller, caps)?;
        let in_task = started.input.bound(Arc::clone(&self.task_store));
        let (input, gate) = AskingFirstInput::new(Arc::clone(&before), in_task);
        let ctx = McpCallContext::new(format!("task-{}", started.id), started.cancel.clone())
            .with_approver(Arc::new(NoApprovalInTask))
            .with_input(input);
        let (done_tx, done) = oneshot::channel::<()>();
        let backend = Arc::clone(&self.backend);
        let finisher = self.task_store.finisher(&started.id);
        let tool = name.clone();
        let call_args = args.clone();
        tokio::spawn(async move {
            let outcome = backend.call_tool(tool.clone(), call_args, ctx).await;
            finisher.finish(task_result(&tool, outcome));
            let _ = done_tx.send(());
        });
        // The gate's sender is dropped with the call's input when the call ends: only a gate
        // that was opened makes the call a task here.
        tokio::select! {
            Ok(()) = gate => return Ok(started.created.into()),
            _ = done => {}
        }
        let round = before.take_round();
        let no_task =
            round.invalid.is_some() || round.missing.is_some() || !round.pending.is_empty();
        if !no_task {
            return Ok(started.created.into());
        }
        self.task_store.remove(&started.id);
        started.cancel.cancel();
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        let next_round = prior.as_ref().map_or(0, |p| p.round).saturating_add(1);
        if next_round > MAX_INPUT_ROUNDS {
            return Ok(too_many_rounds().into());
        }
        let next = Progress::after_round(next_round, None, round.used, &round.pending);
        Ok(states
            .issue(&name, &args, &caller, &next)?
            .and_then(|state| tool_questions(&round.pending, state))
            .map_or_else(
                |e| {
                    result_of(McpCallOutcome::failed(
                        ReasonCode::InputLimitExceeded,
                        format!("the tool's questions could not be asked: {e}"),
                    ))
                    .into()
                },
                Into::into,
            ))
    }

    /// A 2026-07-28 `prompts/get`: the prompt's questions through input-required results, its
    /// state bound to the prompt, its arguments and the caller.
    async fn prompt_stateless(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let args = request.arguments.clone().unwrap_or_default();
        let caller = caller_of(&context);
        let responses = request.input_responses.take().unwrap_or_default();
        let prior = match (request.request_state.take(), &self.states) {
            (Some(state), Some(states)) => Some(
                states
                    .redeem_for(&state, PROMPTS_GET, &name, &args, &caller)
                    .map_err(|r| invalid_params(r.code, r.message))?,
            ),
            (Some(_), None) => {
                return Err(invalid_params(
                    ReasonCode::ApprovalStateInvalid,
                    "this server cannot verify a requestState (no signing key)".into(),
                ))
            }
            (None, _) => None,
        };
        let input = Arc::new(StatelessInput::new(
            context.client_capabilities(),
            known_answers(prior.as_ref(), responses),
        ));
        let handler: Arc<dyn InputHandler> = input.clone();
        let built = self
            .catalog
            .get_prompt(
                &request,
                PromptInput::new(Some(handler), context.ct.clone()),
            )
            .await;
        let error = match built {
            Ok(result) => return Ok(result.into()),
            Err(e) => e,
        };
        let round = input.take_round();
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        let (false, Some(states)) = (round.pending.is_empty(), &self.states) else {
            return Err(error);
        };
        let next_round = prior.map_or(0, |p| p.round).saturating_add(1);
        if next_round > MAX_INPUT_ROUNDS {
            return Err(invalid_params(
                ReasonCode::InputLimitExceeded,
                format!("the prompt asked for input in more than {MAX_INPUT_ROUNDS} rounds"),
            ));
        }
        let next = Progress::after_round(next_round, None, round.used, &round.pending);
        states
            .issue_for(PROMPTS_GET, &name, &args, &caller, &next)?
            .and_then(|state| tool_questions(&round.pending, state))
            .map(Into::into)
            .map_err(|e| {
                invalid_params(
                    ReasonCode::InputLimitExceeded,
                    format!("the prompt's questions could not be asked: {e}"),
                )
            })
    }
}

/// What a task's call came to: its tool result (also a refusal or a tool error: `isError`), or
/// a protocol error (an unknown tool; a panic, the server's failure rather than the tool's
/// answer).
fn task_result(name: &str, outcome: McpCallOutcome) -> Result<JsonObject, ErrorData> {
    match outcome {
        McpCallOutcome::UnknownTool => Err(ErrorData::invalid_params(
            format!("unknown tool `{name}`"),
            Some(json!({REASON_CODE_KEY: ReasonCode::UnknownTool, "tool": name})),
        )),
        McpCallOutcome::Failed {
            code: ReasonCode::Panicked,
            message,
            ..
        } => Err(ErrorData::internal_error(
            format!("{}: {message}", ReasonCode::Panicked),
            Some(json!({REASON_CODE_KEY: ReasonCode::Panicked})),
        )),
        other => serde_json::to_value(result_of(other))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
            .map(|v| v.as_object().cloned().unwrap_or_default()),
    }
}

/// The signing key of a server with these bounds on outstanding rounds; `None` (approval over
/// input-required results denied) without a random source.
fn signing_states(quotas: &ClientQuotas) -> Option<Arc<ApprovalStates>> {
    match ApprovalStates::new(quotas) {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => {
            tracing::warn!(error = %e, "approval through input-required results is off");
            None
        }
    }
}

/// A JSON-RPC invalid-params error carrying `code` as data.
fn invalid_params(code: ReasonCode, message: String) -> ErrorData {
    ErrorData::invalid_params(
        format!("{code}: {message}"),
        Some(json!({REASON_CODE_KEY: code})),
    )
}

/// The `-32021` error for a question of a kind the request's client did not declare.
fn missing_capability(kind: InputKind) -> ErrorData {
    let mut required = Map::new();
    required.insert(kind.capability().to_owned(), json!({}));
    let mut e = ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{}: the tool asks for {kind} input, and the request's client capabilities do not \
             declare `{}`",
            ReasonCode::InputUnavailable,
            kind.capability()
        ),
        None,
    );
    e.data = Some(json!({
        "requiredCapabilities": required,
        REASON_CODE_KEY: ReasonCode::InputUnavailable,
    }));
    e
}

/// The refusal of a call that asked more rounds than allowed.
fn too_many_rounds() -> CallToolResult {
    refusal_result(
        ReasonCode::InputLimitExceeded,
        &format!("the call asked for input in more than {MAX_INPUT_ROUNDS} rounds"),
        None,
    )
}

impl<B: McpBackend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        caps.tools = Some(tools);
        caps.logging = Some(Default::default());
        self.catalog.declare(&mut caps, true);
        if !self.tasks.is_empty() {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        let info = self.backend.server_info();
        ServerConfig::new(caps).with_server_info(Implementation::new(info.name, info.version))
    }

    // `logging/setLevel` (2025-11-25): rmcp marks MCP logging deprecated (SEP-2577).
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(level_from_mcp(request.level));
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = ListToolsResult::with_all_items(self.tools()?);
        if is_stateless(&context) {
            result.ttl_ms = Some(TOOLS_LIST_TTL_MS);
            result.cache_scope = Some(CacheScope::Private);
        }
        Ok(result)
    }

    // The transport checks `Mcp-Param-*` headers against the schema found here (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.backend
            .list_tools()
            .into_iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|t| serde_json::from_value(t).ok())
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        // Stateless clients get no `resources/subscribe` (they would use `subscriptions/listen`).
        self.catalog.declare(&mut info.capabilities, false);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.catalog.list_resources(is_stateless(&context))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.catalog.list_templates(is_stateless(&context))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let catalog = Arc::clone(&self.catalog);
        let stateless = is_stateless(&context);
        // Workspace reads touch the file system: off the async workers.
        tokio::task::spawn_blocking(move || catalog.read(&request, stateless))
            .await
            .map_err(|e| ErrorData::internal_error(format!("resource read failed: {e}"), None))?
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.catalog
            .subscribe(&self.subscriptions, &request.uri, context.peer.clone())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.catalog.unsubscribe(&self.subscriptions, &request.uri)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.catalog.list_prompts(is_stateless(&context))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if is_stateless(&context) {
            return self.prompt_stateless(request, context).await;
        }
        let input: Arc<dyn InputHandler> = Arc::new(PeerInput::new(context.peer.clone()));
        let input = PromptInput::new(Some(input), context.ct.clone());
        self.catalog
            .get_prompt(&request, input)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.catalog.complete(&request)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.task_store
            .get(&request.task_id, &caller_of(&context).id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let responses = request.input_responses.into_iter().collect();
        self.task_store
            .update(&request.task_id, &caller_of(&context).id, responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_store
            .cancel(&request.task_id, &caller_of(&context).id)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(support) = self.tasks.support(&request.name) {
            let declared = context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
            if declared && self.tasks.asks_first(&request.name) && is_stateless(&context) {
                return self.start_task_asking_first(request, context).await;
            }
            if declared {
                let args = request.arguments.unwrap_or_default();
                return self
                    .start_task(request.name.to_string(), args, &context)
                    .map(Into::into);
            }
            if support == TaskSupport::Required {
                let mut e = ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                );
                e.message = format!(
                    "{}: tool `{}` runs only as a task, and the request does not declare the \
                     `{TASKS_EXTENSION_ID}` extension",
                    ReasonCode::InputUnavailable,
                    request.name
                )
                .into();
                return Err(e);
            }
        }
        if is_stateless(&context) {
            return self.call_stateless(request, context).await;
        }
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let approver = Arc::new(ElicitationApprover {
            peer: context.peer.clone(),
        });
        let input: Arc<dyn InputHandler> = Arc::new(PeerInput::new(context.peer.clone()));
        let outcome = self
            .run_call(name, args, approver, Some(input), &context)
            .await?;
        Ok(result_of(outcome).into())
    }
}

/// The tool result for an outcome (not an unknown tool: that is an error). A refusal or failure
/// is `isError: true` with text `CODE: message`, and its reason code as data in
/// `structuredContent` and `_meta` (`{"reason_code": CODE}`, plus `"error_code"` when the tool
/// gave its own).
fn result_of(outcome: McpCallOutcome) -> CallToolResult {
    match outcome {
        McpCallOutcome::Ok { output, content } => call_result(output, &content),
        McpCallOutcome::UnknownTool => {
            refusal_result(ReasonCode::UnknownTool, "unknown tool", None)
        }
        McpCallOutcome::Refused { code, message } => refusal_result(code, &message, None),
        McpCallOutcome::Failed {
            code,
            message,
            error_code,
        } => refusal_result(code, &message, error_code),
    }
}

fn refusal_result(code: ReasonCode, message: &str, error_code: Option<String>) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    let mut data = json!({REASON_CODE_KEY: code, "message": message});
    let mut meta = MetaObject::new();
    meta.0.insert(REASON_CODE_KEY.to_owned(), json!(code));
    if let Some(e) = error_code {
        data[ERROR_CODE_KEY] = json!(e);
        meta.0.insert(ERROR_CODE_KEY.to_owned(), json!(e));
    }
    r.structured_content = Some(data);
    r.meta = Some(meta);
    r
}

/// Serve `backend` over stdin/stdout until the client closes the connection. Each incoming line
/// is checked first: malformed JSON, duplicate keys and non-object `arguments` are answered with
/// their JSON-RPC errors and never reach the server.
pub async fn serve_stdio<B: McpBackend>(backend: B) -> Result<(), ServeError> {
    serve_stdio_server(McpServer::new(backend)).await
}

/// [`serve_stdio`] for a configured server (resources, prompts).
pub async fn serve_stdio_server<B: McpBackend>(server: McpServer<B>) -> Result<(), ServeError> {
    server.check()?;
    let (input, output) = rmcp::transport::stdio();
    let (server_in, server_out, writer) = guarded(input, output);
    let served = match server.serve((server_in, server_out)).await {
        Ok(service) => service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| ServeError::Task(e.to_string())),
        Err(e) => Err(ServeError::Handshake(e.to_string())),
    };
    // The server's end is gone: what it wrote reaches stdout before the process may exit (a
    // client that closes its input right after a request still gets the reply).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), writer).await;
    served
}

/// Serve `backend` over streamable HTTP at `http://ADDR/mcp` until the process ends.
///
/// Requests whose `Host` header is not a loopback name, or whose `Origin` header (when present) is
/// not a loopback origin, are refused (DNS rebinding protection). Clients of revision 2026-07-28
/// are served statelessly; older clients get a session from `initialize` on.
pub async fn serve_http<B: McpBackend>(backend: B, addr: SocketAddr) -> Result<(), ServeError> {
    serve_http_server(McpServer::new(backend), addr).await
}

/// [`serve_http`] for a configured server (resources, prompts).
pub async fn serve_http_server<B: McpBackend>(
    server: McpServer<B>,
    addr: SocketAddr,
) -> Result<(), ServeError> {
    server.check()?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_http_server_on(listener, server, CancellationToken::new()).await
}

/// The origins a browser page may send requests from: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// Serve `backend` over streamable HTTP at `/mcp` on a bound listener until `shutdown` fires.
pub async fn serve_http_on<B: McpBackend>(
    listener: tokio::net::TcpListener,
    backend: B,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    serve_http_server_on(listener, McpServer::new(backend), shutdown).await
}

/// [`serve_http_on`] for a configured server (resources, prompts).
pub async fn serve_http_server_on<B: McpBackend>(
    listener: tokio::net::TcpListener,
    server: McpServer<B>,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    server.check()?;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.for_connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(check_body));
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_carry_their_reason_code_as_data_and_outputs_keep_their_blocks() {
        let r = result_of(McpCallOutcome::Refused {
            code: ReasonCode::ApprovalDenied,
            message: "no".into(),
        });
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content
                .as_ref()
                .and_then(|v| v.get(REASON_CODE_KEY)),
            Some(&json!("approval_denied"))
        );
        let r = result_of(McpCallOutcome::Failed {
            code: ReasonCode::ToolError,
            message: "no entry `k`".into(),
            error_code: Some("not_found".into()),
        });
        for data in [
            r.structured_content.clone().expect("structured"),
            serde_json::to_value(r.meta.clone().expect("meta")).expect("json"),
        ] {
            assert_eq!(data[REASON_CODE_KEY], "tool_error", "{data}");
            assert_eq!(data[ERROR_CODE_KEY], "not_found", "{data}");
        }
        let r = result_of(McpCallOutcome::Ok {
            output: json!({"a": 1}),
            content: Vec::new(),
        });
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
    }
}
