//! Approval through input-required results (MCP 2026-07-28, SEP-2322).
//!
//! A stateless request cannot be answered by a server-to-client elicitation, so a call that
//! needs approval ends with an `InputRequiredResult`: the approval form as an `elicitation/create`
//! input request, and a `requestState` the client echoes back with its answer. The state is
//! HMAC-SHA256 signed with a key made when the process starts, bound to the tool name and the
//! hash of the canonical arguments, valid for a few minutes and good for one answer: a changed,
//! forged, expired or already used state is refused with a stable reason code before anything
//! runs, and an approval answer never covers other arguments. On the retry the call goes through
//! the executor's whole pipeline again; the answer approves only a request for the same tool
//! whose final arguments hash to what was asked about.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ElicitResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::elicitation::{approval_params, interpret_answer};
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::reason::ReasonCode;
use crate::schema::canonical::canonical_bytes;

/// The key of the approval question in `inputRequests` and `inputResponses`.
pub(super) const APPROVAL_INPUT_KEY: &str = "approval";

/// How long an approval question stays answerable.
const STATE_TTL: Duration = Duration::from_secs(300);

/// Domain separation of the signed context, so a state can never verify for another purpose.
const CONTEXT_LABEL: &[u8] = b"declared-tools/mcp/approval-state/v1";

/// Why an echoed `requestState` was refused (a JSON-RPC invalid-params error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StateRefusal {
    pub(super) code: ReasonCode,
    pub(super) message: String,
}

/// What a verified state says was asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ticket {
    tool: String,
    approval_args: String,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// One-time id of the question.
    nonce: String,
    tool: String,
    /// SHA-256 of the canonical final arguments the approver was asked about.
    approval_args: String,
}

/// Signs approval states and remembers which were used. One per server, shared by every request.
pub(super) struct ApprovalStates {
    codec: RequestStateCodec,
    /// Nonces already answered, until their state has expired anyway.
    used: Mutex<HashMap<String, Instant>>,
}

impl std::fmt::Debug for ApprovalStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalStates").finish_non_exhaustive()
    }
}

impl ApprovalStates {
    /// A fresh signing key from the operating system's random source.
    pub(super) fn new() -> Result<Self, String> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("no random source for the key: {e}"))?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(|e| e.to_string())?;
        Ok(ApprovalStates {
            codec,
            used: Mutex::new(HashMap::new()),
        })
    }

    /// The state for a question about `req`, asked by a call of `tool` with `client_args`.
    pub(super) fn issue(
        &self,
        tool: &str,
        client_args: &Map<String, Value>,
        req: &ApprovalRequest,
    ) -> Result<String, String> {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).map_err(|e| format!("no random source: {e}"))?;
        let payload = Payload {
            nonce: hex::encode(nonce),
            tool: tool.to_owned(),
            approval_args: args_hash(&req.args),
        };
        let context = signed_context(tool, client_args);
        self.codec
            .seal_json_with(
                &payload,
                &SealOptions::new().associated_data(&context).ttl(STATE_TTL),
            )
            .map_err(|e| e.to_string())
    }

    /// Verify an echoed state for a call of `tool` with `client_args`, and use it up.
    pub(super) fn redeem(
        &self,
        state: &str,
        tool: &str,
        client_args: &Map<String, Value>,
    ) -> Result<Ticket, StateRefusal> {
        let context = signed_context(tool, client_args);
        let payload: Payload =
            self.codec
                .open_json_with(state, &context)
                .map_err(|e| StateRefusal {
                    code: ReasonCode::ApprovalStateInvalid,
                    message: match e {
                        RequestStateError::Expired => {
                            "the approval question has expired; call the tool again".to_owned()
                        }
                        _ => "the requestState does not verify: it was changed, forged, or issued \
                          for another tool or other arguments"
                            .to_owned(),
                    },
                })?;
        let now = Instant::now();
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, until| *until > now);
        if used.contains_key(&payload.nonce) {
            return Err(StateRefusal {
                code: ReasonCode::ApprovalStateReplayed,
                message: "this requestState was already answered; an approval is good for one call"
                    .to_owned(),
            });
        }
        used.insert(payload.nonce, now + STATE_TTL);
        Ok(Ticket {
            tool: payload.tool,
            approval_args: payload.approval_args,
        })
    }
}

/// What the state is bound to: the tool and the exact arguments of the call.
fn signed_context(tool: &str, client_args: &Map<String, Value>) -> Vec<u8> {
    let mut context = CONTEXT_LABEL.to_vec();
    context.push(0);
    context.extend_from_slice(tool.as_bytes());
    context.push(0);
    context.extend_from_slice(args_hash(&Value::Object(client_args.clone())).as_bytes());
    context
}

/// SHA-256 (hex) of the canonical JSON of `args` (keys sorted at every level).
fn args_hash(args: &Value) -> String {
    hex::encode(Sha256::digest(canonical_bytes(args)))
}

/// `true` when the request's client capabilities include form elicitation.
pub(super) fn supports_form_elicitation(caps: Option<&ClientCapabilities>) -> bool {
    caps.and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The client's answer to the approval question, if it sent one. `Err` when the answer is not an
/// elicitation result.
pub(super) fn approval_answer(
    responses: Option<&InputResponses>,
) -> Option<Result<ElicitResult, String>> {
    let answer = responses?.get(APPROVAL_INPUT_KEY)?;
    Some(
        serde_json::from_value::<ElicitResult>(answer.clone()).map_err(|e| {
            format!("inputResponses.{APPROVAL_INPUT_KEY} is not an elicitation result: {e}")
        }),
    )
}

/// The input-required result that asks the approval question `req`.
pub(super) fn approval_question(
    req: &ApprovalRequest,
    state: String,
) -> Result<InputRequiredResult, String> {
    // No session outlives a stateless request, so no session grant is offered.
    let mut once = req.clone();
    once.session_grant_allowed = false;
    let params = approval_params(&once)?;
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": params,
    }))
    .map_err(|e| format!("could not build the approval input request: {e}"))?;
    let mut requests = InputRequests::new();
    requests.insert(APPROVAL_INPUT_KEY.to_owned(), request);
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// The first round's approver: records the question to ask it through an input-required result,
/// and denies the call meanwhile (it does not run in this round). Without form elicitation in
/// the request's capabilities it denies, as any approval nobody can give.
pub(super) struct AskingApprover {
    can_ask: bool,
    asked: Mutex<Option<ApprovalRequest>>,
}

impl AskingApprover {
    pub(super) fn new(can_ask: bool) -> Arc<Self> {
        Arc::new(AskingApprover {
            can_ask,
            asked: Mutex::new(None),
        })
    }

    /// The question, when one was asked.
    pub(super) fn asked(&self) -> Option<ApprovalRequest> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Approver for AskingApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if !self.can_ask {
                return ApprovalDecision::Deny {
                    reason: "approval needed, and the client does not support elicitation".into(),
                };
            }
            *self.asked.lock().unwrap_or_else(|p| p.into_inner()) = Some(request.clone());
            ApprovalDecision::Deny {
                reason: "approval is asked of the client through an input-required result".into(),
            }
        })
    }
}

/// The retry's approver: the client's answer, for the one question the verified state names.
pub(super) struct AnsweredApprover {
    ticket: Ticket,
    answer: ElicitResult,
    spent: AtomicBool,
}

impl AnsweredApprover {
    pub(super) fn new(ticket: Ticket, answer: ElicitResult) -> Arc<Self> {
        Arc::new(AnsweredApprover {
            ticket,
            answer,
            spent: AtomicBool::new(false),
        })
    }
}

impl Approver for AnsweredApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if self.spent.swap(true, Ordering::SeqCst) {
                return ApprovalDecision::Deny {
                    reason: "one approval answer covers one question".into(),
                };
            }
            if request.tool != self.ticket.tool
                || args_hash(&request.args) != self.ticket.approval_args
            {
                return ApprovalDecision::Deny {
                    reason: "the approval was given for other arguments".into(),
                };
            }
            let mut once = request.clone();
            once.session_grant_allowed = false;
            interpret_answer(
                self.answer.action.clone(),
                self.answer.content.as_ref(),
                &once,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalReason;
    use crate::decl::Risk;

    fn req(args: Value) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            call_id: "1".into(),
            tool: "write".into(),
            risk: Risk::Mutation,
            args,
            reason: ApprovalReason::Risk {
                risk: Risk::Mutation,
            },
            session_grant_allowed: true,
            round: 0,
        }
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_state_verifies_once_for_its_tool_and_arguments() {
        let states = ApprovalStates::new().expect("key");
        let args = obj(json!({"path": "a", "text": "x"}));
        let state = states
            .issue("write", &args, &req(json!({"path": "a", "text": "x"})))
            .expect("sealed");
        // Key order does not change the canonical arguments.
        let reordered = obj(json!({"text": "x", "path": "a"}));
        let ticket = states
            .redeem(&state, "write", &reordered)
            .expect("verifies");
        assert_eq!(ticket.tool, "write");
        let again = states.redeem(&state, "write", &args).expect_err("replay");
        assert_eq!(again.code, ReasonCode::ApprovalStateReplayed);
    }

    #[test]
    fn other_arguments_tools_or_bytes_do_not_verify() {
        let states = ApprovalStates::new().expect("key");
        let args = obj(json!({"path": "a"}));
        let state = states
            .issue("write", &args, &req(json!({"path": "a"})))
            .expect("sealed");
        let other = obj(json!({"path": "b"}));
        for (s, tool, a) in [
            (state.clone(), "write", &other),
            (state.clone(), "delete", &args),
            (format!("{state}x"), "write", &args),
        ] {
            let e = states.redeem(&s, tool, a).expect_err("refused");
            assert_eq!(e.code, ReasonCode::ApprovalStateInvalid);
        }
        // Another process's key does not verify it either.
        let e = ApprovalStates::new()
            .expect("key")
            .redeem(&state, "write", &args)
            .expect_err("other key");
        assert_eq!(e.code, ReasonCode::ApprovalStateInvalid);
        // The refusals did not use it up.
        assert!(states.redeem(&state, "write", &args).is_ok());
    }

    #[tokio::test]
    async fn an_answer_approves_only_the_arguments_asked_about() {
        let states = ApprovalStates::new().expect("key");
        let asked = req(json!({"path": "a"}));
        let args = obj(json!({"path": "a"}));
        let state = states.issue("write", &args, &asked).expect("sealed");
        let ticket = states.redeem(&state, "write", &args).expect("verifies");
        let answer: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {"approve": true}}))
                .expect("answer");
        let approver = AnsweredApprover::new(ticket.clone(), answer.clone());
        assert!(matches!(
            approver.decide(&req(json!({"path": "b"}))).await,
            ApprovalDecision::Deny { .. }
        ));
        let approver = AnsweredApprover::new(ticket, answer);
        // A session grant is never honoured over a stateless request.
        assert_eq!(approver.decide(&asked).await, ApprovalDecision::Approve);
        assert!(matches!(
            approver.decide(&asked).await,
            ApprovalDecision::Deny { .. }
        ));
    }

    #[test]
    fn the_question_is_an_elicitation_input_request() {
        let q = approval_question(&req(json!({})), "s".into()).expect("question");
        let v = serde_json::to_value(&q).expect("json");
        assert_eq!(v["resultType"], "input_required");
        assert_eq!(v["requestState"], "s");
        assert_eq!(
            v["inputRequests"][APPROVAL_INPUT_KEY]["method"],
            "elicitation/create"
        );
        let props =
            &v["inputRequests"][APPROVAL_INPUT_KEY]["params"]["requestedSchema"]["properties"];
        assert!(props.get("approve").is_some());
        assert!(props.get("for_session").is_none());
    }
}
