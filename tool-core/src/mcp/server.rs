//! The MCP server: a [`McpBackend`] behind rmcp's `ServerHandler`, over stdio or streamable HTTP.

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    CompleteRequestParams, CompleteResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, ToolsCapability, UnsubscribeRequestParams, UpdateTaskParams,
    TASKS_EXTENSION_ID,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

use super::backend::{McpBackend, McpCallContext, McpCallOutcome};
use super::catalog::Catalog;
use super::elicitation::ElicitationApprover;
use super::fleet::{check_replica_name, Fleet};
use super::headers::check_header_annotations;
use super::input::PeerInput;
use super::input_required::ApprovalStates;
use super::prompts::{PromptInput, Prompts};
use super::quota::{caller_of, is_stateless, ClientQuotas};
use super::resources::{Resources, Subscriptions};
use super::state_key::StateKeys;
use super::tasks::{TaskStore, TaskSupport, TaskTools};
use super::tool_index::ToolCache;

use super::logging::{level_from_mcp, log_forwarder, request_level, ConnectionLogLevel};
use super::outcome::{result_of, REASON_CODE_KEY};
use super::progress::progress_forwarder;
use crate::approval::Approver;
use crate::input::InputHandler;
use crate::reason::ReasonCode;
use crate::store::Store;

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
    pub(super) backend: Arc<B>,
    /// Signs and checks approval `requestState`s; shared by every connection of this server.
    /// `None` when the process has no random source: approval over input-required results is
    /// then denied.
    pub(super) states: Option<Arc<ApprovalStates>>,
    /// The level this connection asked for with `logging/setLevel`.
    pub(super) log_level: ConnectionLogLevel,
    /// Resources and prompts, shared by every connection.
    pub(super) catalog: Arc<Catalog>,
    /// This connection's resource subscriptions (2025-11-25).
    pub(super) subscriptions: Arc<Subscriptions>,
    /// The tools served as tasks, and the tasks of every connection.
    pub(super) tasks: Arc<TaskTools>,
    pub(super) task_store: Arc<TaskStore>,
    /// The store, shared with the other replicas of a fleet or this server's own.
    pub(super) fleet: Arc<Fleet>,
    /// The key that signs states: shared by a fleet, or `None` for a fresh one of this process.
    keys: Option<StateKeys>,
    /// The backend's tool list as MCP entries, shared by every connection.
    tool_cache: ToolCache,
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
            fleet: Arc::clone(&self.fleet),
            keys: self.keys.clone(),
            tool_cache: self.tool_cache.clone(),
        }
    }
}

/// How long a client may keep a `tools/list` result (the list does not change while serving).
const TOOLS_LIST_TTL_MS: u64 = 300_000;

impl<B: McpBackend> McpServer<B> {
    /// Serve this backend.
    pub fn new(backend: B) -> Self {
        McpServer::from_arc(Arc::new(backend))
    }

    /// Serve a shared backend.
    pub fn from_arc(backend: Arc<B>) -> Self {
        let fleet = Arc::new(Fleet::default());
        McpServer {
            backend,
            states: signing_states(None, &ClientQuotas::default(), &fleet),
            log_level: ConnectionLogLevel::default(),
            catalog: Arc::default(),
            subscriptions: Arc::default(),
            tasks: Arc::default(),
            task_store: Arc::new(TaskStore::new(ClientQuotas::default())),
            fleet,
            keys: None,
            tool_cache: ToolCache::default(),
        }
    }

    /// Start the server's tasks and states afresh, with these bounds, this store and key.
    fn rebuilt(mut self, quotas: ClientQuotas) -> Self {
        self.task_store = Arc::new(TaskStore::new(quotas));
        self.states = signing_states(self.keys.as_ref(), &quotas, &self.fleet);
        self
    }

    /// Bound running tasks and outstanding input-required rounds, server-wide and per client
    /// (defaults: [`ClientQuotas::new`]). Set before serving: it starts the server's tasks and
    /// states afresh.
    pub fn with_client_quotas(self, quotas: ClientQuotas) -> Self {
        self.rebuilt(quotas)
    }

    /// Keep what requests share in `store`, with the other replicas of a fleet that share it
    /// (`serve --store URL`): used states, outstanding rounds and running tasks per client, and
    /// the tasks themselves, so any replica can take any request. Needs the fleet's state key
    /// ([`with_state_keys`](Self::with_state_keys)): [`check`](Self::check) refuses a shared
    /// store without one. Set before serving: it starts the server's tasks and states afresh.
    pub fn with_store(mut self, store: Arc<dyn Store>) -> Self {
        self.fleet = Arc::new(Fleet::shared(store, self.fleet.replica.clone()));
        let quotas = *self.task_store.quotas();
        self.rebuilt(quotas)
    }

    /// Name this replica (default: its process id and 32 random bits) in task leases and logs;
    /// 1 to [`MAX_REPLICA_NAME`](super::MAX_REPLICA_NAME) of `A-Z a-z 0-9 . _ -`, checked by
    /// [`check`](Self::check).
    pub fn with_replica_name(mut self, name: impl Into<String>) -> Self {
        let fleet = Fleet {
            replica: name.into(),
            ..(*self.fleet).clone()
        };
        // States and tasks do not hold the name: nothing to start afresh.
        self.fleet = Arc::new(fleet);
        self
    }

    /// This replica's name.
    pub fn replica_name(&self) -> &str {
        &self.fleet.replica
    }

    /// Sign and verify states with `keys` (`serve --state-key-file FILE`), the same on every
    /// replica, instead of a fresh key of this process. Set before serving.
    pub fn with_state_keys(mut self, keys: StateKeys) -> Self {
        self.keys = Some(keys);
        let quotas = *self.task_store.quotas();
        self.rebuilt(quotas)
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
        check_replica_name(&self.fleet.replica).map_err(ServeError::Invalid)?;
        if self.fleet.shared && self.keys.is_none() {
            return Err(ServeError::Invalid(format!(
                "a shared store ({}) needs the fleet's state key (--state-key-file FILE): with a \
                 key of this process alone, a round that lands on another replica does not \
                 verify there",
                self.fleet.store.describe()
            )));
        }
        if self.keys.is_some() && !self.fleet.shared {
            return Err(ServeError::Invalid(
                "a state key given without a shared store (--store URL): the used states would \
                 be remembered by this process alone, so a state could be used again at \
                 another replica or after a restart"
                    .to_owned(),
            ));
        }
        if self.states.is_none() && self.keys.is_some() {
            return Err(ServeError::Invalid(
                "the state key could not be used to sign requestStates".to_owned(),
            ));
        }
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
                fleet: Arc::clone(&self.fleet),
                keys: self.keys.clone(),
                tool_cache: self.tool_cache.clone(),
            },
            None => McpServer {
                log_level: ConnectionLogLevel::default(),
                subscriptions: Arc::default(),
                ..self.clone()
            },
        }
    }

    /// The tools, sorted by name (a stable `tools/list` order whatever the backend's).
    pub(super) fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        Ok(self.tool_cache.index(&*self.backend)?.tools().to_vec())
    }

    /// Run one call with `approver` and `input`, and map the outcome to a result or an error.
    pub(super) async fn run_call(
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
}

/// The states of a server signed with `keys` (a fresh key without), with these bounds on
/// outstanding rounds, in the fleet's store; `None` (approval over input-required results
/// denied) without a random source or a usable key.
fn signing_states(
    keys: Option<&StateKeys>,
    quotas: &ClientQuotas,
    fleet: &Fleet,
) -> Option<Arc<ApprovalStates>> {
    let keys = match keys {
        Some(k) => Ok(k.clone()),
        None => StateKeys::generate(),
    };
    match keys.and_then(|k| ApprovalStates::new(&k, quotas, Arc::clone(&fleet.store))) {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => {
            tracing::warn!(error = %e, "approval through input-required results is off");
            None
        }
    }
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
        self.tool_cache.get(&*self.backend, name)
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
        self.task_get(&request.task_id, &caller_of(&context)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let responses = request.input_responses.into_iter().collect();
        self.task_update(&request.task_id, &caller_of(&context), responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_cancel(&request.task_id, &caller_of(&context))
            .await
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
                    .await
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
