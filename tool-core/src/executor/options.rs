//! Per-call options: what a caller that serves many clients (an MCP server) decides per call
//! rather than once in the [`ExecutorConfig`](super::ExecutorConfig): the call id, an outside
//! cancellation, where progress goes and who approves.

use std::sync::Arc;

use tokio_util::sync::{CancellationToken, DropGuard};

use super::{CallResult, Executor, Session};
use crate::approval::Approver;
use crate::call::ToolCall;
use crate::context::{ProgressSink, ToolContext};

/// Options for one call run with [`Executor::execute_with`]. The default changes nothing.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The call id (audit, `ToolContext::call_id`, [`Session::cancel_call`]); replaces the
    /// call's own id when set.
    pub call_id: Option<String>,
    /// Cancels the call when fired, in addition to the session's own cancellation.
    pub cancel: Option<CancellationToken>,
    /// Where the tool's progress reports go.
    pub progress: Option<ProgressSink>,
    /// Who approves this call, instead of the configured approver. Fail closed still holds:
    /// with neither, a call that needs approval is refused.
    pub approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("call_id", &self.call_id)
            .field("cancel", &self.cancel.as_ref().map(|c| c.is_cancelled()))
            .field("progress", &self.progress.is_some())
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

impl CallOptions {
    /// The approver to ask: this call's, else the configured one.
    pub(super) fn approver_or(
        &self,
        configured: Option<&Arc<dyn Approver>>,
    ) -> Option<Arc<dyn Approver>> {
        self.approver.clone().or_else(|| configured.cloned())
    }

    /// Give the tool's context the progress sink, and make the outside cancellation cancel
    /// `token` (the call's own token) until the returned guard is dropped.
    pub(super) fn attach(
        &self,
        mut ctx: ToolContext,
        token: &CancellationToken,
    ) -> (ToolContext, Option<DropGuard>) {
        if let Some(sink) = &self.progress {
            ctx = ctx.with_progress(Arc::clone(sink));
        }
        let link = self.cancel.as_ref().map(|outside| {
            let outside = outside.clone();
            let inner = token.clone();
            let done = CancellationToken::new();
            let finished = done.clone();
            if outside.is_cancelled() {
                inner.cancel();
            } else {
                // Ends when the call ends (guard dropped) or either token fires.
                tokio::spawn(async move {
                    tokio::select! {
                        _ = outside.cancelled() => inner.cancel(),
                        _ = inner.cancelled() => {}
                        _ = finished.cancelled() => {}
                    }
                });
            }
            done.drop_guard()
        });
        (ctx, link)
    }
}

impl Executor {
    /// Execute one call with per-call options; a context modifier the tool returns is merged
    /// into the session state, as with [`Executor::execute`].
    pub async fn execute_with(
        &self,
        session: &Session,
        mut call: ToolCall,
        options: CallOptions,
    ) -> CallResult {
        if let Some(id) = &options.call_id {
            call.id = Some(id.clone());
        }
        self.execute_inner(session, Ok(call), true, options).await
    }
}
