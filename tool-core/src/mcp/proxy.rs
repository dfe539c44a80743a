//! The guarding proxy: start a third-party MCP server as a child process, import its tools as
//! dynamic [`ToolDef`]s and forward calls that passed our pipeline to it.
//!
//! The child's annotations are untrusted hints: they are shown in the description and never
//! decide anything. Risk comes from [`ProxyConfig`] (default `mutation`). A tool whose name or
//! schema we cannot accept is skipped (never served) and reported in [`ImportedServer::skipped`],
//! so one odd tool does not take the whole server down while nothing unchecked gets through.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ContentBlock, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{Peer, RoleClient, ServiceExt};
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
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    let transport = TokioChildProcess::new(cmd).map_err(|source| ProxyError::Spawn {
        command: command.to_owned(),
        source,
    })?;
    let service =
        ().serve(transport)
            .await
            .map_err(|e| ProxyError::Handshake {
                command: command.to_owned(),
                message: e.to_string(),
            })?;
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
                    r = peer.call_tool(params) => match r {
                        Ok(result) => child_outcome(result),
                        Err(e) => ToolOutcome::error(format!("the MCP server failed: {e}")),
                    },
                }
            }
        })
        .build()
        .map_err(|e| e.to_string())
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
