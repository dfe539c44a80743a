//! A minimal [`McpBackend`] straight over a [`Registry`]: lookup, schema validation, a lexical
//! workspace check of path arguments, approval by risk, then the handler with timeout,
//! cancellation and panic capture.
//!
//! It stands in for the full executor pipeline (filters, permissions, safety scan, audit), which
//! replaces it behind the same trait.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use serde_json::{Map, Value};

use super::{ApprovalAnswer, ApprovalRequest, McpBackend, McpCallContext, McpCallOutcome};
use crate::context::ToolContext;
use crate::guard::path::WorkspacePath;
use crate::outcome::{ReasonCode, ToolOutcome};
use crate::registry::{RegisteredTool, Registry};

/// Serves a registry's tools over MCP without the full executor.
pub struct RegistryBackend {
    registry: Arc<Registry>,
    workspace: PathBuf,
    session_id: String,
}

impl std::fmt::Debug for RegistryBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryBackend")
            .field("registry", &self.registry)
            .field("workspace", &self.workspace)
            .finish()
    }
}

impl RegistryBackend {
    /// Serve `registry`; path arguments are resolved against `workspace` (absolute; it is
    /// canonicalized when it exists).
    pub fn new(registry: Arc<Registry>, workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        RegistryBackend {
            registry,
            workspace,
            session_id: "mcp".to_owned(),
        }
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    fn guard_paths(
        &self,
        tool: &RegisteredTool,
        args: &Value,
    ) -> Result<HashMap<String, WorkspacePath>, McpCallOutcome> {
        let mut out = HashMap::new();
        for name in tool.def().guarded_path_args() {
            let Some(raw) = args.get(&name) else { continue };
            let Some(raw) = raw.as_str() else {
                return Err(McpCallOutcome::refused(
                    ReasonCode::PathOutsideWorkspace,
                    format!("path argument `{name}` is not a string"),
                ));
            };
            let abs = resolve_in(&self.workspace, raw).ok_or_else(|| {
                McpCallOutcome::refused(
                    ReasonCode::PathOutsideWorkspace,
                    format!("path argument `{name}` ({raw:?}) leaves the workspace"),
                )
            })?;
            out.insert(name, WorkspacePath::new_checked(abs));
        }
        Ok(out)
    }
}

/// Resolve `raw` lexically inside `root`; `None` when it is empty, holds a NUL byte, or leaves
/// the root. Symlinks are not followed: the executor's guard does that.
fn resolve_in(root: &Path, raw: &str) -> Option<PathBuf> {
    if raw.is_empty() || raw.contains('\0') {
        return None;
    }
    let joined = root.join(raw);
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out.starts_with(root).then_some(out)
}

impl McpBackend for RegistryBackend {
    fn list_tools(&self) -> Vec<Value> {
        self.registry
            .iter()
            .map(|t| super::tool_entry(t.decl()))
            .collect()
    }

    async fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> McpCallOutcome {
        let Some(tool) = self.registry.get(&name) else {
            return McpCallOutcome::UnknownTool;
        };
        let args = Value::Object(args);
        let violations = crate::schema::violations(tool.validator(), &args);
        if !violations.is_empty() {
            let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return McpCallOutcome::refused(ReasonCode::InvalidArguments, text.join("; "));
        }
        let paths = match self.guard_paths(tool, &args) {
            Ok(p) => p,
            Err(refusal) => return refusal,
        };
        if let Some(check) = tool.def().permission_check() {
            if let Err(reason) = check(&args) {
                return McpCallOutcome::refused(ReasonCode::PermissionDenied, reason);
            }
        }
        let decl = tool.decl();
        if !decl.read_only() {
            let answer = ctx
                .request_approval(ApprovalRequest {
                    tool: name.clone(),
                    risk: decl.risk,
                    arguments: args.clone(),
                    session_grant_allowed: false,
                })
                .await;
            match answer {
                ApprovalAnswer::Approve | ApprovalAnswer::ApproveForSession => {}
                ApprovalAnswer::Deny { reason } => {
                    return McpCallOutcome::refused(ReasonCode::ApprovalDenied, reason)
                }
            }
        }
        let mut tool_ctx = ToolContext::new(&self.session_id, ctx.call_id(), &self.workspace)
            .with_cancellation(ctx.cancellation().clone())
            .with_paths(paths);
        if let Some(sink) = ctx.progress_sink() {
            tool_ctx = tool_ctx.with_progress(sink);
        }
        let fut = match (tool.def().handler())(tool_ctx, args) {
            Ok(f) => f,
            Err(e) => return McpCallOutcome::refused(ReasonCode::InvalidArguments, e.message),
        };
        let run = std::panic::AssertUnwindSafe(fut).catch_unwind();
        let timed = async {
            match decl.timeout {
                Some(t) => tokio::time::timeout(t, run).await.ok(),
                None => Some(run.await),
            }
        };
        let cancel = ctx.cancellation().clone();
        tokio::select! {
            biased;
            _ = cancel.cancelled() => McpCallOutcome::failed(ReasonCode::Cancelled, "the call was cancelled"),
            r = timed => match r {
                None => McpCallOutcome::failed(ReasonCode::Timeout, "the tool ran longer than its timeout"),
                Some(Err(_)) => McpCallOutcome::failed(ReasonCode::Panicked, "the tool panicked"),
                Some(Ok(ToolOutcome::Ok { output, .. })) => McpCallOutcome::Ok { output },
                Some(Ok(ToolOutcome::Error { message })) => McpCallOutcome::failed(ReasonCode::ToolError, message),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_resolution_stays_inside() {
        let root = Path::new("/ws");
        assert_eq!(
            resolve_in(root, "a/b.txt"),
            Some(PathBuf::from("/ws/a/b.txt"))
        );
        assert_eq!(resolve_in(root, "a/../b"), Some(PathBuf::from("/ws/b")));
        assert_eq!(resolve_in(root, "../etc/passwd"), None);
        assert_eq!(resolve_in(root, "a/../../x"), None);
        assert_eq!(resolve_in(root, "/etc/passwd"), None);
        assert_eq!(
            resolve_in(root, "/ws/inside"),
            Some(PathBuf::from("/ws/inside"))
        );
        assert_eq!(resolve_in(root, "a\0b"), None);
        assert_eq!(resolve_in(root, ""), None);
    }
}
