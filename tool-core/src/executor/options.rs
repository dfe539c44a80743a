//! What one call is given: its input ([`CallInput`]) and its per-call options ([`CallOptions`]),
//! what a caller that serves many clients (an MCP server) decides per call rather than once in
//! the [`ExecutorConfig`](super::ExecutorConfig): the call id, an outside cancellation, where
//! progress goes, who approves, and whether a context change is merged.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::call::{ParseError, ToolCall};
use crate::context::{LogSink, ProgressSink, ToolContext};
use crate::input::InputHandler;

/// A call as [`Executor::execute`](super::Executor::execute) and
/// [`Executor::run_batch`](super::Executor::run_batch) take it: text a model wrote, a parsed
/// [`ToolCall`], or a parse result. Every form goes down the same steps; a parse failure is a
/// `malformed_call` refusal (step `parse`), audited and counted like any other.
#[derive(Debug, Clone)]
pub enum CallInput<'a> {
    /// Text to parse (any shape [`parse_call`](crate::call::parse_call) accepts), under the
    /// configured [`ParseLimits`](crate::call::ParseLimits).
    Text(&'a str),
    /// A parsed call.
    Call(ToolCall),
    /// The result of parsing a call elsewhere (e.g. one item of a model turn).
    Parsed(Result<ToolCall, ParseError>),
}

impl<'a> From<&'a str> for CallInput<'a> {
    fn from(text: &'a str) -> Self {
        CallInput::Text(text)
    }
}

impl<'a> From<&'a String> for CallInput<'a> {
    fn from(text: &'a String) -> Self {
        CallInput::Text(text)
    }
}

impl From<ToolCall> for CallInput<'_> {
    fn from(call: ToolCall) -> Self {
        CallInput::Call(call)
    }
}

impl From<Result<ToolCall, ParseError>> for CallInput<'_> {
    fn from(parsed: Result<ToolCall, ParseError>) -> Self {
        CallInput::Parsed(parsed)
    }
}

/// Options for one call run with [`Executor::execute`](super::Executor::execute). The default
/// changes nothing: the call's own id, no outside cancellation, no progress sink, the configured
/// approver, and a context change merged into the session.
#[derive(Clone)]
pub struct CallOptions {
    /// The call id (audit, `ToolContext::call_id`, [`Session::cancel_call`](super::Session::cancel_call));
    /// replaces the call's own id when set.
    pub call_id: Option<String>,
    /// Cancels the call when fired, in addition to the session's own cancellation.
    pub cancel: Option<CancellationToken>,
    /// Where the tool's progress reports go.
    pub progress: Option<ProgressSink>,
    /// Where the tool's log messages go, and from which level on
    /// ([`ToolContext::log`](crate::context::ToolContext::log)); `None`: nowhere.
    pub log: Option<LogSink>,
    /// Who approves this call, instead of the configured approver. Fail closed still holds:
    /// with neither, a call that needs approval is refused.
    pub approver: Option<Arc<dyn Approver>>,
    /// Who answers the tool's questions ([`ToolContext::ask`]), instead of the configured
    /// handler; with neither, every question is refused with `input_unavailable`.
    pub input: Option<Arc<dyn InputHandler>>,
    /// Merge a context modifier the tool returns into the session state (`true`, the default).
    /// With `false` the modifier is only returned in the result, unapplied, for callers that merge
    /// several calls' modifiers themselves with
    /// [`Session::apply_modifier`](super::Session::apply_modifier).
    pub merge_modifier: bool,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            call_id: None,
            cancel: None,
            progress: None,
            log: None,
            approver: None,
            input: None,
            merge_modifier: true,
        }
    }
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("call_id", &self.call_id)
            .field("cancel", &self.cancel.as_ref().map(|c| c.is_cancelled()))
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.as_ref().map(LogSink::min_level))
            .field("approver", &self.approver.is_some())
            .field("input", &self.input.is_some())
            .field("merge_modifier", &self.merge_modifier)
            .finish()
    }
}

impl CallOptions {
    /// Options that leave a context modifier unmerged (see [`CallOptions::merge_modifier`]).
    pub fn unmerged() -> Self {
        CallOptions {
            merge_modifier: false,
            ..CallOptions::default()
        }
    }

    /// The approver to ask: this call's, else the configured one.
    pub(super) fn approver_or(
        &self,
        configured: Option<&Arc<dyn Approver>>,
    ) -> Option<Arc<dyn Approver>> {
        self.approver.clone().or_else(|| configured.cloned())
    }

    /// The input handler: this call's, else the configured one.
    pub(super) fn input_or(
        &self,
        configured: Option<&Arc<dyn InputHandler>>,
    ) -> Option<Arc<dyn InputHandler>> {
        self.input.clone().or_else(|| configured.cloned())
    }

    /// Give the tool's context the progress sink and log sink. An outside cancellation that has
    /// already fired cancels `token` (the call's own token) now; the returned outside token is
    /// the one the run step watches while the handler runs (cancelling `token` when it fires), so
    /// linking the two costs no task of its own.
    pub(super) fn attach(
        &self,
        mut ctx: ToolContext,
        token: &CancellationToken,
    ) -> (ToolContext, Option<CancellationToken>) {
        if let Some(sink) = &self.progress {
            ctx = ctx.with_progress(Arc::clone(sink));
        }
        if let Some(sink) = &self.log {
            ctx = ctx.with_log(sink.clone());
        }
        let outside = self.cancel.clone();
        if outside
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            token.cancel();
        }
        (ctx, outside)
    }
}
