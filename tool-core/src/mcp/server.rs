//! The MCP server: a [`McpBackend`] behind rmcp's `ServerHandler`, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    Implementation, ListToolsResult, MetaObject, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool, ToolsCapability,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use futures::future::BoxFuture;

use super::backend::{McpBackend, McpCallContext, McpCallOutcome};
use super::elicitation::{approval_params, interpret_answer};
use super::http_guard::{check_body, MAX_BODY_BYTES};
use super::input_required::{
    approval_answer, approval_question, supports_form_elicitation, AnsweredApprover,
    ApprovalStates, AskingApprover,
};
use super::stdio_guard::guarded;

use super::content::call_result;
use super::logging::{level_from_mcp, log_forwarder, request_level, ConnectionLogLevel};
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::context::{Progress, ProgressSink};
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
}

impl<B> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            backend: Arc::clone(&self.backend),
            states: self.states.clone(),
            log_level: self.log_level.clone(),
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
        let states = match ApprovalStates::new() {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                tracing::warn!(error = %e, "approval through input-required results is off");
                None
            }
        };
        McpServer {
            backend,
            states,
            log_level: ConnectionLogLevel::default(),
        }
    }

    /// The server for a new client connection: the backend's per-connection copy, or this one,
    /// with the connection's own log level.
    pub fn for_connection(&self) -> Self {
        match self.backend.for_connection() {
            Some(backend) => McpServer {
                backend: Arc::new(backend),
                states: self.states.clone(),
                log_level: ConnectionLogLevel::default(),
            },
            None => McpServer {
                backend: Arc::clone(&self.backend),
                states: self.states.clone(),
                log_level: ConnectionLogLevel::default(),
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

    /// Run one call with `approver`, and map the outcome to a result or an error.
    async fn run_call(
        &self,
        name: String,
        args: Map<String, Value>,
        approver: Arc<dyn Approver>,
        context: &RequestContext<RoleServer>,
    ) -> Result<McpCallOutcome, ErrorData> {
        let mut ctx =
            McpCallContext::new(context.id.to_string(), context.ct.clone()).with_approver(approver);
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

    /// A 2026-07-28 call: approval through input-required results.
    async fn call_stateless(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let caps = context.client_capabilities();
        let can_ask = supports_form_elicitation(caps.as_ref()) && self.states.is_some();
        if let (Some(state), Some(states)) = (request.request_state.as_deref(), &self.states) {
            let ticket = states.redeem(state, &name, &args).map_err(|r| {
                ErrorData::invalid_params(
                    format!("{}: {}", r.code, r.message),
                    Some(json!({REASON_CODE_KEY: r.code})),
                )
            })?;
            match approval_answer(request.input_responses.as_ref()) {
                Some(Ok(answer)) => {
                    let approver = AnsweredApprover::new(ticket, answer);
                    let outcome = self.run_call(name, args, approver, &context).await?;
                    return Ok(result_of(outcome).into());
                }
                Some(Err(e)) => {
                    return Err(ErrorData::invalid_params(
                        e,
                        Some(json!({REASON_CODE_KEY: ReasonCode::MalformedCall})),
                    ))
                }
                // No answer to the question: ask it again, with a new state.
                None => {}
            }
        }
        let asking = AskingApprover::new(can_ask);
        let outcome = self
            .run_call(name.clone(), args.clone(), asking.clone(), &context)
            .await?;
        if let (
            Some(asked),
            Some(states),
            McpCallOutcome::Refused {
                code: ReasonCode::ApprovalDenied,
                ..
            },
        ) = (asking.asked(), &self.states, &outcome)
        {
            let question = states
                .issue(&name, &args, &asked)
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
        Ok(result_of(outcome).into())
    }
}

/// `true` when the request speaks 2026-07-28 or later (stateless, per-request `_meta`).
fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

impl<B: McpBackend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        caps.tools = Some(tools);
        caps.logging = Some(Default::default());
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if is_stateless(&context) {
            return self.call_stateless(request, context).await;
        }
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let approver = Arc::new(ElicitationApprover {
            peer: context.peer.clone(),
        });
        let outcome = self.run_call(name, args, approver, &context).await?;
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

enum ProgressMsg {
    Report(Progress),
    Flush(oneshot::Sender<()>),
}

struct ProgressFlush {
    tx: mpsc::UnboundedSender<ProgressMsg>,
}

impl ProgressFlush {
    async fn flush(self) {
        let (ack_tx, ack_rx) = oneshot::channel();
        if self.tx.send(ProgressMsg::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.await;
        }
    }
}

/// A progress sink that forwards reports, in order, as `notifications/progress` for `token`.
fn progress_forwarder(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> (ProgressSink, ProgressFlush) {
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressMsg>();
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                ProgressMsg::Report(p) => {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    if let Some(total) = p.total {
                        param = param.with_total(total);
                    }
                    if let Some(message) = p.message {
                        param = param.with_message(message);
                    }
                    if let Err(e) = peer.notify_progress(param).await {
                        tracing::debug!(error = %e, "progress notification not delivered");
                    }
                }
                ProgressMsg::Flush(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    });
    let sink_tx = tx.clone();
    let sink: ProgressSink = Arc::new(move |p| {
        let _ = sink_tx.send(ProgressMsg::Report(p));
    });
    (sink, ProgressFlush { tx })
}

/// Approval through MCP form elicitation; a client without the capability gets a denial.
struct ElicitationApprover {
    peer: Peer<RoleServer>,
}

impl Approver for ElicitationApprover {
    fn decide<'a>(&'a self, req: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if !self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return ApprovalDecision::Deny {
                    reason: "approval needed, and the client does not support elicitation".into(),
                };
            }
            let params = match approval_params(req) {
                Ok(p) => p,
                Err(e) => return ApprovalDecision::Deny { reason: e },
            };
            match self.peer.create_elicitation(params).await {
                Ok(res) => interpret_answer(res.action, res.content.as_ref(), req),
                Err(e) => ApprovalDecision::Deny {
                    reason: format!("the approval request failed: {e}"),
                },
            }
        })
    }
}

/// Serve `backend` over stdin/stdout until the client closes the connection. Each incoming line
/// is checked first: malformed JSON, duplicate keys and non-object `arguments` are answered with
/// their JSON-RPC errors and never reach the server.
pub async fn serve_stdio<B: McpBackend>(backend: B) -> Result<(), ServeError> {
    let (input, output) = rmcp::transport::stdio();
    let service = McpServer::new(backend)
        .serve(guarded(input, output))
        .await
        .map_err(|e| ServeError::Handshake(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServeError::Task(e.to_string()))?;
    Ok(())
}

/// Serve `backend` over streamable HTTP at `http://ADDR/mcp` until the process ends.
///
/// Requests whose `Host` header is not a loopback name, or whose `Origin` header (when present) is
/// not a loopback origin, are refused (DNS rebinding protection). Clients of revision 2026-07-28
/// are served statelessly; older clients get a session from `initialize` on.
pub async fn serve_http<B: McpBackend>(backend: B, addr: SocketAddr) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_http_on(listener, backend, CancellationToken::new()).await
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
    let server = McpServer::new(backend);
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
