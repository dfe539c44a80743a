//! Calls served as tasks: started in the background, or once the tool's first questions are
//! answered.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CreateTaskResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::backend::{McpBackend, McpCallContext, McpCallOutcome};
use super::input::{known_answers, StatelessInput};
use super::quota::{caller_of, Caller};
use super::tasks::{AskingFirstInput, NoApprovalInTask};

use super::input_required::TOOLS_CALL;
use super::outcome::{invalid_params, result_of, REASON_CODE_KEY};
use super::server::McpServer;
use super::stateless::{tool_response, Continuation, Next};
use crate::reason::ReasonCode;

impl<B: McpBackend> McpServer<B> {
    /// Start `name` as a task: the call runs in the background, the client gets the task.
    pub(super) async fn start_task(
        &self,
        name: String,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let caller = caller_of(context);
        let started = self
            .task_store
            .create(&caller, context.client_capabilities())?;
        self.join_fleet(&started.id, &caller).await?;
        let input = started.input.bound(Arc::clone(&self.task_store));
        let ctx = McpCallContext::new(format!("task-{}", started.id), started.cancel)
            .with_approver(Arc::new(NoApprovalInTask))
            .with_input(input);
        let backend = Arc::clone(&self.backend);
        let done = self.task_store.finisher(&started.id);
        tokio::spawn(async move {
            let outcome = backend.call_tool(name.clone(), args, ctx).await;
            done.finish(task_result(&name, outcome));
        });
        Ok(started.created)
    }

    /// A task of a tool that asks first: the call runs as a task at once, and answers with it as
    /// soon as the tool's first questions are answered (or it ends); a call that ended waiting
    /// for them was no task: it answers with an input-required result, as a plain call would.
    pub(super) async fn start_task_asking_first(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let caller = caller_of(&context);
        let responses = request.input_responses.unwrap_or_default();
        let Some(states) = &self.states else {
            return Err(invalid_params(
                ReasonCode::ApprovalStateInvalid,
                "this server cannot sign a requestState (no signing key)".into(),
            ));
        };
        let rounds = Continuation {
            states: Some(states),
            method: TOOLS_CALL,
            name: &name,
            args: &args,
            caller: &caller,
        };
        let prior = rounds.redeem(request.request_state.as_deref()).await?;
        let caps = context.client_capabilities();
        let before = Arc::new(StatelessInput::new(
            caps.clone(),
            known_answers(prior.as_ref(), responses),
        ));
        let started = self.task_store.create(&caller, caps)?;
        let in_task = started.input.bound(Arc::clone(&self.task_store));
        let (input, gate) = AskingFirstInput::new(Arc::clone(&before), in_task);
        let ctx = McpCallContext::new(format!("task-{}", started.id), started.cancel.clone())
            .with_approver(Arc::new(NoApprovalInTask))
            .with_input(input);
        let (done_tx, done) = oneshot::channel::<()>();
        let backend = Arc::clone(&self.backend);
        let finisher = self.task_store.finisher(&started.id);
        let tool = name.clone();
        let call_args = args.clone();
        tokio::spawn(async move {
            let outcome = backend.call_tool(tool.clone(), call_args, ctx).await;
            finisher.finish(task_result(&tool, outcome));
            let _ = done_tx.send(());
        });
        // The gate's sender is dropped with the call's input when the call ends: only a gate
        // that was opened makes the call a task here.
        tokio::select! {
            Ok(()) = gate => return self.became_task(&started.id, &started.cancel, started.created, &caller).await,
            _ = done => {}
        }
        let round = before.take_round();
        let no_task =
            round.invalid.is_some() || round.missing.is_some() || !round.pending.is_empty();
        if !no_task {
            return self
                .became_task(&started.id, &started.cancel, started.created, &caller)
                .await;
        }
        self.task_store.remove(&started.id);
        started.cancel.cancel();
        // Invalid or unanswerable questions are errors; pending ones are asked.
        let next = rounds
            .questions(prior.as_ref(), None, round)
            .await?
            .unwrap_or_else(|| Next::Unaskable("no question is pending".into()));
        let why = |e| format!("the tool's questions could not be asked: {e}");
        Ok(tool_response(next, ReasonCode::InputLimitExceeded, why))
    }
}

impl<B: McpBackend> McpServer<B> {
    /// A call that asked first is a task now: the fleet's too, or stopped when it cannot be.
    async fn became_task(
        &self,
        id: &str,
        cancel: &CancellationToken,
        created: CreateTaskResult,
        caller: &Caller,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Err(e) = self.join_fleet(id, caller).await {
            cancel.cancel();
            return Err(e);
        }
        Ok(created.into())
    }
}

/// What a task's call came to: its tool result (also a refusal or a tool error: `isError`), or
/// a protocol error (an unknown tool; a panic, the server's failure rather than the tool's
/// answer).
fn task_result(name: &str, outcome: McpCallOutcome) -> Result<JsonObject, ErrorData> {
    match outcome {
        McpCallOutcome::UnknownTool => Err(ErrorData::invalid_params(
            format!("unknown tool `{name}`"),
            Some(json!({REASON_CODE_KEY: ReasonCode::UnknownTool, "tool": name})),
        )),
        McpCallOutcome::Failed {
            code: ReasonCode::Panicked,
            message,
            ..
        } => Err(ErrorData::internal_error(
            format!("{}: {message}", ReasonCode::Panicked),
            Some(json!({REASON_CODE_KEY: ReasonCode::Panicked})),
        )),
        other => serde_json::to_value(result_of(other))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
            .map(|v| v.as_object().cloned().unwrap_or_default()),
    }
}
