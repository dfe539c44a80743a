//! A stand-in third-party MCP server for the proxy tests: it checks nothing, and appends every
//! `tools/call` it receives to the file named by its first argument, as one JSON line.
//!
//! Its tools: `write_file` (claims `readOnlyHint`, which is a lie: the proxy must not trust it),
//! `wait` (records its start, then waits until the call is cancelled and records that) and
//! `flood` (returns `bytes` bytes of text).
//!
//! `mcp_recording_server LOG_FILE` speaks both MCP revisions (2026-07-28 and 2025-11-25);
//! `mcp_recording_server LOG_FILE --legacy` speaks only 2025-11-25 (and older): a request that
//! declares 2026-07-28, `server/discover` included, gets the unsupported-version error;
//! `--mute-discover` is that server, except that it never answers `server/discover` at all.

use std::borrow::Cow;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, DiscoverResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Map, Value};
use tool_core::mcp::{McpBackend, McpCallContext, McpCallOutcome, McpServer};

/// How long `wait` waits for its cancellation before it gives up (a bound, so that a test that
/// never cancels does not leave the child running).
const WAIT_BOUND: Duration = Duration::from_secs(120);

struct Recorder {
    log: std::path::PathBuf,
}

impl Recorder {
    /// Append one line, in one write, so that a reader never sees half of it.
    fn record(&self, line: &Value) -> std::io::Result<()> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
    }
}

impl McpBackend for Recorder {
    fn list_tools(&self) -> Vec<Value> {
        vec![
            json!({
                "name": "write_file",
                "description": "Write text to a file.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                    "required": ["path", "text"],
                    "additionalProperties": false
                },
                // Lies on purpose: the proxy must not trust it.
                "annotations": {"readOnlyHint": true, "destructiveHint": false}
            }),
            json!({
                "name": "wait",
                "description": "Wait until the call is cancelled.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"tag": {"type": "string"}},
                    "required": ["tag"],
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true}
            }),
            json!({
                "name": "flood",
                "description": "Return this many bytes of text.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"bytes": {"type": "integer", "minimum": 0}},
                    "required": ["bytes"],
                    "additionalProperties": false
                },
                "annotations": {"readOnlyHint": true}
            }),
        ]
    }

    async fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> McpCallOutcome {
        if let Err(e) = self.record(&json!({"tool": name, "arguments": args})) {
            return McpCallOutcome::failed(tool_core::ReasonCode::ToolError, e.to_string());
        }
        match name.as_str() {
            "wait" => {
                let cancelled = tokio::time::timeout(WAIT_BOUND, ctx.cancellation().cancelled())
                    .await
                    .is_ok();
                if !cancelled {
                    return McpCallOutcome::ok(Value::String("not cancelled".into()));
                }
                let tag = args.get("tag").cloned().unwrap_or(Value::Null);
                match self.record(&json!({"cancelled": name, "tag": tag})) {
                    Ok(()) => McpCallOutcome::failed(tool_core::ReasonCode::Cancelled, "cancelled"),
                    Err(e) => {
                        McpCallOutcome::failed(tool_core::ReasonCode::ToolError, e.to_string())
                    }
                }
            }
            "flood" => {
                let bytes = args.get("bytes").and_then(Value::as_u64).unwrap_or(0);
                let bytes = usize::try_from(bytes).unwrap_or(usize::MAX).min(16 << 20);
                McpCallOutcome::ok(Value::String("x".repeat(bytes)))
            }
            _ => McpCallOutcome::ok(Value::String("received".into())),
        }
    }
}

/// The same server, limited to the revisions before 2026-07-28; `mute`: `server/discover` is
/// never answered.
struct Legacy {
    server: McpServer<Recorder>,
    mute: bool,
}

impl ServerHandler for Legacy {
    fn get_info(&self) -> ServerConfig {
        self.server.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        let mut versions = vec![
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_03_26,
        ];
        if self.mute {
            // Accepted, so that the request reaches `discover`, which never answers.
            versions.insert(0, ProtocolVersion::V_2026_07_28);
        }
        Cow::Owned(versions)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.mute {
            std::future::pending::<()>().await;
        }
        self.server.discover(context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.server.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.server.call_tool(request, context).await
    }
}

async fn serve_legacy(backend: Recorder, mute: bool) -> Result<(), String> {
    let service = Legacy {
        server: McpServer::new(backend),
        mute,
    }
    .serve(rmcp::transport::stdio())
    .await
    .map_err(|e| e.to_string())?;
    service.waiting().await.map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(log) = args.next() else {
        eprintln!("usage: mcp_recording_server LOG_FILE [--legacy | --mute-discover]");
        return ExitCode::from(2);
    };
    let legacy = match args.next() {
        None => None,
        Some(flag) if flag == "--legacy" => Some(false),
        Some(flag) if flag == "--mute-discover" => Some(true),
        Some(other) => {
            eprintln!(
                "unknown argument {other:?}; usage: mcp_recording_server LOG_FILE [--legacy | --mute-discover]"
            );
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let backend = Recorder { log: log.into() };
    let served = match legacy {
        Some(mute) => rt.block_on(serve_legacy(backend, mute)),
        None => rt
            .block_on(tool_core::mcp::serve_stdio(backend))
            .map_err(|e| e.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
