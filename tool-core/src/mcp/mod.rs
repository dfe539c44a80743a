//! MCP: serve tools over stdio and streamable HTTP, and guard a third-party MCP server.
//!
//! The server side speaks MCP through a [`McpBackend`]: `tools/list` is whatever the backend lists,
//! and every `tools/call` is handed to the backend with a [`McpCallContext`] that carries the
//! client's progress token, the call's cancellation and an approval channel (MCP elicitation when
//! the client supports it, denial otherwise). Refusals and failures become `isError: true` results
//! whose text starts with the reason code; an unknown tool is a JSON-RPC `-32602` error.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::context::{Progress, ProgressSink};
use crate::decl::Risk;
use crate::outcome::ReasonCode;

pub mod proxy;
pub mod registry_backend;
mod server;

pub use registry_backend::RegistryBackend;
pub use server::{serve_http, serve_http_on, serve_stdio, McpServer, ServeError};

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

    /// Run one `tools/call`.
    fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> impl Future<Output = McpCallOutcome> + Send;
}

/// How one call ended, as the MCP layer reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum McpCallOutcome {
    /// No tool has that name: a JSON-RPC invalid-params error, not a tool result.
    UnknownTool,
    /// The tool ran: a string becomes text content; an object becomes `structuredContent` plus
    /// its JSON as text; any other value becomes its JSON as text.
    Ok {
        /// What the tool returned.
        output: Value,
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
    },
}

impl McpCallOutcome {
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
        }
    }
}

/// What a backend asks the person behind the client before a call runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// Its declared risk.
    pub risk: Risk,
    /// The final arguments the tool would receive.
    pub arguments: Value,
    /// Whether "for this session" may be offered (never for destructive or dangerous tools).
    pub session_grant_allowed: bool,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call.
    Approve,
    /// Run this call and later calls of the same tool in this session.
    ApproveForSession,
    /// Do not run it.
    Deny {
        /// Why (shown after `approval_denied:`).
        reason: String,
    },
}

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Asks for approval of one call.
pub type Approver = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<ApprovalAnswer> + Send + Sync>;

/// What the MCP layer gives a backend for one call.
#[derive(Clone)]
pub struct McpCallContext {
    call_id: String,
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    approver: Approver,
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
            approver: deny_all_approver("no approver is configured"),
        }
    }

    /// Send progress reports here (the server maps them to `notifications/progress`).
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Ask approvals here.
    pub fn with_approver(mut self, approver: Approver) -> Self {
        self.approver = approver;
        self
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

    /// Ask for approval: MCP elicitation when the client supports it, denial otherwise.
    pub fn request_approval(
        &self,
        request: ApprovalRequest,
    ) -> impl Future<Output = ApprovalAnswer> + Send + 'static {
        (self.approver)(request)
    }
}

/// An approver that denies every call with this reason.
pub fn deny_all_approver(reason: &'static str) -> Approver {
    Arc::new(move |_| {
        Box::pin(async move {
            ApprovalAnswer::Deny {
                reason: reason.to_owned(),
            }
        })
    })
}

/// The MCP tool object of a declaration: name, description, input schema as declared (Draft
/// 2020-12 keywords such as `$schema` and `$defs` are kept, as MCP 2025-11-25 expects), output
/// schema when its root is an object, and annotations derived from the declared risk.
pub fn tool_entry(decl: &crate::decl::ToolDecl) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), Value::String(decl.name.clone()));
    m.insert(
        "description".into(),
        Value::String(decl.description.clone()),
    );
    m.insert("inputSchema".into(), decl.input_schema.clone());
    if let Some(out) = &decl.output_schema {
        if out.get("type") == Some(&Value::String("object".into())) {
            m.insert("outputSchema".into(), out.clone());
        }
    }
    let mut ann = Map::new();
    ann.insert("readOnlyHint".into(), Value::Bool(decl.read_only()));
    ann.insert("destructiveHint".into(), Value::Bool(decl.destructive()));
    ann.insert("idempotentHint".into(), Value::Bool(decl.idempotent));
    ann.insert("openWorldHint".into(), Value::Bool(decl.open_world));
    m.insert("annotations".into(), Value::Object(ann));
    Value::Object(m)
}
