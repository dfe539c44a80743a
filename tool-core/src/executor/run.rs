//! Step `run`: the handler, under its timeout, the call's cancellation and panic isolation, with
//! its output cut at the output cap. Success is the handler's [`ToolOutcome`] variant, never
//! its text.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;

use super::output::{cap_output, cap_text, Output};
use super::state::{CallState, StepContext, Stop, Verdict};
use crate::context::ToolContext;
use crate::outcome::{is_valid_error_code, ToolOutcome, MAX_ERROR_CODE_LEN};
use crate::reason::ReasonCode;
use crate::registry::RegisteredTool;
use crate::sandbox::call::{CallSandbox, NONE};
use crate::schema::validate::violations;
use crate::status::Step;

fn failed(code: ReasonCode, message: String) -> Verdict {
    Verdict::Failed(Stop::new(Step::Run, code, message))
}

/// Run the checked and approved call.
pub(super) async fn run(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Verdict {
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
    if let Some(why) = executor.confinement.refusal(decl) {
        return Verdict::Refused(Stop::new(Step::Run, ReasonCode::SandboxUnavailable, why));
    }
    // The deadline is taken where `tokio::time::timeout` would take it: before the first poll
    // (the handler only builds its future in between). Programs the handler starts get it too.
    let deadline = tokio::time::Instant::now().checked_add(timeout);
    let async_fn = tool.def().is_async_fn();
    let sandbox = executor.confinement.call(&decl.name, async_fn, deadline);
    let mut ctx = ToolContext::for_call(
        session.shared_id(),
        call_id,
        Arc::clone(&executor.root),
        token.clone(),
        session.state(),
    )
    .with_output_budget(Some(budget))
    .with_paths(std::mem::take(&mut call.paths))
    .with_sandbox(sandbox.clone())
    .with_resources(Arc::clone(&executor.resources));
    if let Some(sink) = &cx.env.progress {
        ctx = ctx.with_progress(sink.clone());
    }
    // The call's own log sink (set by `attach` below) or its batch's wins over the configured
    // one.
    if let Some(sink) = cx.env.log.as_ref().or(executor.config.log.as_ref()) {
        ctx = ctx.with_log(sink.clone());
    }
    if let Some(handler) = cx.options.input_or(executor.config.input.as_ref()) {
        ctx = ctx.with_input(handler);
    }
    let input = ctx.input_tally();
    let (ctx, outside) = cx.options.attach(ctx, &token);
    let handler = tool.def().handler();
    let args = std::mem::take(&mut call.args);
    let typed = call.typed.take();
    // From here on the handler has started: record what confines it, however it ends.
    let enforced = Enforced(sandbox.as_deref());
    let start = || match typed {
        Some(run) => run(ctx),
        None => handler(ctx, args),
    };
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
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
    call.record.enforced = Some(NONE);
    // An async `#[tool]` handler runs on its class's confined runtime when there is one
    // (`ExecutorConfig::sandbox_async`); otherwise here, unconfined.
    let fut = match sandbox.as_deref() {
        Some(sb) if async_fn => match &sb.class().async_rt {
            Some(rt) => {
                sb.set_handler(rt.label);
                crate::sandbox::sync::run_on(rt, fut)
            }
            None => fut,
        },
        _ => fut,
    };
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
            // The outside cancellation (an MCP client's, say) cancels the call's own token, so
            // a handler that watches its context sees it too.
            let outside_fired = async {
                match &outside {
                    Some(o) => o.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                _ = token.cancelled() => {
                    call.record.enforced = Some(enforced.label());
                    return failed(ReasonCode::Cancelled, "the call was cancelled".to_owned())
                }
                _ = outside_fired => {
                    token.cancel();
                    // What the cancellation woke (a program's run, which kills its tree when it
                    // sees it) goes first, as when the call's own token fires.
                    tokio::task::yield_now().await;
                    call.record.enforced = Some(enforced.label());
                    return failed(ReasonCode::Cancelled, "the call was cancelled".to_owned())
                }
                r = timed => r,
            }
        }
    };
    drop(in_flight);
    call.record.enforced = Some(enforced.label());
    match outcome {
        Err(_) => failed_capped(
            call,
            cap,
            ReasonCode::Timeout,
            enforced.timeout_message(timeout),
        ),
        Ok(Err(panic)) => failed_capped(
            call,
            cap,
            ReasonCode::Panicked,
            panic_message(panic.as_ref()),
        ),
        Ok(Ok(ToolOutcome::Error {
            message,
            code: error_code,
        })) => {
            let (code, mut message) = enforced.error(message);
            // A tool that fails after a question failed fails for that reason.
            let code = match input.fault() {
                Some(input_code) if code == ReasonCode::ToolError => input_code,
                _ => code,
            };
            let error_code = match error_code {
                Some(c) if code == ReasonCode::ToolError && is_valid_error_code(&c) => Some(c),
                Some(_) if code == ReasonCode::ToolError => {
                    // Never passed on: it could be anything the tool was handed.
                    message.push_str(&format!(
                        " (the tool's error code was dropped: not an ASCII identifier of at most \
                         {MAX_ERROR_CODE_LEN} characters)"
                    ));
                    None
                }
                _ => None,
            };
            match failed_capped(call, cap, code, message) {
                Verdict::Failed(mut stop) => {
                    stop.error_code = error_code;
                    Verdict::Failed(stop)
                }
                other => other,
            }
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
        Ok(Ok(ToolOutcome::Ok {
            output,
            content,
            modifier,
        })) => {
            if let Err(why) = check_output(tool, &output, &content) {
                return failed_capped(call, cap, ReasonCode::ToolError, why);
            }
            let (out, cut) = cap_output(
                Output {
                    value: output,
                    content,
                },
                cap,
            );
            call.record.truncated = cut;
            Verdict::Ok {
                output: out.value,
                content: out.content,
                modifier,
            }
        }
    }
}

/// What the run step knows about a call's confinement, for its result.
struct Enforced<'a>(Option<&'a CallSandbox>);

impl Enforced<'_> {
    /// The audit label: what confined the handler and its programs.
    fn label(&self) -> &'static str {
        self.0.map_or(NONE, CallSandbox::label)
    }

    /// The code and message of a handler's error: the code a confined program's end called for
    /// (`timeout`, `cancelled`, `sandbox_unavailable`), else `tool_error`; a permission error
    /// from a confined handler says that the kernel refused it, and why.
    fn error(&self, mut message: String) -> (ReasonCode, String) {
        let Some(sb) = self.0 else {
            return (ReasonCode::ToolError, message);
        };
        if let Some(code) = sb.code() {
            return (code, message);
        }
        if sb.handler_confined() && kernel_refusal(&message) {
            message.push_str(&refusal_hint(sb));
        }
        (ReasonCode::ToolError, message)
    }

    fn timeout_message(&self, timeout: std::time::Duration) -> String {
        let mut m = format!("the call ran longer than {} ms", timeout.as_millis());
        if let Some(sb) = self.0.filter(|sb| sb.waited()) {
            m.push_str(&format!(
                " (it waited for one of its tool's {} confined slots: earlier calls of this \
                 tool still hold them)",
                sb.tool.slot_count
            ));
        }
        m
    }
}

/// Whether a confined handler's error looks like the kernel sandbox refused it: a permission
/// error (`EACCES`, `EPERM`, `EROFS`, as `std::io::Error` or libc prints them) or SQLite's
/// report of a journal it could not create.
fn kernel_refusal(message: &str) -> bool {
    [
        "os error 13)",
        "os error 1)",
        "os error 30)",
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "attempt to write a readonly database",
    ]
    .iter()
    .any(|p| message.contains(p))
}

/// What a kernel refusal adds to a confined handler's error: what confined it, from which
/// declaration, and how to declare more.
fn refusal_hint(sb: &CallSandbox) -> String {
    let class = sb.class();
    let decl = &sb.tool.decl;
    let declared = format!(
        "`risk = \"{}\"`{}",
        decl.risk.as_str(),
        if decl.open_world {
            ", `open_world`"
        } else {
            ""
        }
    );
    let granted = match &class.grants {
        Some(g) => format!("; its resources grant: {g}"),
        None => String::new(),
    };
    format!(
        " [denied by the kernel sandbox ({}): `{}` is declared {declared}, so it runs confined \
         as `{}`: {}{granted}. To reach a path, UNIX socket or TCP port outside that, declare it \
         with the resource the tool takes: `ExecutorConfig::resource_with_grants(value, \
         Grants::new().read_write(dir))` (or `.read(path)`, `.unix_socket(path)`, \
         `.connect(host, port)`), or declare the tool `open_world` for the network]",
        class.handler_label, decl.name, class.name, class.rules
    )
}

/// Check a successful output before it leaves: every content block ([`Content::check`]), and
/// the output value against the declared output schema (a `Json<T>` whose value does not match
/// its schema is a bug in the tool, not something to pass on).
///
/// [`Content::check`]: crate::content::Content::check
fn check_output(
    tool: &RegisteredTool,
    output: &serde_json::Value,
    content: &[crate::content::Content],
) -> Result<(), String> {
    let name = &tool.decl().name;
    for (i, block) in content.iter().enumerate() {
        block
            .check()
            .map_err(|e| format!("`{name}` returned an invalid content block #{i}: {e}"))?;
    }
    if let Some(v) = tool.output_validator() {
        if !v.is_valid(output) {
            let found: Vec<String> = violations(v, output)
                .iter()
                .map(ToString::to_string)
                .collect();
            return Err(format!(
                "the output of `{name}` does not match its output schema: {}",
                found.join("; ")
            ));
        }
    }
    Ok(())
}

/// A failure after the handler ran, its message cut at the output cap.
fn failed_capped(
    call: &mut CallState<'_>,
    cap: usize,
    code: ReasonCode,
    message: String,
) -> Verdict {
    let (message, cut) = cap_text(message, cap);
    call.record.truncated = cut;
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
