//! Step `run`: the handler, under its timeout, the call's cancellation and panic isolation, with
//! its output cut at the output cap. Success is the handler's [`ToolOutcome`] variant, never
//! its text.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;

use super::output::{cap_text, cap_value};
use super::state::{CallState, Cx, Stop, Verdict};
use crate::context::ToolContext;
use crate::outcome::ToolOutcome;
use crate::reason::ReasonCode;
use crate::status::Step;

fn failed(code: ReasonCode, message: String) -> Verdict {
    Verdict::Failed(Stop::new(Step::Run, code, message))
}

/// Run the checked and approved call.
pub(super) async fn run(cx: &Cx<'_>, call: &mut CallState<'_>) -> Verdict {
    let executor = cx.executor;
    let session = cx.session;
    let tool = call.tool;
    let decl = tool.decl();
    let limits = executor
        .config
        .tool_limits
        .get(&decl.name)
        .copied()
        .unwrap_or_default();
    let timeout = limits
        .timeout
        .or(decl.timeout)
        .unwrap_or(executor.config.default_timeout);
    let cap = limits
        .output_cap
        .unwrap_or(executor.config.default_output_cap);
    let budget = session.output_remaining().map_or(cap, |left| left.min(cap));
    let call_id: Arc<str> = Arc::from(cx.call_id);
    let in_flight = session.begin_call(&call_id, cx.env.parent.as_ref());
    let token = in_flight.token.clone();
    if token.is_cancelled() {
        return Verdict::Refused(Stop::new(
            Step::Run,
            ReasonCode::Cancelled,
            "the call was cancelled before it started".to_owned(),
        ));
    }
    let mut ctx = ToolContext::for_call(
        session.shared_id(),
        call_id,
        Arc::clone(&executor.root),
        token.clone(),
        session.state(),
    )
    .with_output_budget(Some(budget))
    .with_paths(std::mem::take(&mut call.paths));
    if let Some(sink) = &cx.env.progress {
        ctx = ctx.with_progress(sink.clone());
    }
    let (ctx, _cancel_link) = cx.options.attach(ctx, &token);
    let handler = tool.def().handler();
    let args = std::mem::take(&mut call.args);
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| handler(ctx, args))) {
        Ok(Ok(fut)) => fut,
        Ok(Err(e)) => {
            return Verdict::Refused(Stop::new(
                Step::Run,
                ReasonCode::InvalidArguments,
                e.message,
            ))
        }
        Err(panic) => return failed(ReasonCode::Panicked, panic_message(panic.as_ref())),
    };
    // The deadline is taken where `tokio::time::timeout` would take it: before the first poll.
    let deadline = tokio::time::Instant::now().checked_add(timeout);
    let mut fut = AssertUnwindSafe(fut).catch_unwind();
    // Cancellation wins over a first poll, as the biased `select!` below has it.
    if token.is_cancelled() {
        return failed(ReasonCode::Cancelled, "the call was cancelled".to_owned());
    }
    // Most handlers finish on their first poll; `timeout` polls the handler before its timer
    // too, so a first poll that is ready gives what the full machinery would, without a
    // timer or a cancellation waiter.
    let outcome = match futures::poll!(&mut fut) {
        std::task::Poll::Ready(r) => Ok(r),
        std::task::Poll::Pending => {
            let timed = async {
                match deadline {
                    Some(at) => tokio::time::timeout_at(at, fut).await,
                    // Past the clock's range: no timer, as `timeout` does.
                    None => Ok(fut.await),
                }
            };
            tokio::select! {
                biased;
                _ = token.cancelled() => {
                    return failed(ReasonCode::Cancelled, "the call was cancelled".to_owned())
                }
                r = timed => r,
            }
        }
    };
    drop(in_flight);
    match outcome {
        Err(_) => failed_capped(
            call,
            cap,
            ReasonCode::Timeout,
            format!("the call ran longer than {} ms", timeout.as_millis()),
        ),
        Ok(Err(panic)) => failed_capped(
            call,
            cap,
            ReasonCode::Panicked,
            panic_message(panic.as_ref()),
        ),
        Ok(Ok(ToolOutcome::Error { message })) => {
            failed_capped(call, cap, ReasonCode::ToolError, message)
        }
        Ok(Ok(ToolOutcome::Ok { modifier, .. }))
            if decl.read_only() && modifier.as_ref().is_some_and(|m| !m.is_empty()) =>
        {
            failed_capped(
                call,
                cap,
                ReasonCode::ToolError,
                format!(
                    "`{}` is declared {} and may not change the session context",
                    decl.name, decl.risk
                ),
            )
        }
        Ok(Ok(ToolOutcome::Ok { output, modifier })) => {
            let (output, cut) = cap_value(output, cap);
            call.rec.truncated = cut;
            Verdict::Ok { output, modifier }
        }
    }
}

/// A failure after the handler ran, its message cut at the output cap.
fn failed_capped(
    call: &mut CallState<'_>,
    cap: usize,
    code: ReasonCode,
    message: String,
) -> Verdict {
    let (message, cut) = cap_text(message, cap);
    call.rec.truncated = cut;
    failed(code, message)
}

/// A panic payload as text.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned());
    format!("the tool panicked: {text}")
}
