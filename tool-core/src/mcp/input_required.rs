//! Approval and a tool's own questions through input-required results (MCP 2026-07-28,
//! SEP-2322).
//!
//! A stateless request cannot be answered by a server-to-client request, so a call that needs
//! approval, or whose tool asks a question ([`crate::input`]), ends with an
//! `InputRequiredResult`: the questions as input requests (the approval form under
//! [`APPROVAL_INPUT_KEY`]), and a `requestState` the client echoes back with its answers. The
//! state is HMAC-SHA256 signed with a key made when the process starts, bound to the tool name,
//! the hash of the canonical arguments and the caller (the hash of the request's
//! `Authorization` header, empty when there is none), valid for a few minutes and good for one
//! retry: a changed, forged, expired, re-targeted or already used state is refused with a
//! stable reason code before anything runs. It carries the call's progress: the round, the
//! approval (asked, or granted for the hash of the final arguments), the answers the tool used
//! so far (each bound to the hash of the question it answered) and the questions asked last.
//! On the retry the call goes through the executor's whole pipeline again and the tool runs
//! again from the start, its earlier answers available; an approval answer never covers other
//! arguments, and at most [`MAX_INPUT_ROUNDS`] rounds are asked. An issued state is an
//! outstanding round of its client until it is used or expires, within the client's quota
//! ([`super::quota`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ElicitResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, RequestStateCodec, RequestStateError, SealOptions,
};
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::elicitation::{approval_params, interpret_answer};
use super::quota::{Caller, ClientQuotas, Rounds};
use super::state_key::StateKeys;
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::input::APPROVAL_INPUT_ID;
use crate::reason::ReasonCode;
use crate::schema::canonical::canonical_bytes;
use crate::store::Store;

/// The key of the approval question in `inputRequests` and `inputResponses`.
pub(super) const APPROVAL_INPUT_KEY: &str = APPROVAL_INPUT_ID;

/// How long a question stays answerable.
const STATE_TTL: Duration = Duration::from_secs(300);

/// Most rounds of questions one call may ask (the approval counts as one).
pub const MAX_INPUT_ROUNDS: u32 = 8;

/// Most bytes of answers one `requestState` carries.
pub const MAX_STATE_ANSWER_BYTES: usize = 128 * 1024;

/// Domain separation of the signed context, so a state can never verify for another purpose.
const CONTEXT_LABEL: &[u8] = b"declared-tools/mcp/request-state/v3";

/// The method of a tool call's states.
pub(super) const TOOLS_CALL: &str = "tools/call";

/// The method of a prompt's states.
pub(super) const PROMPTS_GET: &str = "prompts/get";

/// Why an echoed `requestState` was refused (a JSON-RPC invalid-params error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StateRefusal {
    pub(super) code: ReasonCode,
    pub(super) message: String,
}

/// What a verified state says was approved or asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ticket {
    tool: String,
    approval_args: String,
}

/// Where the approval stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(super) enum ApprovalMark {
    /// The question was asked about the final arguments with this hash.
    Asked {
        /// SHA-256 of the canonical final arguments.
        args: String,
    },
    /// The user approved the final arguments with this hash.
    Granted {
        /// SHA-256 of the canonical final arguments.
        args: String,
    },
}

/// An answer the tool used, and the hash of the question it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredAnswer {
    pub(super) request: String,
    pub(super) value: Value,
}

/// A call's progress, as a state carries it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Progress {
    /// Rounds asked so far (the state of round `n` was issued by round `n`).
    #[serde(default)]
    pub(super) round: u32,
    #[serde(default)]
    pub(super) approval: Option<ApprovalMark>,
    /// Answers the tool used, by question id.
    #[serde(default)]
    pub(super) answers: BTreeMap<String, StoredAnswer>,
    /// The questions this state's round asked: id → hash of the question.
    #[serde(default)]
    pub(super) asked: BTreeMap<String, String>,
}

impl Progress {
    /// The progress after round number `round` of a request: its approval mark, the answers
    /// the run used and the questions it left pending.
    pub(super) fn after_round(
        round: u32,
        approval: Option<ApprovalMark>,
        used: BTreeMap<String, (Value, String)>,
        pending: &[(String, crate::input::InputRequest, String)],
    ) -> Progress {
        Progress {
            round,
            approval,
            answers: used
                .into_iter()
                .map(|(id, (value, request))| (id, StoredAnswer { request, value }))
                .collect(),
            asked: pending
                .iter()
                .map(|(id, _, hash)| (id.clone(), hash.clone()))
                .collect(),
        }
    }

    /// The approval ticket, when the approval was asked or granted.
    pub(super) fn ticket(&self, tool: &str) -> Option<Ticket> {
        match &self.approval {
            Some(ApprovalMark::Asked { args }) | Some(ApprovalMark::Granted { args }) => {
                Some(Ticket {
                    tool: tool.to_owned(),
                    approval_args: args.clone(),
                })
            }
            None => None,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// One-time id of the state.
    nonce: String,
    /// The method whose request it continues (`tools/call`, `prompts/get`).
    method: String,
    tool: String,
    #[serde(flatten)]
    progress: Progress,
}

/// Signs states and remembers which were used. One per server, shared by every request; with a
/// shared store and key, one per fleet in effect.
pub(super) struct ApprovalStates {
    codec: RequestStateCodec,
    /// Where the nonces already used are marked (`used:NONCE`, until their state expired anyway).
    store: Arc<dyn Store>,
    /// Nonces issued and not yet used, per client.
    rounds: Rounds,
}

/// A state, or why it could not be made (the questions cannot be asked).
pub(super) type Sealed = Result<String, String>;

impl std::fmt::Debug for ApprovalStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalStates").finish_non_exhaustive()
    }
}

impl ApprovalStates {
    /// States signed with `keys`, marked used and counted in `store`, within these bounds on
    /// outstanding rounds.
    pub(super) fn new(
        keys: &StateKeys,
        quotas: &ClientQuotas,
        store: Arc<dyn Store>,
    ) -> Result<Self, String> {
        Ok(ApprovalStates {
            codec: keys.codec()?,
            rounds: Rounds::new(quotas, Arc::clone(&store)),
            store,
        })
    }

    /// A fresh key and a store of its own (tests).
    #[cfg(test)]
    pub(super) fn generated(quotas: &ClientQuotas) -> Self {
        let keys = StateKeys::generate().expect("random source");
        let store: Arc<dyn Store> = Arc::new(crate::store::MemoryStore::new());
        ApprovalStates::new(&keys, quotas, store).expect("codec")
    }

    /// The state for a call of `tool` with `client_args` by `caller` that got this far (tests;
    /// the server goes through [`super::stateless::Continuation`]). `Err`
    /// when the caller has its quota of outstanding rounds (the JSON-RPC error to answer with).
    #[cfg(test)]
    pub(super) async fn issue(
        &self,
        tool: &str,
        client_args: &Map<String, Value>,
        caller: &Caller,
        progress: &Progress,
    ) -> Result<Sealed, ErrorData> {
        self.issue_for(TOOLS_CALL, tool, client_args, caller, progress)
            .await
    }

    /// The state for a `method` request about `name` (a tool, a prompt) with `client_args` by
    /// `caller` that got this far, counted as one of its outstanding rounds.
    pub(super) async fn issue_for(
        &self,
        method: &str,
        tool: &str,
        client_args: &Map<String, Value>,
        caller: &Caller,
        progress: &Progress,
    ) -> Result<Sealed, ErrorData> {
        let answer_bytes: usize = progress
            .answers
            .values()
            .map(|a| serde_json::to_vec(&a.value).map_or(usize::MAX, |b| b.len()))
            .fold(0, usize::saturating_add);
        if answer_bytes > MAX_STATE_ANSWER_BYTES {
            return Ok(Err(format!(
                "the answers so far have {answer_bytes} bytes; at most \
                 {MAX_STATE_ANSWER_BYTES} are carried from round to round"
            )));
        }
        let mut nonce = [0u8; 16];
        if let Err(e) = getrandom::fill(&mut nonce) {
            return Ok(Err(format!("no random source: {e}")));
        }
        let payload = Payload {
            nonce: hex::encode(nonce),
            method: method.to_owned(),
            tool: tool.to_owned(),
            progress: progress.clone(),
        };
        self.rounds
            .open(&caller.client, &payload.nonce, STATE_TTL)
            .await?;
        let context = signed_context(method, tool, client_args, &caller.id);
        let sealed = self.codec.seal_json_with(
            &payload,
            &SealOptions::new().associated_data(&context).ttl(STATE_TTL),
        );
        if sealed.is_err() {
            // Never sent: not outstanding.
            self.rounds.close(&caller.client, &payload.nonce).await;
        }
        Ok(sealed.map_err(|e| e.to_string()))
    }

    /// Verify an echoed state for a call of `tool` with `client_args` by `caller`, and use it up
    /// (tests; the server goes through [`super::stateless::Continuation`]).
    #[cfg(test)]
    pub(super) async fn redeem(
        &self,
        state: &str,
        tool: &str,
        client_args: &Map<String, Value>,
        caller: &Caller,
    ) -> Result<Progress, StateRefusal> {
        self.redeem_for(state, TOOLS_CALL, tool, client_args, caller)
            .await
    }

    /// Verify an echoed state for a `method` request about `tool` with `client_args` by
    /// `caller`, and use it up: marked used in the store first, so that of two replicas
    /// redeeming one state exactly one succeeds. A store that cannot answer refuses the state
    /// (`store_unavailable`): it is never taken as unused because it could not be checked.
    pub(super) async fn redeem_for(
        &self,
        state: &str,
        method: &str,
        tool: &str,
        client_args: &Map<String, Value>,
        caller: &Caller,
    ) -> Result<Progress, StateRefusal> {
        let context = signed_context(method, tool, client_args, &caller.id);
        let payload: Payload =
            self.codec
                .open_json_with(state, &context)
                .map_err(|e| StateRefusal {
                    code: ReasonCode::ApprovalStateInvalid,
                    message: match e {
                        RequestStateError::Expired => {
                            "the question has expired; call the tool again".to_owned()
                        }
                        _ => "the requestState does not verify: it was changed, forged, or issued \
                          for another tool, other arguments or another caller"
                            .to_owned(),
                    },
                })?;
        if payload.tool != tool || payload.method != method {
            return Err(StateRefusal {
                code: ReasonCode::ApprovalStateInvalid,
                message: "the requestState was issued for another tool".to_owned(),
            });
        }
        let used = format!("used:{}", payload.nonce);
        match self.store.claim(&used, b"1", STATE_TTL).await {
            Ok(true) => {}
            Ok(false) => {
                return Err(StateRefusal {
                    code: ReasonCode::ApprovalStateReplayed,
                    message: "this requestState was already used; a state is good for one retry"
                        .to_owned(),
                })
            }
            Err(e) => {
                return Err(StateRefusal {
                    code: ReasonCode::StoreUnavailable,
                    message: format!(
                        "the requestState could not be checked against the used ones ({e}); \
                         nothing ran; send it again shortly"
                    ),
                })
            }
        }
        // Answered: the round is no longer outstanding, whatever the retry comes to.
        self.rounds.close(&caller.client, &payload.nonce).await;
        Ok(payload.progress)
    }
}

/// What the state is bound to: the method, the tool (or prompt), the exact arguments of the
/// request and the caller.
fn signed_context(
    method: &str,
    tool: &str,
    client_args: &Map<String, Value>,
    caller: &str,
) -> Vec<u8> {
    let mut context = CONTEXT_LABEL.to_vec();
    context.push(0);
    context.extend_from_slice(method.as_bytes());
    context.push(0);
    context.extend_from_slice(tool.as_bytes());
    context.push(0);
    context.extend_from_slice(args_hash(&Value::Object(client_args.clone())).as_bytes());
    context.push(0);
    context.extend_from_slice(caller.as_bytes());
    context
}

/// SHA-256 (hex) of the canonical JSON of `args` (keys sorted at every level).
pub(super) fn args_hash(args: &Value) -> String {
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

/// The input-required result that asks a tool's questions (`pending`: id, question, hash).
pub(super) fn tool_questions(
    pending: &[(String, crate::input::InputRequest, String)],
    state: String,
) -> Result<InputRequiredResult, String> {
    let mut requests = InputRequests::new();
    for (id, question, _) in pending {
        let request: InputRequest = serde_json::from_value(question.mcp_request())
            .map_err(|e| format!("question `{id}` is not a valid MCP input request: {e}"))?;
        requests.insert(id.clone(), request);
    }
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// Records what the approver it wraps approved: the hash of the final arguments, so that the
/// next round's state can carry the grant.
pub(super) struct RecordingApprover {
    inner: Arc<dyn Approver>,
    approved: Mutex<Option<String>>,
}

impl RecordingApprover {
    pub(super) fn new(inner: Arc<dyn Approver>) -> Arc<Self> {
        Arc::new(RecordingApprover {
            inner,
            approved: Mutex::new(None),
        })
    }

    /// The hash of the arguments approved in this run, if any were.
    pub(super) fn approved(&self) -> Option<String> {
        self.approved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Approver for RecordingApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let decision = self.inner.decide(request).await;
            if matches!(
                decision,
                ApprovalDecision::Approve | ApprovalDecision::ApproveForSession
            ) {
                *self.approved.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(args_hash(&request.args));
            }
            decision
        })
    }
}

/// A later round's approver: the user approved these final arguments in an earlier round (the
/// verified state says so); it approves exactly them, once.
pub(super) struct GrantedApprover {
    ticket: Ticket,
    spent: AtomicBool,
}

impl GrantedApprover {
    pub(super) fn new(ticket: Ticket) -> Arc<Self> {
        Arc::new(GrantedApprover {
            ticket,
            spent: AtomicBool::new(false),
        })
    }
}

impl Approver for GrantedApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if self.spent.swap(true, Ordering::SeqCst) {
                return ApprovalDecision::Deny {
                    reason: "one approval covers one question".into(),
                };
            }
            if request.tool != self.ticket.tool
                || args_hash(&request.args) != self.ticket.approval_args
            {
                return ApprovalDecision::Deny {
                    reason: "the approval was given for other arguments".into(),
                };
            }
            ApprovalDecision::Approve
        })
    }
}

/// The first round's approver: records the question to ask it through an input-required result,
/// and answers [`ApprovalDecision::Pending`] (the call does not run in this round). Without form
/// elicitation in the request's capabilities it denies, as any approval nobody can give.
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
            ApprovalDecision::Pending
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
mod tests;
