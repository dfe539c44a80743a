//! The 2026-07-28 rounds: a stateless call or `prompts/get` whose approval and questions travel
//! through input-required results and signed `requestState`s.
//!
//! Tool calls, prompts and calls that become tasks once asked share one path: [`Continuation`]
//! redeems the echoed state and issues the next one. An approval question is asked only when
//! the approver answered [`ApprovalDecision::Pending`](crate::approval::ApprovalDecision): a
//! denial always ends the call.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InputRequiredResult, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::backend::{McpBackend, McpCallOutcome};
use super::fleet::store_refusal;
use super::input::{known_answers, Round, StatelessInput};
use super::input_required::{
    approval_answer, approval_question, args_hash, supports_form_elicitation, tool_questions,
    AnsweredApprover, ApprovalMark, ApprovalStates, AskingApprover, GrantedApprover, Progress,
    RecordingApprover, MAX_INPUT_ROUNDS, PROMPTS_GET, TOOLS_CALL,
};
use super::outcome::{invalid_params, missing_capability, result_of, too_many_rounds};
use super::prompts::PromptInput;
use super::quota::{caller_of, Caller};
use super::server::McpServer;
use crate::approval::Approver;
use crate::input::InputHandler;
use crate::reason::ReasonCode;

/// A stateless request that may continue over rounds: the method, name, arguments and caller
/// its states are bound to, and the server's signing key.
pub(super) struct Continuation<'a> {
    pub(super) states: Option<&'a ApprovalStates>,
    pub(super) method: &'static str,
    pub(super) name: &'a str,
    pub(super) args: &'a JsonObject,
    pub(super) caller: &'a Caller,
}

/// Where a round goes next, when it does not end with the request's own result.
pub(super) enum Next {
    /// Ask these questions; the state in the result carries the progress.
    Ask(InputRequiredResult),
    /// More rounds than [`MAX_INPUT_ROUNDS`].
    TooManyRounds,
    /// The questions cannot be asked (the state cannot be made), and why.
    Unaskable(String),
}

impl Continuation<'_> {
    /// The progress the echoed `state` carries, verified and used up; `None` without a state.
    pub(super) async fn redeem(&self, state: Option<&str>) -> Result<Option<Progress>, ErrorData> {
        let Some(state) = state else {
            return Ok(None);
        };
        let Some(states) = self.states else {
            return Err(invalid_params(
                ReasonCode::ApprovalStateInvalid,
                "this server cannot verify a requestState (no signing key)".into(),
            ));
        };
        match states
            .redeem_for(state, self.method, self.name, self.args, self.caller)
            .await
        {
            Ok(progress) => Ok(Some(progress)),
            Err(r) if r.code == ReasonCode::StoreUnavailable => Err(store_refusal(r.message)),
            Err(r) => Err(invalid_params(r.code, r.message)),
        }
    }

    /// The next round after `prior`: `progress` (given the round's number) sealed into a state,
    /// asked by `ask`. `None` when this server cannot sign states.
    pub(super) async fn next(
        &self,
        prior: Option<&Progress>,
        progress: impl FnOnce(u32) -> Progress,
        ask: impl FnOnce(String) -> Result<InputRequiredResult, String>,
    ) -> Result<Option<Next>, ErrorData> {
        let Some(states) = self.states else {
            return Ok(None);
        };
        let round = prior.map_or(0, |p| p.round).saturating_add(1);
        if round > MAX_INPUT_ROUNDS {
            return Ok(Some(Next::TooManyRounds));
        }
        let sealed = states
            .issue_for(
                self.method,
                self.name,
                self.args,
                self.caller,
                &progress(round),
            )
            .await?;
        Ok(Some(match sealed.and_then(ask) {
            Ok(q) => Next::Ask(q),
            Err(e) => Next::Unaskable(e),
        }))
    }

    /// What a run's own questions come to: an error for an answer that does not fit or a
    /// question the client cannot answer; the next round when questions are pending (the
    /// approval, if any, carried as `approval`); `None` when nothing was asked.
    pub(super) async fn questions(
        &self,
        prior: Option<&Progress>,
        approval: Option<ApprovalMark>,
        round: Round,
    ) -> Result<Option<Next>, ErrorData> {
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        if round.pending.is_empty() {
            return Ok(None);
        }
        let Round { pending, used, .. } = round;
        self.next(
            prior,
            |n| Progress::after_round(n, approval, used, &pending),
            |state| tool_questions(&pending, state),
        )
        .await
    }
}

impl<B: McpBackend> McpServer<B> {
    /// A 2026-07-28 call: approval and the tool's questions through input-required results.
    pub(super) async fn call_stateless(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let caps = context.client_capabilities();
        let caller = caller_of(&context);
        let responses = request.input_responses.unwrap_or_default();
        let rounds = Continuation {
            states: self.states.as_deref(),
            method: TOOLS_CALL,
            name: &name,
            args: &args,
            caller: &caller,
        };
        let prior = rounds.redeem(request.request_state.as_deref()).await?;
        let progress = prior.clone().unwrap_or_default();
        let asking =
            AskingApprover::new(supports_form_elicitation(caps.as_ref()) && self.states.is_some());
        let base: Arc<dyn Approver> = match (&progress.approval, progress.ticket(&name)) {
            (Some(ApprovalMark::Granted { .. }), Some(ticket)) => GrantedApprover::new(ticket),
            (Some(ApprovalMark::Asked { .. }), Some(ticket)) => {
                match approval_answer(Some(&responses)) {
                    Some(Ok(answer)) => AnsweredApprover::new(ticket, answer),
                    Some(Err(e)) => return Err(invalid_params(ReasonCode::MalformedCall, e)),
                    // No answer to the question: ask it again, with a new state.
                    None => asking.clone(),
                }
            }
            _ => asking.clone(),
        };
        let approver = RecordingApprover::new(base);
        let input = Arc::new(StatelessInput::new(
            caps.clone(),
            known_answers(prior.as_ref(), responses),
        ));
        let outcome = self
            .run_call(
                name.clone(),
                args.clone(),
                approver.clone(),
                Some(input.clone()),
                &context,
            )
            .await?;
        let round = input.take_round();
        // The approver answered "pending": the call stopped before it ran, to ask the question.
        let pending = matches!(
            outcome,
            McpCallOutcome::Refused {
                code: ReasonCode::InputRequired,
                ..
            }
        );
        if let (true, Some(asked)) = (pending, asking.asked()) {
            let next = rounds
                .next(
                    prior.as_ref(),
                    |n| Progress {
                        round: n,
                        approval: Some(ApprovalMark::Asked {
                            args: args_hash(&asked.args),
                        }),
                        answers: progress.answers.clone(),
                        asked: Default::default(),
                    },
                    |state| approval_question(&asked, state),
                )
                .await?;
            let why = |e| format!("the approval question could not be built: {e}");
            return Ok(match next {
                Some(next) => tool_response(next, ReasonCode::ApprovalDenied, why),
                None => result_of(outcome).into(),
            });
        }
        if matches!(outcome, McpCallOutcome::Ok { .. }) {
            return Ok(result_of(outcome).into());
        }
        let granted = approver.approved().or(match &progress.approval {
            Some(ApprovalMark::Granted { args }) => Some(args.clone()),
            _ => None,
        });
        let approval = granted.map(|args| ApprovalMark::Granted { args });
        let next = rounds.questions(prior.as_ref(), approval, round).await?;
        let why = |e| format!("the tool's questions could not be asked: {e}");
        Ok(match next {
            Some(next) => tool_response(next, ReasonCode::InputLimitExceeded, why),
            None => result_of(outcome).into(),
        })
    }

    /// A 2026-07-28 `prompts/get`: the prompt's questions through input-required results, its
    /// state bound to the prompt, its arguments and the caller.
    pub(super) async fn prompt_stateless(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let args = request.arguments.clone().unwrap_or_default();
        let caller = caller_of(&context);
        let responses = request.input_responses.take().unwrap_or_default();
        let rounds = Continuation {
            states: self.states.as_deref(),
            method: PROMPTS_GET,
            name: &name,
            args: &args,
            caller: &caller,
        };
        let prior = rounds
            .redeem(request.request_state.take().as_deref())
            .await?;
        let input = Arc::new(StatelessInput::new(
            context.client_capabilities(),
            known_answers(prior.as_ref(), responses),
        ));
        let handler: Arc<dyn InputHandler> = input.clone();
        let built = self
            .catalog
            .get_prompt(
                &request,
                PromptInput::new(Some(handler), context.ct.clone()),
            )
            .await;
        let error = match built {
            Ok(result) => return Ok(result.into()),
            Err(e) => e,
        };
        match rounds
            .questions(prior.as_ref(), None, input.take_round())
            .await?
        {
            None => Err(error),
            Some(Next::Ask(q)) => Ok(q.into()),
            Some(Next::TooManyRounds) => Err(invalid_params(
                ReasonCode::InputLimitExceeded,
                format!("the prompt asked for input in more than {MAX_INPUT_ROUNDS} rounds"),
            )),
            Some(Next::Unaskable(e)) => Err(invalid_params(
                ReasonCode::InputLimitExceeded,
                format!("the prompt's questions could not be asked: {e}"),
            )),
        }
    }
}

/// A tool call's response for where its round goes: the questions, the refusal of too many
/// rounds, or a `code` result when the questions cannot be asked (`why` gives the message).
pub(super) fn tool_response(
    next: Next,
    code: ReasonCode,
    why: impl FnOnce(String) -> String,
) -> CallToolResponse {
    match next {
        Next::Ask(q) => q.into(),
        Next::TooManyRounds => too_many_rounds().into(),
        Next::Unaskable(e) if code.is_refusal() => {
            result_of(McpCallOutcome::refused(code, why(e))).into()
        }
        Next::Unaskable(e) => result_of(McpCallOutcome::failed(code, why(e))).into(),
    }
}
