//! A tool's questions over MCP: the two [`InputHandler`]s the server gives a call.
//!
//! - [`PeerInput`], for a 2025-11-25 session: each question is a server-to-client request
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) the call waits for.
//! - [`StatelessInput`], for a 2026-07-28 request: questions answered earlier (carried in the
//!   verified `requestState`, or in this request's `inputResponses`) are answered; the others are
//!   recorded, the tool gets [`InputError::Pending`], and the server ends the call with an
//!   input-required result that asks them.
//!
//! Either way a question of a kind the client did not declare is refused, and every answer is
//! checked ([`InputRequest::read_answer`]) before the tool sees it.

use std::collections::BTreeMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
// Sampling and roots are deprecated by SEP-2577, and still what a 2025-11-25 client speaks.
#[allow(deprecated)]
use rmcp::model::{ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::input::{InputAnswer, InputError, InputHandler, InputKind, InputRequest};
use crate::schema::canonical::canonical_bytes;

/// SHA-256 (hex) of a question's canonical MCP request: what an answer is bound to.
pub(super) fn request_hash(request: &InputRequest) -> String {
    hex::encode(Sha256::digest(canonical_bytes(&request.mcp_request())))
}

/// `true` when `caps` declare what questions of `kind` need (form elicitation: an
/// `elicitation` capability with `form`, or with neither mode named).
pub(super) fn declares(caps: Option<&ClientCapabilities>, kind: InputKind) -> bool {
    let Some(caps) = caps else { return false };
    match kind {
        InputKind::Elicitation => caps
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        InputKind::Sampling => caps.sampling.is_some(),
        InputKind::Roots => caps.roots.is_some(),
    }
}

/// Questions as server-to-client requests of a 2025-11-25 session.
pub(super) struct PeerInput {
    peer: Peer<RoleServer>,
}

impl PeerInput {
    pub(super) fn new(peer: Peer<RoleServer>) -> Self {
        PeerInput { peer }
    }

    #[allow(deprecated)]
    async fn ask_one(&self, request: &InputRequest) -> Result<Value, String> {
        let params = request.mcp_params();
        let answer = match request.kind() {
            InputKind::Elicitation => {
                let p: ElicitRequestParams =
                    serde_json::from_value(params).map_err(|e| e.to_string())?;
                serde_json::to_value(
                    self.peer
                        .create_elicitation(p)
                        .await
                        .map_err(|e| e.to_string())?,
                )
            }
            InputKind::Sampling => {
                let p: CreateMessageRequestParams =
                    serde_json::from_value(params).map_err(|e| e.to_string())?;
                let r = self.peer.create_message(p).await;
                serde_json::to_value(r.map_err(|e| e.to_string())?)
            }
            InputKind::Roots => {
                let r = self.peer.list_roots().await;
                serde_json::to_value(r.map_err(|e| e.to_string())?)
            }
        };
        answer.map_err(|e| e.to_string())
    }
}

impl InputHandler for PeerInput {
    fn supports(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::Elicitation => self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form),
            _ => {
                let info = self.peer.peer_info();
                declares(info.as_deref().map(|i| &i.capabilities), kind)
            }
        }
    }

    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>> {
        Box::pin(async move {
            let mut answers = Vec::with_capacity(requests.len());
            for (id, request) in requests {
                let value = self
                    .ask_one(request)
                    .await
                    .map_err(|e| InputError::Unavailable {
                        kind: request.kind(),
                        reason: format!("the client did not answer question `{id}`: {e}"),
                    })?;
                let answer = request
                    .read_answer(&value)
                    .map_err(|e| InputError::Invalid(format!("question `{id}`: {e}")))?;
                answers.push(answer);
            }
            Ok(answers)
        })
    }
}

/// An answer known before the tool runs: its JSON, and the hash of the question it answers
/// (`None` for an answer the client sent with no `requestState`, before any question).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KnownAnswer {
    pub(super) value: Value,
    pub(super) request: Option<String>,
}

/// What one stateless run of a tool asked and used.
#[derive(Debug, Default)]
pub(super) struct Round {
    /// Unanswered questions, in the order asked, with their hashes.
    pub(super) pending: Vec<(String, InputRequest, String)>,
    /// Answers the tool used, with the hash of the question each answered.
    pub(super) used: BTreeMap<String, (Value, String)>,
    /// An answer that does not fit its question.
    pub(super) invalid: Option<String>,
    /// A question of a kind the client did not declare.
    pub(super) missing: Option<InputKind>,
}

/// Questions of a 2026-07-28 request: answered from what is known, else asked in the result.
pub(super) struct StatelessInput {
    caps: Option<ClientCapabilities>,
    known: BTreeMap<String, KnownAnswer>,
    round: Mutex<Round>,
}

impl StatelessInput {
    pub(super) fn new(
        caps: Option<ClientCapabilities>,
        known: BTreeMap<String, KnownAnswer>,
    ) -> Self {
        StatelessInput {
            caps,
            known,
            round: Mutex::new(Round::default()),
        }
    }

    /// What the run asked and used.
    pub(super) fn take_round(&self) -> Round {
        std::mem::take(&mut *self.round.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl InputHandler for StatelessInput {
    fn supports(&self, kind: InputKind) -> bool {
        declares(self.caps.as_ref(), kind)
    }

    fn refused(&self, kind: InputKind) {
        self.round.lock().unwrap_or_else(|p| p.into_inner()).missing = Some(kind);
    }

    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>> {
        Box::pin(async move {
            let mut round = self.round.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, r)) = requests.iter().find(|(_, r)| !self.supports(r.kind())) {
                round.missing = Some(r.kind());
                return Err(InputError::Unavailable {
                    kind: r.kind(),
                    reason: format!("the client did not declare the `{}` capability", r.kind()),
                });
            }
            let mut answers = Vec::with_capacity(requests.len());
            let mut unanswered = Vec::new();
            for (id, request) in requests {
                let hash = request_hash(request);
                if round.pending.iter().any(|(p, _, h)| p == id && *h != hash)
                    || round.used.get(id).is_some_and(|(_, h)| *h != hash)
                {
                    return Err(InputError::BadRequest(format!(
                        "question id `{id}` was used for two different questions"
                    )));
                }
                // An answer counts only for the question it was given to.
                let known = self
                    .known
                    .get(id)
                    .filter(|k| k.request.as_ref().is_none_or(|h| *h == hash));
                match known {
                    Some(k) => match request.read_answer(&k.value) {
                        Ok(a) => {
                            round.used.insert(id.clone(), (k.value.clone(), hash));
                            answers.push(a);
                        }
                        Err(e) => {
                            let why = format!("inputResponses.{id}: {e}");
                            round.invalid = Some(why.clone());
                            return Err(InputError::Invalid(why));
                        }
                    },
                    None => unanswered.push((id.clone(), request.clone(), hash)),
                }
            }
            if unanswered.is_empty() {
                return Ok(answers);
            }
            for q in unanswered {
                if !round.pending.iter().any(|(p, _, _)| *p == q.0) {
                    round.pending.push(q);
                }
            }
            Err(InputError::Pending)
        })
    }
}

/// The answers a stateless run of the tool starts with: those the verified state carries, and
/// this request's `inputResponses` to the questions the state's round asked. Without a state,
/// the responses answer whatever the tool asks (a client answering before it was asked: its
/// word either way); the approval key is never one of them.
pub(super) fn known_answers(
    prior: Option<&super::input_required::Progress>,
    responses: rmcp::model::InputResponses,
) -> BTreeMap<String, KnownAnswer> {
    let mut known: BTreeMap<String, KnownAnswer> = prior
        .map(|p| {
            p.answers
                .iter()
                .map(|(id, a)| {
                    let answer = KnownAnswer {
                        value: a.value.clone(),
                        request: Some(a.request.clone()),
                    };
                    (id.clone(), answer)
                })
                .collect()
        })
        .unwrap_or_default();
    for (id, value) in responses {
        if id == super::input_required::APPROVAL_INPUT_KEY {
            continue;
        }
        let request = match prior {
            Some(p) => match p.asked.get(&id) {
                Some(hash) => Some(hash.clone()),
                // Not asked in the round this answers: ignored.
                None => continue,
            },
            None => None,
        };
        known.insert(id, KnownAnswer { value, request });
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: Value) -> Option<ClientCapabilities> {
        Some(serde_json::from_value(v).expect("capabilities"))
    }

    fn name_form() -> InputRequest {
        InputRequest::form(
            "name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
    }

    #[tokio::test]
    async fn an_answer_counts_only_for_the_question_it_answered() {
        let form = name_form();
        let other = InputRequest::form(
            "colour?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let known = BTreeMap::from([(
            "q".to_owned(),
            KnownAnswer {
                value: json!({"action": "accept", "content": {"name": "A"}}),
                request: Some(request_hash(&form)),
            },
        )]);
        let input = StatelessInput::new(caps(json!({"elicitation": {}})), known);
        assert!(input.ask(&[("q".into(), form)]).await.is_ok());
        assert_eq!(
            input.ask(&[("q".into(), other)]).await,
            Err(InputError::BadRequest(
                "question id `q` was used for two different questions".into()
            ))
        );
    }

    #[tokio::test]
    async fn unanswered_questions_are_pending_and_undeclared_kinds_refused() {
        let input = std::sync::Arc::new(StatelessInput::new(
            caps(json!({"sampling": {}})),
            BTreeMap::new(),
        ));
        let ctx = crate::context::ToolContext::new("s", "c", "/").with_input(input.clone());
        assert!(matches!(
            ctx.elicit("q", "name?", json!({"type": "object", "properties": {}}))
                .await,
            Err(InputError::Unavailable { .. })
        ));
        let sample = crate::input::Sampling::prompt("hi", 5);
        assert_eq!(ctx.sample("s", sample).await, Err(InputError::Pending));
        let round = input.take_round();
        assert_eq!(round.missing, Some(InputKind::Elicitation));
        assert_eq!(round.pending.len(), 1);
    }
}
