//! The MCP server: a [`McpBackend`] behind rmcp's `ServerHandler`, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool, ToolsCapability,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use futures::future::BoxFuture;

use super::backend::{McpBackend, McpCallContext, McpCallOutcome, SERVER_NAME, SERVER_VERSION};
use super::content::call_result;
use super::logging::{level_from_mcp, log_forwarder, request_level, ConnectionLogLevel};
use crate::approval::{ApprovalDecision, ApprovalReason, ApprovalRequest, Approver};
use crate::context::{Progress, ProgressSink};

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

/// An MCP server over a backend. Cheap to clone: one per HTTP session.
pub struct McpServer<B> {
    backend: Arc<B>,
    /// The level this connection asked for with `logging/setLevel`.
    log_level: ConnectionLogLevel,
}

impl<B> Clone for McpServer<B> {
    fn clone(&self) -> Self {
        McpServer {
            backend: Arc::clone(&self.backend),
            log_level: self.log_level.clone(),
        }
    }
}

impl<B: McpBackend> McpServer<B> {
    /// Serve this backend.
    pub fn new(backend: B) -> Self {
        McpServer::from_arc(Arc::new(backend))
    }

    /// Serve a shared backend.
    pub fn from_arc(backend: Arc<B>) -> Self {
        McpServer {
            backend,
            log_level: ConnectionLogLevel::default(),
        }
    }

    /// The server for a new client connection: the backend's per-connection copy, or this one,
    /// with the connection's own log level.
    pub fn for_connection(&self) -> Self {
        match self.backend.for_connection() {
            Some(backend) => McpServer::new(backend),
            None => McpServer::from_arc(Arc::clone(&self.backend)),
        }
    }

    fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        self.backend
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
            .collect()
    }
}

impl<B: McpBackend> ServerHandler for McpServer<B> {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        caps.tools = Some(tools);
        caps.logging = Some(Default::default());
        ServerConfig::new(caps).with_server_info(Implementation::new(SERVER_NAME, SERVER_VERSION))
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let mut ctx = McpCallContext::new(context.id.to_string(), context.ct.clone())
            .with_approver(Arc::new(ElicitationApprover {
                peer: context.peer.clone(),
            }));
        let logs = request_level(context.meta.log_level(), &self.log_level).map(|min| {
            let (sink, flush) = log_forwarder(context.peer.clone(), name.clone(), min);
            ctx = ctx.clone().with_log(sink);
            flush
        });
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (sink, forwarder) = progress_forwarder(context.peer.clone(), token);
            ctx = ctx.clone().with_progress(sink.clone());
            (sink, forwarder)
        });
        let outcome = self.backend.call_tool(name.clone(), args, ctx).await;
        if let Some((_, flush)) = forwarder {
            // Progress must reach the client before the result does.
            flush.flush().await;
        }
        if let Some(flush) = logs {
            flush.flush().await;
        }
        let result = match outcome {
            McpCallOutcome::UnknownTool => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{name}`"),
                    Some(json!({"reason": "unknown_tool", "tool": name})),
                ))
            }
            McpCallOutcome::Ok { output, content } => call_result(output, &content),
            McpCallOutcome::Refused { code, message }
            | McpCallOutcome::Failed { code, message } => {
                CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))])
            }
        };
        Ok(result.into())
    }
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

fn approval_params(req: &ApprovalRequest) -> Result<ElicitRequestParams, String> {
    let args = serde_json::to_string_pretty(&req.args).unwrap_or_default();
    let mut properties = serde_json::Map::new();
    properties.insert(
        "approve".into(),
        json!({"type": "boolean", "title": "Run this call", "default": false}),
    );
    if req.session_grant_allowed {
        properties.insert(
            "for_session".into(),
            json!({"type": "boolean", "title": "Also allow later calls of this tool in this session", "default": false}),
        );
    }
    let params = json!({
        "mode": "form",
        "message": format!(
            "Allow the {} tool `{}` to run with these arguments? (Asked because {}.)\n{}",
            req.risk, req.tool, reason_text(&req.reason), args
        ),
        "requestedSchema": {"type": "object", "properties": properties, "required": ["approve"]},
    });
    serde_json::from_value(params).map_err(|e| format!("could not build the approval request: {e}"))
}

fn reason_text(reason: &ApprovalReason) -> String {
    match reason {
        ApprovalReason::Risk { risk } => format!("the tool's risk is {risk}"),
        ApprovalReason::Review { .. } => format!("the safety scan asks for review: {reason}"),
    }
}

fn interpret_answer(
    action: ElicitationAction,
    content: Option<&Value>,
    req: &ApprovalRequest,
) -> ApprovalDecision {
    let deny = |reason: &str| ApprovalDecision::Deny {
        reason: reason.to_owned(),
    };
    match action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return deny("the user declined"),
        _ => return deny("the user cancelled the approval"),
    }
    let Some(content) = content else {
        return deny("the approval answer was empty");
    };
    // Only an explicit `true` approves; anything else (absent, string, number) denies.
    if content.get("approve") != Some(&Value::Bool(true)) {
        return deny("the user did not approve");
    }
    if req.session_grant_allowed && content.get("for_session") == Some(&Value::Bool(true)) {
        ApprovalDecision::ApproveForSession
    } else {
        ApprovalDecision::Approve
    }
}

/// Serve `backend` over stdin/stdout until the client closes the connection.
pub async fn serve_stdio<B: McpBackend>(backend: B) -> Result<(), ServeError> {
    let service = McpServer::new(backend)
        .serve(rmcp::transport::stdio())
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
/// Requests whose `Host` header is not a loopback name are refused (DNS rebinding protection).
pub async fn serve_http<B: McpBackend>(backend: B, addr: SocketAddr) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_http_on(listener, backend, CancellationToken::new()).await
}

/// Serve `backend` over streamable HTTP at `/mcp` on a bound listener until `shutdown` fires.
pub async fn serve_http_on<B: McpBackend>(
    listener: tokio::net::TcpListener,
    backend: B,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let server = McpServer::new(backend);
    let config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.for_connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::Risk;

    fn req(session: bool) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            call_id: "1".into(),
            tool: "t".into(),
            risk: Risk::Mutation,
            args: json!({}),
            reason: ApprovalReason::Risk {
                risk: Risk::Mutation,
            },
            session_grant_allowed: session,
            round: 0,
        }
    }

    #[test]
    fn only_an_explicit_true_approves() {
        let r = req(true);
        let accept = ElicitationAction::Accept;
        assert_eq!(
            interpret_answer(accept.clone(), Some(&json!({"approve": true})), &r),
            ApprovalDecision::Approve
        );
        assert!(matches!(
            interpret_answer(accept.clone(), Some(&json!({"approve": "true"})), &r),
            ApprovalDecision::Deny { .. }
        ));
        assert!(matches!(
            interpret_answer(accept.clone(), None, &r),
            ApprovalDecision::Deny { .. }
        ));
        assert!(matches!(
            interpret_answer(
                ElicitationAction::Decline,
                Some(&json!({"approve": true})),
                &r
            ),
            ApprovalDecision::Deny { .. }
        ));
    }

    #[test]
    fn session_grant_only_when_offered() {
        let answer = json!({"approve": true, "for_session": true});
        assert_eq!(
            interpret_answer(ElicitationAction::Accept, Some(&answer), &req(true)),
            ApprovalDecision::ApproveForSession
        );
        assert_eq!(
            interpret_answer(ElicitationAction::Accept, Some(&answer), &req(false)),
            ApprovalDecision::Approve
        );
    }

    #[test]
    fn approval_form_is_a_valid_elicitation() {
        assert!(approval_params(&req(true)).is_ok());
        assert!(approval_params(&req(false)).is_ok());
    }
}
