//! The guarding proxy: start a third-party MCP server as a child process, import its tools as
//! dynamic [`ToolDef`]s and forward calls that passed our pipeline to it.
//!
//! The child's annotations are untrusted hints: they are shown in the description and never
//! decide anything. Risk comes from [`ProxyConfig`] (default `mutation`). A tool whose name or
//! schema we cannot accept is skipped (never served) and reported in [`ImportedServer::skipped`],
//! so one odd tool does not take the whole server down while nothing unchecked gets through.
//!
//! With the child the proxy speaks the revision [`ChildRevision`] says: by default it opens with
//! `server/discover` (2026-07-28, every request self-contained) and falls back to `initialize`
//! (a 2025-11-25 session) for a child that does not speak the new revision. To its own clients
//! it is an ordinary [`McpServer`](super::McpServer), which speaks both revisions whatever the
//! child speaks: approval is the proxy's (input-required results for 2026-07-28 clients,
//! elicitation for 2025-11-25 clients, denial for a client that can do neither), never the
//! child's.
//!
//! A proxied call that is cancelled (the client's `notifications/cancelled`, a closed request
//! stream, the executor's timeout) is cancelled at the child too: the proxy sends the child
//! `notifications/cancelled` for the forwarded request, on stdio the way both revisions cancel.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ContentBlock, ProtocolVersion, RequestId, ServerResult, Tool,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, PeerRequestOptions, RunningService, ServiceError,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use crate::decl::Risk;
use crate::outcome::ToolOutcome;
use crate::registry::ToolDef;

/// How the proxy treats the imported tools.
#[derive(Debug, Clone, Default)]
pub struct ProxyConfig {
    /// Risk per tool name; tools not listed get `default_risk`.
    pub risks: BTreeMap<String, Risk>,
    /// Risk of tools not listed in `risks` (default `mutation`).
    pub default_risk: Risk,
    /// A label for error messages and declarations (default: the command).
    pub label: Option<String>,
    /// The MCP revision to speak with the child (default: 2026-07-28, falling back to
    /// 2025-11-25).
    pub revision: ChildRevision,
    /// With [`ChildRevision::Auto`], how long to wait for the child's answer to
    /// `server/discover` before starting it again for 2025-11-25 (default 10 seconds).
    pub discover_timeout: Option<std::time::Duration>,
}

/// The MCP revision the proxy speaks with its child server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChildRevision {
    /// `server/discover` first (2026-07-28); when that fails (the child does not know the method,
    /// offers only older revisions, or does not answer within
    /// [`ProxyConfig::discover_timeout`]), the child is started again and spoken to from
    /// `initialize` on (2025-11-25).
    #[default]
    Auto,
    /// 2026-07-28 only: a child that does not speak it is an error.
    V2026_07_28,
    /// A 2025-11-25 session from `initialize` on.
    V2025_11_25,
}

/// How long the proxy waits for a child's answer to `server/discover` before it tries
/// `initialize` instead (a server of an older revision may leave an unknown method unanswered),
/// unless [`ProxyConfig::discover_timeout`] says otherwise.
pub const DISCOVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl std::str::FromStr for ChildRevision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(ChildRevision::Auto),
            "2026-07-28" => Ok(ChildRevision::V2026_07_28),
            "2025-11-25" => Ok(ChildRevision::V2025_11_25),
            other => Err(format!(
                "unknown MCP revision `{other}` (expected auto, 2026-07-28 or 2025-11-25)"
            )),
        }
    }
}

/// Why the import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The child process could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The MCP handshake with the child failed.
    #[error("mcp handshake with `{command}` failed: {message}")]
    Handshake {
        /// The command.
        command: String,
        /// What went wrong.
        message: String,
    },
    /// Listing the child's tools failed.
    #[error("tools/list on `{command}` failed: {message}")]
    ListTools {
        /// The command.
        command: String,
        /// What went wrong.
        message: String,
    },
}

/// A tool of the child that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    /// The child's name for it.
    pub name: String,
    /// Why it was refused.
    pub reason: String,
}

/// A running child server and the tools imported from it. Dropping it stops the child.
pub struct ImportedServer {
    /// The imported tools, ready for a registry.
    pub tools: Vec<ToolDef>,
    /// Tools of the child that are not served.
    pub skipped: Vec<SkippedTool>,
    service: RunningService<RoleClient, ()>,
}

impl std::fmt::Debug for ImportedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedServer")
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| &t.decl().name)
                    .collect::<Vec<_>>(),
            )
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl ImportedServer {
    /// The MCP revision negotiated with the child (`None` before the handshake finished, which
    /// an imported server never is).
    pub fn protocol_version(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned())
    }

    /// Stop the child server.
    pub async fn shutdown(self) {
        let _ = self.service.cancel().await;
    }
}

/// Start `command args...` as an MCP server over stdio, list its tools and build guarded
/// definitions that forward to it.
pub async fn import(
    command: &str,
    args: &[String],
    config: &ProxyConfig,
) -> Result<ImportedServer, ProxyError> {
    let discover = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let service = match config.revision {
        ChildRevision::V2026_07_28 => connect(command, args, discover()).await?,
        ChildRevision::V2025_11_25 => {
            connect(command, args, ClientLifecycleMode::Initialize).await?
        }
        ChildRevision::Auto => {
            let limit = config.discover_timeout.unwrap_or(DISCOVER_TIMEOUT);
            let modern = tokio::time::timeout(limit, connect(command, args, discover())).await;
            match modern {
                Ok(Ok(service)) => service,
                Ok(Err(ProxyError::Spawn { command, source })) => {
                    return Err(ProxyError::Spawn { command, source })
                }
                failed => {
                    let why = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => format!("no answer to server/discover within {limit:?}"),
                    };
                    tracing::debug!(server = %command, %why, "mcp proxy: the child does not speak 2026-07-28; starting it again for 2025-11-25");
                    connect(command, args, ClientLifecycleMode::Initialize)
                        .await
                        .map_err(|e| match e {
                            ProxyError::Handshake { command, message } => ProxyError::Handshake {
                                command,
                                message: format!("{message} (and with 2026-07-28: {why})"),
                            },
                            other => other,
                        })?
                }
            }
        }
    };
    let listed = service
        .list_all_tools()
        .await
        .map_err(|e| ProxyError::ListTools {
            command: command.to_owned(),
            message: e.to_string(),
        })?;
    let label = config.label.clone().unwrap_or_else(|| command.to_owned());
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    for tool in listed {
        let name = tool.name.to_string();
        match import_tool(&tool, config, &label, service.peer().clone()) {
            Ok(def) => tools.push(def),
            Err(reason) => {
                tracing::warn!(tool = %name, server = %label, %reason, "mcp proxy: tool skipped");
                skipped.push(SkippedTool { name, reason });
            }
        }
    }
    for name in config.risks.keys() {
        if !tools.iter().any(|t| &t.decl().name == name) {
            tracing::warn!(tool = %name, server = %label, "mcp proxy: risk configured for a tool the server does not offer");
        }
    }
    Ok(ImportedServer {
        tools,
        skipped,
        service,
    })
}

/// Start the child and open the MCP lifecycle with it.
async fn connect(
    command: &str,
    args: &[String],
    lifecycle: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, ()>, ProxyError> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    let transport = TokioChildProcess::new(cmd).map_err(|source| ProxyError::Spawn {
        command: command.to_owned(),
        source,
    })?;
    ().serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|e| ProxyError::Handshake {
            command: command.to_owned(),
            message: e.to_string(),
        })
}

fn import_tool(
    tool: &Tool,
    config: &ProxyConfig,
    label: &str,
    peer: Peer<RoleClient>,
) -> Result<ToolDef, String> {
    let name = tool.name.to_string();
    let risk = config
        .risks
        .get(&name)
        .copied()
        .unwrap_or(config.default_risk);
    let mut description = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Tool `{name}` of MCP server `{label}`."));
    if let Some(hints) = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
        .filter(|v| v.as_object().is_some_and(|m| !m.is_empty()))
    {
        description.push_str(&format!("\n\n(Untrusted hints from the server: {hints}.)"));
    }
    let input_schema = Value::Object((*tool.input_schema).clone());
    let forward_name = name.clone();
    let peer = Arc::new(peer);
    ToolDef::builder(name)
        .description(description)
        .input_schema(input_schema)
        .risk(risk)
        .source(format!("mcp proxy: {label}"))
        .handler(move |ctx, args| {
            let peer = Arc::clone(&peer);
            let name = forward_name.clone();
            async move {
                let mut params = CallToolRequestParams::new(name);
                if let Value::Object(m) = args {
                    params = params.with_arguments(m);
                }
                tokio::select! {
                    _ = ctx.cancellation().cancelled() => ToolOutcome::error("cancelled"),
                    r = forward(&peer, params) => match r {
                        Ok(outcome) => outcome,
                        Err(e) => ToolOutcome::error(format!("the MCP server failed: {e}")),
                    },
                }
            }
        })
        .build()
        .map_err(|e| e.to_string())
}

/// Send one `tools/call` to the child and wait for its answer. Dropped before the answer came
/// (the call was cancelled, timed out, or its client went away), it cancels the request at the
/// child.
async fn forward(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
) -> Result<ToolOutcome, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut guard = CancelAtChild {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let response = handle.await_response().await;
    guard.id = None;
    Ok(match response? {
        ServerResult::CallToolResult(result) => child_outcome(result),
        ServerResult::InputRequiredResult(_) => ToolOutcome::error(
            "the MCP server asked for input, which the proxy does not pass on to its clients",
        ),
        ServerResult::CreateTaskResult(_) => ToolOutcome::error(
            "the MCP server answered with a task, which the proxy does not pass on to its clients",
        ),
        _ => ToolOutcome::error("the MCP server answered `tools/call` with something else"),
    })
}

/// Cancels a forwarded request at the child when dropped while armed: `notifications/cancelled`
/// with the child-side request id, sent from a task of its own because a drop cannot wait.
struct CancelAtChild {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelAtChild {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let param = CancelledNotificationParam::new(
                Some(id),
                Some("the call was cancelled at the proxy".to_owned()),
            );
            if let Err(e) = peer.notify_cancelled(param).await {
                tracing::debug!(error = %e, "mcp proxy: cancellation not delivered to the child");
            }
        });
    }
}

/// A child server's result as an outcome: text as text, structured output as structured
/// output, and other blocks (images, audio, resources) passed on as content blocks, which the
/// executor then checks and caps like any tool's. An error's non-text blocks are only named.
fn child_outcome(result: rmcp::model::CallToolResult) -> ToolOutcome {
    if result.is_error == Some(true) {
        return ToolOutcome::error(content_text(&result.content));
    }
    let text_only = result
        .content
        .iter()
        .all(|c| matches!(c, ContentBlock::Text(_)));
    if text_only {
        return match result.structured_content {
            Some(structured) => ToolOutcome::ok(structured),
            None => ToolOutcome::ok(content_text(&result.content)),
        };
    }
    // With structured output, its text rendering is the child's text blocks: keep the others.
    let structured = result.structured_content;
    let blocks: Result<Vec<_>, String> = result
        .content
        .iter()
        .filter(|c| structured.is_none() || !matches!(c, ContentBlock::Text(_)))
        .map(super::content::from_mcp)
        .collect();
    match blocks {
        Ok(content) => ToolOutcome::Ok {
            output: structured.unwrap_or(Value::Null),
            content,
            modifier: None,
        },
        Err(e) => ToolOutcome::error(format!("the MCP server returned a malformed result: {e}")),
    }
}

/// The text of a result's content; other blocks are named, not passed on.
fn content_text(content: &[ContentBlock]) -> String {
    let parts: Vec<String> = content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(_) => "[image content omitted]".to_owned(),
            ContentBlock::Audio(_) => "[audio content omitted]".to_owned(),
            ContentBlock::Resource(_) => "[embedded resource omitted]".to_owned(),
            ContentBlock::ResourceLink(_) => "[resource link omitted]".to_owned(),
            _ => "[content omitted]".to_owned(),
        })
        .collect();
    parts.join("\n")
}
