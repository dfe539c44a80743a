//! The seam between the MCP server and what it serves: [`McpBackend`], its call context and outcome.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalDecision, ApprovalRequest, Approver, FixedApprover};
use crate::content::Content;
use crate::context::{LogSink, Progress, ProgressSink};
use crate::input::InputHandler;
use crate::reason::ReasonCode;

/// The server name announced in `initialize`.
pub const SERVER_NAME: &str = "declared-tools";

/// The server version announced in `initialize`.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What an MCP server serves: the tool list and the calls. The executor is the real one; a
/// backend never trusts the client.
pub trait McpBackend: Send + Sync + 'static {
    /// The `tools/list` entries: MCP tool objects (`name`, `description`, `inputSchema`, optional
    /// `outputSchema` and `annotations`).
    fn list_tools(&self) -> Vec<Value>;

    /// `true` when [`list_tools`](Self::list_tools) answers the same, for this backend and every
    /// copy [`for_connection`](Self::for_connection) makes, for as long as it serves (an
    /// executor's registry cannot change). The server then converts and indexes the list once
    /// instead of on every request. Default `false`: the list is read anew each time.
    fn fixed_tool_list(&self) -> bool {
        false
    }

    /// Run one `tools/call`.
    fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> impl Future<Output = McpCallOutcome> + Send;

    /// The backend for a new client connection (an HTTP session, a stdio connection), or `None`
    /// to share this one. A backend with per-connection state (an executor session: error
    /// budget, approval grants) returns a fresh one.
    fn for_connection(&self) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }

    /// The `serverInfo` announced in `initialize` (default: [`SERVER_NAME`], [`SERVER_VERSION`];
    /// an application names itself with [`Named`]).
    fn server_info(&self) -> ServerInfo {
        ServerInfo::default()
    }
}

/// The server's name and version, as `initialize` announces them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
}

impl ServerInfo {
    /// This name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
        }
    }
}

impl Default for ServerInfo {
    fn default() -> Self {
        ServerInfo::new(SERVER_NAME, SERVER_VERSION)
    }
}

/// A backend served under the application's name and version (`serverInfo`); everything else
/// is the inner backend's.
#[derive(Debug, Clone)]
pub struct Named<B> {
    inner: B,
    info: ServerInfo,
}

impl<B> Named<B> {
    /// Serve `inner` as `info`.
    pub fn new(inner: B, info: ServerInfo) -> Self {
        Named { inner, info }
    }
}

impl<B: McpBackend> McpBackend for Named<B> {
    fn list_tools(&self) -> Vec<Value> {
        self.inner.list_tools()
    }

    fn fixed_tool_list(&self) -> bool {
        self.inner.fixed_tool_list()
    }

    fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> impl Future<Output = McpCallOutcome> + Send {
        self.inner.call_tool(name, args, ctx)
    }

    fn for_connection(&self) -> Option<Self> {
        self.inner.for_connection().map(|inner| Named {
            inner,
            info: self.info.clone(),
        })
    }

    fn server_info(&self) -> ServerInfo {
        self.info.clone()
    }
}

/// How one call ended, as the MCP layer reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum McpCallOutcome {
    /// No tool has that name: a JSON-RPC invalid-params error, not a tool result.
    UnknownTool,
    /// The tool ran: a string becomes text content; an object becomes `structuredContent` plus
    /// its JSON as text; any other value becomes its JSON as text; content blocks follow, in
    /// order (see [`call_result`](super::content::call_result)).
    Ok {
        /// What the tool returned (`Null` when it returned content blocks only).
        output: Value,
        /// The content blocks it returned.
        content: Vec<Content>,
    },
    /// The call was refused before the tool ran (`isError: true`, text starts with the code).
    Refused {
        /// Why.
        code: ReasonCode,
        /// Details for the model.
        message: String,
    },
    /// The tool ran and failed (`isError: true`, text starts with the code).
    Failed {
        /// Why.
        code: ReasonCode,
        /// Details for the model.
        message: String,
        /// The tool's own error code ([`ToolError`](crate::outcome::ToolError)), as
        /// `error_code` in `structuredContent` and `_meta`.
        error_code: Option<String>,
    },
}

impl McpCallOutcome {
    /// A success with this output and no content blocks.
    pub fn ok(output: impl Into<Value>) -> Self {
        McpCallOutcome::Ok {
            output: output.into(),
            content: Vec::new(),
        }
    }

    /// A refusal with this reason.
    pub fn refused(code: ReasonCode, message: impl Into<String>) -> Self {
        McpCallOutcome::Refused {
            code,
            message: message.into(),
        }
    }

    /// A failure with this reason.
    pub fn failed(code: ReasonCode, message: impl Into<String>) -> Self {
        McpCallOutcome::Failed {
            code,
            message: message.into(),
            error_code: None,
        }
    }
}

/// What the MCP layer gives a backend for one call.
#[derive(Clone)]
pub struct McpCallContext {
    call_id: String,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    log: Option<LogSink>,
    approver: Arc<dyn Approver>,
    input: Option<Arc<dyn InputHandler>>,
}

impl std::fmt::Debug for McpCallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpCallContext")
            .field("call_id", &self.call_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .finish_non_exhaustive()
    }
}

impl McpCallContext {
    /// A context with no progress listener and an approver that denies everything (fail closed).
    pub fn new(call_id: impl Into<String>, cancel: CancellationToken) -> Self {
        McpCallContext {
            call_id: call_id.into(),
            cancel,
            progress: None,
            log: None,
            approver: Arc::new(FixedApprover::deny("no approver is configured")),
            input: None,
        }
    }

    /// Send progress reports here (the server maps them to `notifications/progress`).
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Send the tool's log messages here (the server maps them to `notifications/message`; it
    /// sets a sink only when the client asked for messages).
    pub fn with_log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Where log messages go, when the client asked for them (plug into `CallOptions::log`).
    pub fn log_sink(&self) -> Option<LogSink> {
        self.log.clone()
    }

    /// Ask approvals here.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Answer the tool's questions here (the client, through the server).
    pub fn with_input(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input = Some(handler);
        self
    }

    /// Who answers the tool's questions (plug into `CallOptions::input`); `None`: nobody.
    pub fn input(&self) -> Option<Arc<dyn InputHandler>> {
        self.input.clone()
    }

    /// The JSON-RPC request id, as text (for audit and `ToolContext::call_id`).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Cancelled by `notifications/cancelled`, by the client going away or by server shutdown.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Where progress goes, when the client asked for it (plug into `ToolContext::with_progress`).
    pub fn progress_sink(&self) -> Option<ProgressSink> {
        self.progress.clone()
    }

    /// Report progress (ignored when the client sent no progress token).
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                call_id: self.call_id.clone(),
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Who approves this call: MCP elicitation when the client supports it, denial otherwise.
    pub fn approver(&self) -> Arc<dyn Approver> {
        Arc::clone(&self.approver)
    }

    /// Ask for approval of one call.
    pub async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.approver.decide(request).await
    }
}
