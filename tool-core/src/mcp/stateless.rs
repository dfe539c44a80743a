//! The 2026-07-28 rounds: a stateless call or `prompts/get` whose approval and questions travel
//! through input-required results and signed `requestState`s.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::backend::{McpBackend, McpCallOutcome};
use super::input::{known_answers, StatelessInput};
use super::input_required::{
    approval_answer, approval_question, args_hash, supports_form_elicitation, tool_questions,
    AnsweredApprover, ApprovalMark, AskingApprover, GrantedApprover, Progress, RecordingApprover,
    MAX_INPUT_ROUNDS, PROMPTS_GET,
};
use super::prompts::PromptInput;
use super::quota::caller_of;

use super::outcome::{invalid_params, missing_capability, result_of, too_many_rounds};
use super::server::McpServer;
use crate::approval::Approver;
use crate::input::InputHandler;
use crate::reason::ReasonCode;

impl<B: McpBackend> McpServer<B> {
    /// A 2026-07-28 call: approval and the tool's questions through input-required results.
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
        let prior = match (request.request_state.as_deref(), &self.states) {
            (Some(state), Some(states)) => Some(
                states
                    .redeem(state, &name, &args, &caller)
                    .map_err(|r| invalid_params(r.code, r.message))?,
            ),
            (Some(_), None) => {
                return Err(invalid_params(
                    ReasonCode::ApprovalStateInvalid,
                    "this server cannot verify a requestState (no signing key)".into(),
                ))
            }
            (None, _) => None,
        };
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
        let next_round = progress.round.saturating_add(1);
        if let (
            Some(asked),
            Some(states),
            McpCallOutcome::Refused {
                code: ReasonCode::ApprovalDenied,
                ..
            },
        ) = (asking.asked(), &self.states, &outcome)
        {
            let next = Progress {
                round: next_round,
                approval: Some(ApprovalMark::Asked {
                    args: args_hash(&asked.args),
                }),
                answers: progress.answers.clone(),
                asked: Default::default(),
            };
            if next_round > MAX_INPUT_ROUNDS {
                return Ok(too_many_rounds().into());
            }
            let question = states
                .issue(&name, &args, &caller, &next)?
                .and_then(|state| approval_question(&asked, state));
            return match question {
                Ok(q) => Ok(q.into()),
                Err(e) => Ok(result_of(McpCallOutcome::refused(
                    ReasonCode::ApprovalDenied,
                    format!("the approval question could not be built: {e}"),
                ))
                .into()),
            };
        }
        if matches!(outcome, McpCallOutcome::Ok { .. }) {
            return Ok(result_of(outcome).into());
        }
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        if let (false, Some(states)) = (round.pending.is_empty(), &self.states) {
            if next_round > MAX_INPUT_ROUNDS {
                return Ok(too_many_rounds().into());
            }
            let granted = approver.approved().or(match &progress.approval {
                Some(ApprovalMark::Granted { args }) => Some(args.clone()),
                _ => None,
            });
            let next = Progress::after_round(
                next_round,
                granted.map(|args| ApprovalMark::Granted { args }),
                round.used,
                &round.pending,
            );
            let questions = states
                .issue(&name, &args, &caller, &next)?
                .and_then(|state| tool_questions(&round.pending, state));
            return Ok(match questions {
                Ok(q) => q.into(),
                Err(e) => result_of(McpCallOutcome::failed(
                    ReasonCode::InputLimitExceeded,
                    format!("the tool's questions could not be asked: {e}"),
                ))
                .into(),
            });
        }
        Ok(result_of(outcome).into())
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
        let prior = match (request.request_state.take(), &self.states) {
            (Some(state), Some(states)) => Some(
                states
                    .redeem_for(&state, PROMPTS_GET, &name, &args, &caller)
                    .map_err(|r| invalid_params(r.code, r.message))?,
            ),
            (Some(_), None) => {
                return Err(invalid_params(
                    ReasonCode::ApprovalStateInvalid,
                    "this server cannot verify a requestState (no signing key)".into(),
                ))
            }
            (None, _) => None,
        };
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
        let round = input.take_round();
        if let Some(why) = round.invalid {
            return Err(invalid_params(ReasonCode::InputInvalid, why));
        }
        if let Some(kind) = round.missing {
            return Err(missing_capability(kind));
        }
        let (false, Some(states)) = (round.pending.is_empty(), &self.states) else {
            return Err(error);
        };
        let next_round = prior.map_or(0, |p| p.round).saturating_add(1);
        if next_round > MAX_INPUT_ROUNDS {
            return Err(invalid_params(
                ReasonCode::InputLimitExceeded,
                format!("the prompt asked for input in more than {MAX_INPUT_ROUNDS} rounds"),
            ));
        }
        let next = Progress::after_round(next_round, None, round.used, &round.pending);
        states
            .issue_for(PROMPTS_GET, &name, &args, &caller, &next)?
            .and_then(|state| tool_questions(&round.pending, state))
            .map(Into::into)
            .map_err(|e| {
                invalid_params(
                    ReasonCode::InputLimitExceeded,
                    format!("the prompt's questions could not be asked: {e}"),
                )
            })
    }
}
