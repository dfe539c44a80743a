//! The MCP backend over the [`Executor`]: `tools/list` is the MCP export of the registry, and every
//! `tools/call` runs the full pipeline with the client's call id, cancellation, progress and
//! approval (elicitation).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::backend::{McpBackend, McpCallContext, McpCallOutcome};
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::call::ToolCall;
use crate::executor::{CallOptions, CallResult, CallStatus, Executor, Session};
use crate::reason::ReasonCode;

/// Serves an [`Executor`]'s tools over MCP. Each client connection gets its own executor
/// [`Session`] (error budget, approval grants, state); approvals go to the client.
#[derive(Debug, Clone)]
pub struct ExecutorBackend {
    executor: Arc<Executor>,
    session: Arc<Session>,
}

impl ExecutorBackend {
    /// Serve `executor`'s tools, starting with a fresh session.
    pub fn new(executor: Arc<Executor>) -> Self {
        let session = executor.new_session();
        ExecutorBackend { executor, session }
    }

    /// Serve `executor`'s tools in an existing session (for a single connection, e.g. stdio).
    pub fn with_session(executor: Arc<Executor>, session: Arc<Session>) -> Self {
        ExecutorBackend { executor, session }
    }

    /// The executor.
    pub fn executor(&self) -> &Arc<Executor> {
        &self.executor
    }

    /// The session calls of this connection run in.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

impl McpBackend for ExecutorBackend {
    fn list_tools(&self) -> Vec<Value> {
        self.executor
            .registry()
            .iter()
            .map(|t| crate::schema::export::mcp::tool(t.decl()))
            .collect()
    }

    fn fixed_tool_list(&self) -> bool {
        true
    }

    async fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        ctx: McpCallContext,
    ) -> McpCallOutcome {
        let options = CallOptions {
            call_id: Some(ctx.call_id().to_owned()),
            cancel: Some(ctx.cancellation().clone()),
            progress: ctx.progress_sink(),
            log: ctx.log_sink(),
            approver: Some(Arc::new(CancellableApprover {
                inner: ctx.approver(),
                cancel: ctx.cancellation().clone(),
            })),
            input: ctx.input(),
            ..CallOptions::default()
        };
        let wraps = self
            .executor
            .registry()
            .get(&name)
            .is_some_and(|t| crate::schema::export::mcp::wraps_output(t.decl()));
        let result = self
            .executor
            .execute(&self.session, ToolCall::new(name, args), options)
            .await;
        let mut outcome = outcome_of(result);
        // A value whose declared schema is not an object travels as `{"result": value}`, the
        // shape the advertised `outputSchema` describes (`structuredContent` must be an object).
        if let McpCallOutcome::Ok { output, content } = &mut outcome {
            // `Null` with content blocks is "blocks only", not a value.
            if wraps && (!output.is_null() || content.is_empty()) {
                let value = std::mem::take(output);
                *output = serde_json::json!({ crate::schema::export::mcp::RESULT_KEY: value });
            }
        }
        outcome
    }

    fn for_connection(&self) -> Option<Self> {
        Some(ExecutorBackend::new(Arc::clone(&self.executor)))
    }
}

/// The MCP view of an executor result.
fn outcome_of(result: CallResult) -> McpCallOutcome {
    let code = result.code.unwrap_or(ReasonCode::ToolError);
    let message = result.message.unwrap_or_default();
    match result.status {
        CallStatus::Ok => McpCallOutcome::Ok {
            output: result.output.unwrap_or(Value::Null),
            content: result.content,
        },
        CallStatus::Refused if code == ReasonCode::UnknownTool => McpCallOutcome::UnknownTool,
        CallStatus::Refused => McpCallOutcome::Refused { code, message },
        CallStatus::Failed => McpCallOutcome::Failed {
            code,
            message,
            error_code: result.error_code,
        },
    }
}

/// Stops waiting for an answer when the call is cancelled: the client that cancelled will not
/// answer, and the call must not hang in approval.
struct CancellableApprover {
    inner: Arc<dyn Approver>,
    cancel: CancellationToken,
}

impl Approver for CancellableApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            tokio::select! {
                biased;
                _ = self.cancel.cancelled() => ApprovalDecision::Deny {
                    reason: "the call was cancelled while waiting for approval".to_owned(),
                },
                d = self.inner.decide(request) => d,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::{ApprovalStatus, FixedApprover};
    use crate::executor::ExecutorConfig;
    use crate::registry::{Registry, ToolDef};
    use crate::Risk;
    use serde_json::json;
    use std::time::Duration;

    fn result(status: CallStatus, code: Option<ReasonCode>) -> CallResult {
        CallResult {
            tool: Some("t".into()),
            call_id: "1".into(),
            call_id_given: true,
            status,
            code,
            step: code.map(|_| crate::executor::Step::Run),
            message: code.map(|c| format!("{c} happened")),
            error_code: None,
            violations: Vec::new(),
            output: (status == CallStatus::Ok).then(|| json!({"a": 1})),
            content: Vec::new(),
            modifier: None,
            modifier_applied: false,
            truncated: false,
            approval: ApprovalStatus::NotRequired,
            duration: Duration::ZERO,
            enforced: "none",
        }
    }

    #[test]
    fn results_map_to_mcp_outcomes() {
        assert_eq!(
            outcome_of(result(CallStatus::Ok, None)),
            McpCallOutcome::Ok {
                output: json!({"a": 1}),
                content: Vec::new(),
            }
        );
        assert_eq!(
            outcome_of(result(CallStatus::Refused, Some(ReasonCode::UnknownTool))),
            McpCallOutcome::UnknownTool
        );
        assert!(matches!(
            outcome_of(result(
                CallStatus::Refused,
                Some(ReasonCode::PathOutsideWorkspace)
            )),
            McpCallOutcome::Refused {
                code: ReasonCode::PathOutsideWorkspace,
                ..
            }
        ));
        assert!(matches!(
            outcome_of(result(CallStatus::Failed, Some(ReasonCode::Timeout))),
            McpCallOutcome::Failed {
                code: ReasonCode::Timeout,
                ..
            }
        ));
    }

    fn backend(dir: &std::path::Path, started: Arc<tokio::sync::Notify>) -> ExecutorBackend {
        let slow = ToolDef::builder("wait")
            .description("Waits until cancelled.")
            .input_schema(json!({"type": "object", "additionalProperties": false}))
            .risk(Risk::Mutation)
            .handler(move |ctx: crate::ToolContext, _args| {
                let started = Arc::clone(&started);
                async move {
                    started.notify_one();
                    ctx.cancellation().cancelled().await;
                    "cancelled"
                }
            })
            .build()
            .expect("valid tool");
        let registry = Registry::builder().tool(slow).build().expect("registry");
        // A broken cancellation link then fails as `timeout` instead of hanging the test.
        let config = ExecutorConfig::new(dir).default_timeout(Duration::from_secs(10));
        let executor = Executor::new(Arc::new(registry), config).expect("executor over a temp dir");
        ExecutorBackend::new(Arc::new(executor))
    }

    #[tokio::test]
    async fn without_the_clients_approval_a_mutation_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = backend(dir.path(), Arc::default());
        let ctx = McpCallContext::new("1", CancellationToken::new());
        let denied = b.call_tool("wait".into(), Map::new(), ctx).await;
        assert!(
            matches!(
                denied,
                McpCallOutcome::Refused {
                    code: ReasonCode::ApprovalDenied,
                    ..
                }
            ),
            "{denied:?}"
        );
    }

    #[tokio::test]
    async fn the_clients_cancellation_reaches_the_running_tool() {
        let dir = tempfile::tempdir().expect("tempdir");
        let started = Arc::new(tokio::sync::Notify::new());
        let b = backend(dir.path(), Arc::clone(&started));
        let cancel = CancellationToken::new();
        let ctx = McpCallContext::new("7", cancel.clone())
            .with_approver(Arc::new(FixedApprover::allow()));
        let call = b.call_tool("wait".into(), Map::new(), ctx);
        // Cancel only once the tool runs, so the link to the tool's token is what is tested.
        let cancel_when_running = async {
            started.notified().await;
            cancel.cancel();
        };
        let (out, ()) = tokio::join!(call, cancel_when_running);
        assert!(
            matches!(
                out,
                McpCallOutcome::Failed {
                    code: ReasonCode::Cancelled,
                    ..
                }
            ),
            "{out:?}"
        );
    }

    #[tokio::test]
    async fn each_connection_gets_its_own_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = backend(dir.path(), Arc::default());
        let other = b.for_connection().expect("a fresh backend");
        assert_ne!(b.session().id(), other.session().id());
    }
}
