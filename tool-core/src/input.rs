//! Input a tool asks for in the middle of a call: a form the user fills in (elicitation), a
//! completion from the caller's model (sampling) or the caller's roots.
//!
//! A tool asks through [`ToolContext::ask`](crate::context::ToolContext::ask) (or
//! [`elicit`](crate::context::ToolContext::elicit), [`sample`](crate::context::ToolContext::sample),
//! [`list_roots`](crate::context::ToolContext::list_roots)); who answers is the call's
//! [`InputHandler`]. Over MCP that is the client: for a 2025-11-25 session, server-to-client
//! requests the call waits for; for a stateless 2026-07-28 request, an input-required result —
//! the call ends with [`InputError::Pending`] and runs again, from the start, with the answers
//! available (a tool that asks must ask before it acts). Without a handler (the command line,
//! unless one is configured) every question is refused with `input_unavailable`; a client that
//! did not declare the capability a question needs is refused too. Answers are checked before the
//! tool sees them: their shape, their size, and an accepted form against the form's schema.
//!
//! Every question has an id the tool chooses (`[A-Za-z0-9_.-]`, at most [`MAX_INPUT_ID_LEN`]
//! bytes; [`APPROVAL_INPUT_ID`] is reserved for the approval question); a round asks at most
//! [`MAX_REQUESTS_PER_ROUND`] questions.

use std::fmt;

use futures::future::BoxFuture;
use serde_json::{json, Map, Value};

use crate::reason::ReasonCode;

/// The id of the approval question, which no tool may use for its own.
pub const APPROVAL_INPUT_ID: &str = "approval";

/// Longest question id, in bytes.
pub const MAX_INPUT_ID_LEN: usize = 64;

/// Most questions one round may ask.
pub const MAX_REQUESTS_PER_ROUND: usize = 16;

/// Most questions one call may ask, over all its rounds.
pub const MAX_REQUESTS_PER_CALL: usize = 64;

/// Largest answer, in bytes of its JSON.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024;

/// Most roots one answer may list.
pub const MAX_ROOTS: usize = 256;

/// What kind of input a question asks for (and which client capability it needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// A form the user fills in (MCP `elicitation/create`, form mode; capability `elicitation`).
    Elicitation,
    /// A message from the caller's model (MCP `sampling/createMessage`; capability `sampling`).
    Sampling,
    /// The caller's roots (MCP `roots/list`; capability `roots`).
    Roots,
}

impl InputKind {
    /// The MCP method that asks it.
    pub fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// The client capability it needs.
    pub fn capability(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.capability())
    }
}

/// Who speaks a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// A request for a message from the caller's model.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampling {
    /// The conversation so far: who said what (text).
    pub messages: Vec<(Role, String)>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// A system prompt, if any.
    pub system_prompt: Option<String>,
}

impl Sampling {
    /// One user message, answered in at most `max_tokens` tokens.
    pub fn prompt(text: impl Into<String>, max_tokens: u32) -> Self {
        Sampling {
            messages: vec![(Role::User, text.into())],
            max_tokens,
            system_prompt: None,
        }
    }
}

/// One question a tool asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// A form: a message for the user and the JSON Schema of what they fill in (an object of
    /// primitive properties, as MCP form elicitation allows).
    Form {
        /// What the user is asked.
        message: String,
        /// The form's schema (`{"type": "object", "properties": {...}}`).
        schema: Value,
    },
    /// A message from the caller's model.
    Sample(Sampling),
    /// The caller's roots.
    Roots,
}

impl InputRequest {
    /// A form.
    pub fn form(message: impl Into<String>, schema: Value) -> Self {
        InputRequest::Form {
            message: message.into(),
            schema,
        }
    }

    /// A message from the caller's model.
    pub fn sample(sampling: Sampling) -> Self {
        InputRequest::Sample(sampling)
    }

    /// The caller's roots.
    pub fn roots() -> Self {
        InputRequest::Roots
    }

    /// What kind of input it asks for.
    pub fn kind(&self) -> InputKind {
        match self {
            InputRequest::Form { .. } => InputKind::Elicitation,
            InputRequest::Sample(_) => InputKind::Sampling,
            InputRequest::Roots => InputKind::Roots,
        }
    }

    /// The MCP request params (`elicitation/create`, `sampling/createMessage`, `roots/list`).
    pub fn mcp_params(&self) -> Value {
        match self {
            InputRequest::Form { message, schema } => json!({
                "mode": "form",
                "message": message,
                "requestedSchema": schema,
            }),
            InputRequest::Sample(s) => {
                let messages: Vec<Value> = s
                    .messages
                    .iter()
                    .map(|(role, text)| {
                        json!({"role": role.as_str(), "content": {"type": "text", "text": text}})
                    })
                    .collect();
                let mut p = json!({"messages": messages, "maxTokens": s.max_tokens});
                if let Some(system) = &s.system_prompt {
                    p["systemPrompt"] = json!(system);
                }
                p
            }
            InputRequest::Roots => json!({}),
        }
    }

    /// The whole MCP request (`{"method": ..., "params": ...}`).
    pub fn mcp_request(&self) -> Value {
        json!({"method": self.kind().method(), "params": self.mcp_params()})
    }

    /// Why the question cannot be asked as written (a mistake of the tool), if it cannot.
    fn problem(&self) -> Option<String> {
        match self {
            InputRequest::Form { schema, .. } => {
                let object = schema.get("type") == Some(&json!("object"))
                    && schema.get("properties").is_some_and(Value::is_object);
                if !object {
                    return Some(
                        "a form's schema must be an object schema with `properties`".to_owned(),
                    );
                }
                crate::schema::validate::compile(schema)
                    .err()
                    .map(|e| format!("the form's schema does not compile: {e}"))
            }
            InputRequest::Sample(s) if s.messages.is_empty() || s.max_tokens == 0 => {
                Some("a sampling request needs a message and a token limit above 0".to_owned())
            }
            _ => None,
        }
    }

    /// The answer in `value` (the MCP result of this request), checked: its shape, its size, and
    /// an accepted form's content against the form's schema.
    pub fn read_answer(&self, value: &Value) -> Result<InputAnswer, String> {
        let size = serde_json::to_vec(value).map_or(usize::MAX, |b| b.len());
        if size > MAX_ANSWER_BYTES {
            return Err(format!(
                "the answer has {size} bytes; at most {MAX_ANSWER_BYTES} are accepted"
            ));
        }
        let obj = value
            .as_object()
            .ok_or_else(|| "the answer is not a JSON object".to_owned())?;
        match self {
            InputRequest::Form { schema, .. } => {
                let action = obj.get("action").and_then(Value::as_str);
                match action {
                    Some("accept") => {}
                    Some("decline") => return Ok(InputAnswer::Form(FormAnswer::Decline)),
                    Some("cancel") => return Ok(InputAnswer::Form(FormAnswer::Cancel)),
                    _ => {
                        return Err(
                            "a form answer needs `action`: accept, decline or cancel".to_owned()
                        )
                    }
                }
                let content = match obj.get("content") {
                    Some(Value::Object(m)) => m.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => return Err("an accepted form's `content` is not an object".into()),
                };
                let validator = crate::schema::validate::compile(schema)?;
                let wrong = crate::schema::validate::violations(
                    &validator,
                    &Value::Object(content.clone()),
                );
                if let Some(v) = wrong.first() {
                    return Err(format!(
                        "the form's content does not match its schema: {} {}",
                        v.path, v.message
                    ));
                }
                Ok(InputAnswer::Form(FormAnswer::Accept(content)))
            }
            InputRequest::Sample(_) => {
                let role = match obj.get("role").and_then(Value::as_str) {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    _ => return Err("a sampling answer needs `role`: user or assistant".into()),
                };
                let content = obj
                    .get("content")
                    .filter(|c| c.is_object() || c.is_array())
                    .cloned()
                    .ok_or_else(|| "a sampling answer needs `content`".to_owned())?;
                let model = obj
                    .get("model")
                    .and_then(Value::as_str)
                    .ok_or_else(|| "a sampling answer needs `model`".to_owned())?
                    .to_owned();
                let stop_reason = obj
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                Ok(InputAnswer::Message(SampledMessage {
                    role,
                    content,
                    model,
                    stop_reason,
                }))
            }
            InputRequest::Roots => {
                let list = obj
                    .get("roots")
                    .and_then(Value::as_array)
                    .ok_or_else(|| "a roots answer needs a `roots` array".to_owned())?;
                if list.len() > MAX_ROOTS {
                    return Err(format!("at most {MAX_ROOTS} roots are accepted"));
                }
                let roots = list
                    .iter()
                    .map(|r| {
                        let uri = r
                            .get("uri")
                            .and_then(Value::as_str)
                            .ok_or_else(|| "every root needs a `uri` string".to_owned())?;
                        Ok(Root {
                            uri: uri.to_owned(),
                            name: r.get("name").and_then(Value::as_str).map(str::to_owned),
                        })
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok(InputAnswer::Roots(roots))
            }
        }
    }
}

/// The answer to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// The user filled it in: the content matches the form's schema.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed it.
    Cancel,
}

/// A message from the caller's model.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledMessage {
    /// Who speaks it (the model: `assistant`).
    pub role: Role,
    /// The content block(s), as MCP has them.
    pub content: Value,
    /// The model that wrote it.
    pub model: String,
    /// Why it stopped, when the client says.
    pub stop_reason: Option<String>,
}

impl SampledMessage {
    /// The text, when the content is (or starts with) a text block.
    pub fn text(&self) -> Option<&str> {
        let block = match &self.content {
            Value::Array(blocks) => blocks.first()?,
            block => block,
        };
        (block.get("type")? == "text")
            .then(|| block.get("text")?.as_str())
            .flatten()
    }
}

/// One of the caller's roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Its URI (`file:///...`).
    pub uri: String,
    /// Its name, when the client gives one.
    pub name: Option<String>,
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputAnswer {
    /// To a form.
    Form(FormAnswer),
    /// To a sampling request.
    Message(SampledMessage),
    /// To a roots request.
    Roots(Vec<Root>),
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputError {
    /// Nobody can answer it: no handler (the command line), or a client that did not declare
    /// the capability (`input_unavailable`).
    Unavailable {
        /// What was asked.
        kind: InputKind,
        /// Why it cannot be answered.
        reason: String,
    },
    /// The question travels to the client in an input-required result; the call runs again with
    /// the answer (`input_required`). Return, propagating this error.
    Pending,
    /// An answer does not fit its question (`input_invalid`).
    Invalid(String),
    /// Too many questions (`input_limit_exceeded`).
    Limit(String),
    /// The question itself is wrong: a bad or reused id, a schema that does not compile (a
    /// mistake of the tool: `tool_error`).
    BadRequest(String),
    /// The call was cancelled while waiting (`cancelled`).
    Cancelled,
}

impl InputError {
    /// The reason code a call that fails with this error gets.
    pub fn code(&self) -> ReasonCode {
        match self {
            InputError::Unavailable { .. } => ReasonCode::InputUnavailable,
            InputError::Pending => ReasonCode::InputRequired,
            InputError::Invalid(_) => ReasonCode::InputInvalid,
            InputError::Limit(_) => ReasonCode::InputLimitExceeded,
            InputError::BadRequest(_) => ReasonCode::ToolError,
            InputError::Cancelled => ReasonCode::Cancelled,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Unavailable { kind, reason } => {
                write!(f, "the tool asked for {kind} input: {reason}")
            }
            InputError::Pending => f.write_str(
                "the question was sent to the client; the call continues when it answers",
            ),
            InputError::Invalid(why) => write!(f, "an answer does not fit its question: {why}"),
            InputError::Limit(why) => write!(f, "too many questions: {why}"),
            InputError::BadRequest(why) => write!(f, "the tool asked a malformed question: {why}"),
            InputError::Cancelled => f.write_str("the call was cancelled while waiting for input"),
        }
    }
}

impl std::error::Error for InputError {}

/// So that a tool returning `Result<_, String>` can propagate an input error with `?`.
impl From<InputError> for String {
    fn from(e: InputError) -> String {
        e.to_string()
    }
}

/// Who answers a call's questions.
pub trait InputHandler: Send + Sync {
    /// `true` when questions of this kind can be answered (the client declared the capability).
    fn supports(&self, kind: InputKind) -> bool;

    /// A question of this kind was refused before [`InputHandler::ask`], for want of the
    /// capability (so that the server can say which one was missing). Default: nothing.
    fn refused(&self, kind: InputKind) {
        let _ = kind;
    }

    /// Answer one round of questions (checked: valid ids, unique, within the round limit, of
    /// kinds [`InputHandler::supports`] accepts), in order.
    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>>;
}

/// One round of questions from a tool call or a prompt (`asker`, for the messages): checked,
/// counted against [`MAX_REQUESTS_PER_CALL`] in `asked`, refused without a `handler` or when it
/// does not support a kind, cancelled with `cancel`, and answered one answer per question.
pub(crate) async fn ask_round(
    handler: Option<&dyn InputHandler>,
    asked: &std::sync::atomic::AtomicUsize,
    cancel: &tokio_util::sync::CancellationToken,
    requests: &[(String, InputRequest)],
    asker: &str,
) -> Result<Vec<InputAnswer>, InputError> {
    check_round(requests)?;
    let before = asked.fetch_add(requests.len(), std::sync::atomic::Ordering::SeqCst);
    if before + requests.len() > MAX_REQUESTS_PER_CALL {
        return Err(InputError::Limit(format!(
            "more than {MAX_REQUESTS_PER_CALL} questions in one {asker}"
        )));
    }
    let Some(handler) = handler else {
        return Err(InputError::Unavailable {
            kind: requests[0].1.kind(),
            reason: "nobody can answer here (no input handler is configured)".into(),
        });
    };
    if let Some((_, r)) = requests.iter().find(|(_, r)| !handler.supports(r.kind())) {
        handler.refused(r.kind());
        return Err(InputError::Unavailable {
            kind: r.kind(),
            reason: format!("the client did not declare the `{}` capability", r.kind()),
        });
    }
    let answers = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(InputError::Cancelled),
        a = handler.ask(requests) => a?,
    };
    if answers.len() != requests.len() {
        return Err(InputError::Invalid(format!(
            "{} answers to {} questions",
            answers.len(),
            requests.len()
        )));
    }
    Ok(answers)
}

/// Check one round of questions before any handler sees it.
pub(crate) fn check_round(requests: &[(String, InputRequest)]) -> Result<(), InputError> {
    if requests.is_empty() {
        return Err(InputError::BadRequest("no question was asked".into()));
    }
    if requests.len() > MAX_REQUESTS_PER_ROUND {
        return Err(InputError::Limit(format!(
            "{} questions in one round; at most {MAX_REQUESTS_PER_ROUND}",
            requests.len()
        )));
    }
    for (i, (id, request)) in requests.iter().enumerate() {
        let valid = !id.is_empty()
            && id.len() <= MAX_INPUT_ID_LEN
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(InputError::BadRequest(format!(
                "question id `{}` is not 1 to {MAX_INPUT_ID_LEN} of [A-Za-z0-9_.-]",
                id.escape_debug()
            )));
        }
        if id == APPROVAL_INPUT_ID {
            return Err(InputError::BadRequest(format!(
                "question id `{APPROVAL_INPUT_ID}` is reserved for the approval question"
            )));
        }
        if requests[..i].iter().any(|(other, _)| other == id) {
            return Err(InputError::BadRequest(format!(
                "question id `{id}` is used twice"
            )));
        }
        if let Some(problem) = request.problem() {
            return Err(InputError::BadRequest(format!(
                "question `{id}`: {problem}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_form() -> InputRequest {
        InputRequest::form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        )
    }

    #[test]
    fn a_form_answer_is_checked_against_the_forms_schema() {
        let form = name_form();
        assert_eq!(
            form.read_answer(&json!({"action": "accept", "content": {"name": "Alice"}})),
            Ok(InputAnswer::Form(FormAnswer::Accept(
                json!({"name": "Alice"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            )))
        );
        assert!(form
            .read_answer(&json!({"action": "accept", "content": {"name": 5}}))
            .is_err());
        assert!(form
            .read_answer(&json!({"action": "accept", "content": {}}))
            .is_err());
        assert!(form.read_answer(&json!(12345)).is_err());
        assert!(form.read_answer(&json!({"action": "maybe"})).is_err());
        assert_eq!(
            form.read_answer(&json!({"action": "decline"})),
            Ok(InputAnswer::Form(FormAnswer::Decline))
        );
    }

    #[test]
    fn sampling_and_roots_answers_need_their_fields() {
        let s = InputRequest::sample(Sampling::prompt("hi", 10));
        let ok = s
            .read_answer(&json!({"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}))
            .expect("valid");
        match ok {
            InputAnswer::Message(m) => assert_eq!(m.text(), Some("yo")),
            other => panic!("{other:?}"),
        }
        assert!(s.read_answer(&json!({"role": "assistant"})).is_err());
        let r = InputRequest::roots();
        assert!(r
            .read_answer(&json!({"roots": [{"uri": "file:///a"}]}))
            .is_ok());
        assert!(r.read_answer(&json!({"roots": [{"name": "x"}]})).is_err());
        let big = "x".repeat(MAX_ANSWER_BYTES);
        assert!(r
            .read_answer(&json!({"roots": [{"uri": big}]}))
            .is_err_and(|e| e.contains("bytes")));
    }

    #[test]
    fn rounds_are_checked_for_ids_count_and_schemas() {
        assert!(check_round(&[("a".into(), name_form())]).is_ok());
        for bad in [
            "",
            "a b",
            APPROVAL_INPUT_ID,
            &"x".repeat(MAX_INPUT_ID_LEN + 1),
        ] {
            let e = check_round(&[(bad.to_owned(), name_form())]).expect_err(bad);
            assert_eq!(e.code(), ReasonCode::ToolError, "{bad}");
        }
        let twice = [("a".to_owned(), name_form()), ("a".to_owned(), name_form())];
        assert!(check_round(&twice).is_err());
        let many: Vec<_> = (0..=MAX_REQUESTS_PER_ROUND)
            .map(|i| (format!("q{i}"), InputRequest::roots()))
            .collect();
        assert_eq!(
            check_round(&many).map_err(|e| e.code()),
            Err(ReasonCode::InputLimitExceeded)
        );
        let not_object = InputRequest::form("?", json!({"type": "string"}));
        assert!(check_round(&[("a".into(), not_object)]).is_err());
    }
}
