//! MCP prompts: message templates an application registers (`prompts/list`, `prompts/get`).
//!
//! A [`Prompt`] declares its arguments (name, description, required or not, an optional
//! [`Completer`] for `completion/complete`) and a function that builds its messages from the
//! argument values. Messages carry the same [`Content`] blocks tools return: text, images,
//! audio, embedded resources, resource links.
//!
//! `prompts/get` checks the arguments before the function runs: an unknown prompt, a missing
//! required argument, an argument the prompt does not declare, or values over the size cap are
//! JSON-RPC `-32602` errors whose `data` names the reason code and the offending arguments.
//!
//! A prompt made with [`Prompt::asking`] may ask the user (or the caller's model, or its roots)
//! before it builds its messages, through [`PromptInput`]: the same questions, checks and limits
//! as a tool's ([`crate::input`]). Over a stateless (2026-07-28) request the questions travel in
//! an input-required result with a signed, single-use `requestState`, and the prompt is built
//! again from the start with the answers; over a 2025-11-25 session they are server-to-client
//! requests the prompt waits for.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{Prompt as McpPrompt, PromptArgument as McpArgument, PromptMessage, Role};
use rmcp::ErrorData;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::completion::Completer;
use super::content::to_mcp;
use crate::content::Content;
use crate::input::{
    ask_round, FormAnswer, InputAnswer, InputError, InputHandler, InputKind, InputRequest,
};
use crate::reason::ReasonCode;

/// The most bytes all argument values of one `prompts/get` may have together.
pub const MAX_PROMPT_ARGS_BYTES: usize = 64 * 1024;

/// Who a prompt message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who it is from.
    pub role: PromptRole,
    /// What it says.
    pub content: Content,
}

impl Message {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Message {
            role: PromptRole::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Message {
            role: PromptRole::Assistant,
            content: content.into(),
        }
    }
}

/// One declared argument of a prompt.
#[derive(Debug, Clone)]
pub struct PromptArgument {
    name: String,
    description: Option<String>,
    required: bool,
    completer: Option<Completer>,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: None,
            required: true,
            completer: None,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name)
        }
    }

    /// With a description for the client.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Suggest values for `completion/complete`.
    pub fn with_completer(mut self, completer: Completer) -> Self {
        self.completer = Some(completer);
        self
    }
}

/// The argument values of one `prompts/get`, checked against the declaration.
#[derive(Debug, Clone, Default)]
pub struct PromptArgs {
    values: BTreeMap<String, String>,
}

impl PromptArgs {
    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

/// Who answers the questions of one `prompts/get`, and the request's cancellation.
#[derive(Clone)]
pub struct PromptInput {
    handler: Option<Arc<dyn InputHandler>>,
    cancel: CancellationToken,
    asked: Arc<AtomicUsize>,
}

impl std::fmt::Debug for PromptInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptInput")
            .field("handler", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl PromptInput {
    /// Nobody answers: every question is refused with `input_unavailable`.
    pub fn none() -> Self {
        PromptInput::new(None, CancellationToken::new())
    }

    /// Questions go to `handler` (none: refused) until `cancel` fires.
    pub fn new(handler: Option<Arc<dyn InputHandler>>, cancel: CancellationToken) -> Self {
        PromptInput {
            handler,
            cancel,
            asked: Arc::default(),
        }
    }

    /// `true` when questions of this kind can be asked (the client declared the capability).
    pub fn can_ask(&self, kind: InputKind) -> bool {
        self.handler.as_ref().is_some_and(|h| h.supports(kind))
    }

    /// Ask one round of questions, as a tool does
    /// ([`ToolContext::ask`](crate::context::ToolContext::ask)): over a stateless request the
    /// first run ends with [`InputError::Pending`] (return it with `?`) and the prompt is built
    /// again once the client answers.
    pub async fn ask(
        &self,
        requests: Vec<(String, InputRequest)>,
    ) -> Result<Vec<InputAnswer>, InputError> {
        ask_round(
            self.handler.as_deref(),
            &self.asked,
            &self.cancel,
            &requests,
            "prompt",
        )
        .await
    }

    /// Ask the user to fill in a form.
    pub async fn elicit(
        &self,
        id: impl Into<String>,
        message: impl Into<String>,
        schema: Value,
    ) -> Result<FormAnswer, InputError> {
        let mut answers = self
            .ask(vec![(id.into(), InputRequest::form(message, schema))])
            .await?;
        match answers.pop() {
            Some(InputAnswer::Form(a)) => Ok(a),
            _ => Err(InputError::Invalid("the answer is not a form's".into())),
        }
    }
}

/// Why an asking prompt could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptFailure {
    /// A question got no (usable) answer, or travels to the client ([`InputError::Pending`]).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The prompt failed for a reason of its own (an internal error naming the prompt).
    #[error("{0}")]
    Failed(String),
}

impl From<String> for PromptFailure {
    fn from(e: String) -> Self {
        PromptFailure::Failed(e)
    }
}

type BuildFn = dyn Fn(&PromptArgs) -> Result<Vec<Message>, String> + Send + Sync;

type AskFn = dyn Fn(PromptArgs, PromptInput) -> BoxFuture<'static, Result<Vec<Message>, PromptFailure>>
    + Send
    + Sync;

/// How a prompt's messages are made.
#[derive(Clone)]
enum Build {
    /// From the arguments alone.
    Plain(Arc<BuildFn>),
    /// From the arguments and the answers to the prompt's questions.
    Asking(Arc<AskFn>),
}

/// A prompt: its name, description, arguments, and the function that builds its messages.
#[derive(Clone)]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    build: Build,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name` whose messages `build` makes from the checked arguments (`Err`
    /// becomes an internal error naming the prompt).
    pub fn new(
        name: impl Into<String>,
        build: impl Fn(&PromptArgs) -> Result<Vec<Message>, String> + Send + Sync + 'static,
    ) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            build: Build::Plain(Arc::new(build)),
        }
    }

    /// A prompt named `name` that may ask questions ([`PromptInput`]) before `build` makes its
    /// messages. Over a stateless request `build` runs again from the start once the client
    /// answers: ask before anything else.
    pub fn asking<F, Fut>(name: impl Into<String>, build: F) -> Self
    where
        F: Fn(PromptArgs, PromptInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Message>, PromptFailure>> + Send + 'static,
    {
        let build: Arc<AskFn> = Arc::new(move |args, input| Box::pin(build(args, input)));
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            build: Build::Asking(build),
        }
    }

    /// With a description for the client.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a human-readable title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With one more argument.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    fn listed(&self) -> McpPrompt {
        let args = self
            .arguments
            .iter()
            .map(|a| {
                let mut m = McpArgument::new(a.name.clone()).with_required(a.required);
                if let Some(d) = &a.description {
                    m = m.with_description(d.clone());
                }
                m
            })
            .collect::<Vec<_>>();
        let mut p = McpPrompt::new(
            self.name.clone(),
            self.description.clone(),
            (!args.is_empty()).then_some(args),
        );
        if let Some(t) = &self.title {
            p = p.with_title(t.clone());
        }
        p
    }
}

/// Why registering prompts failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("prompt registration refused: {0}")]
pub struct PromptError(String);

/// The prompts an MCP server offers.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    prompts: BTreeMap<String, Prompt>,
}

fn refusal(message: String, data: Value) -> ErrorData {
    ErrorData::invalid_params(message, Some(data))
}

impl Prompts {
    /// No prompts yet.
    pub fn new() -> Self {
        Prompts::default()
    }

    /// Add a prompt. Refused: an empty or duplicate name, an argument declared twice.
    pub fn with_prompt(mut self, prompt: Prompt) -> Result<Self, PromptError> {
        if prompt.name.is_empty() || prompt.name.chars().any(char::is_control) {
            return Err(PromptError(format!(
                "invalid prompt name {:?}",
                prompt.name
            )));
        }
        if self.prompts.contains_key(&prompt.name) {
            return Err(PromptError(format!(
                "prompt `{}` is registered twice",
                prompt.name
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for a in &prompt.arguments {
            if a.name.is_empty() || !seen.insert(a.name.as_str()) {
                return Err(PromptError(format!(
                    "prompt `{}`: argument {:?} is empty or declared twice",
                    prompt.name, a.name
                )));
            }
        }
        self.prompts.insert(prompt.name.clone(), prompt);
        Ok(self)
    }

    /// `true` when no prompt is registered.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// `true` when some argument has a completer.
    pub fn has_completers(&self) -> bool {
        self.prompts
            .values()
            .any(|p| p.arguments.iter().any(|a| a.completer.is_some()))
    }

    /// The `prompts/list` entries, sorted by name.
    pub fn list(&self) -> Vec<McpPrompt> {
        self.prompts.values().map(Prompt::listed).collect()
    }

    fn find(&self, name: &str) -> Result<&Prompt, ErrorData> {
        self.prompts.get(name).ok_or_else(|| {
            refusal(
                format!("unknown prompt `{name}`"),
                json!({"name": name, "reason_code": ReasonCode::InvalidArguments}),
            )
        })
    }

    /// Build the messages of prompt `name` from `args`, after checking them: every required
    /// argument given, no undeclared one, the values within [`MAX_PROMPT_ARGS_BYTES`]. An asking
    /// prompt's questions go to `input`; a question that got no answer is an error with the
    /// question's reason code (`input_required` when it travels to the client).
    pub async fn get(
        &self,
        name: &str,
        args: BTreeMap<String, String>,
        input: PromptInput,
    ) -> Result<(Option<String>, Vec<PromptMessage>), ErrorData> {
        let prompt = self.find(name)?;
        let unknown: Vec<&str> = args
            .keys()
            .filter(|k| !prompt.arguments.iter().any(|a| &a.name == *k))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(refusal(
                format!("prompt `{name}` has no argument(s) {}", unknown.join(", ")),
                json!({"name": name, "unknown": unknown, "reason_code": ReasonCode::InvalidArguments}),
            ));
        }
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(refusal(
                format!(
                    "prompt `{name}` needs the argument(s) {}",
                    missing.join(", ")
                ),
                json!({"name": name, "missing": missing, "reason_code": ReasonCode::InvalidArguments}),
            ));
        }
        let size: usize = args.iter().map(|(k, v)| k.len() + v.len()).sum();
        if size > MAX_PROMPT_ARGS_BYTES {
            return Err(refusal(
                format!("the arguments of prompt `{name}` exceed {MAX_PROMPT_ARGS_BYTES} bytes"),
                json!({"name": name, "reason_code": ReasonCode::MalformedCall}),
            ));
        }
        let args = PromptArgs { values: args };
        let built = match &prompt.build {
            Build::Plain(build) => build(&args).map_err(PromptFailure::Failed),
            Build::Asking(build) => build(args, input).await,
        };
        let messages = built.map_err(|e| match e {
            PromptFailure::Input(e) => refusal(
                format!("{}: prompt `{name}`: {e}", e.code()),
                json!({"name": name, "reason_code": e.code()}),
            ),
            PromptFailure::Failed(e) => ErrorData::internal_error(
                format!("prompt `{name}` failed: {e}"),
                Some(json!({"name": name, "reason_code": ReasonCode::ToolError})),
            ),
        })?;
        let messages = messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    PromptRole::User => Role::User,
                    PromptRole::Assistant => Role::Assistant,
                };
                PromptMessage::new(role, to_mcp(&m.content))
            })
            .collect();
        Ok((prompt.description.clone(), messages))
    }

    /// The completer of argument `argument` of prompt `name`: `Err` when there is no such
    /// prompt or argument, `Ok(None)` when the argument has no completer.
    pub fn completer(&self, name: &str, argument: &str) -> Result<Option<&Completer>, ErrorData> {
        let prompt = self.find(name)?;
        let arg = prompt
            .arguments
            .iter()
            .find(|a| a.name == argument)
            .ok_or_else(|| {
                refusal(
                    format!("prompt `{name}` has no argument `{argument}`"),
                    json!({"name": name, "argument": argument, "reason_code": ReasonCode::InvalidArguments}),
                )
            })?;
        Ok(arg.completer.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greeting() -> Prompts {
        Prompts::new()
            .with_prompt(
                Prompt::new("greet", |args| {
                    Ok(vec![Message::user(format!(
                        "hello {}{}",
                        args.get("name").unwrap_or_default(),
                        args.get("suffix").unwrap_or_default()
                    ))])
                })
                .with_argument(PromptArgument::required("name"))
                .with_argument(PromptArgument::optional("suffix")),
            )
            .expect("valid")
    }

    #[tokio::test]
    async fn arguments_are_checked_before_the_prompt_is_built() {
        let p = greeting();
        let none = PromptInput::none;
        let args = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>()
        };
        let (_, msgs) = p
            .get("greet", args(&[("name", "ann")]), none())
            .await
            .expect("built");
        assert_eq!(msgs.len(), 1);
        let e = p
            .get("greet", args(&[]), none())
            .await
            .expect_err("missing");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(e.data.as_ref().expect("data")["missing"], json!(["name"]));
        let e = p
            .get("greet", args(&[("name", "a"), ("x", "1")]), none())
            .await
            .expect_err("unknown");
        assert_eq!(e.data.as_ref().expect("data")["unknown"], json!(["x"]));
        let big = "x".repeat(MAX_PROMPT_ARGS_BYTES);
        assert!(p
            .get("greet", args(&[("name", &big)]), none())
            .await
            .is_err());
        assert!(p.get("nope", args(&[]), none()).await.is_err());
        assert!(p
            .clone()
            .with_prompt(Prompt::new("greet", |_| Ok(vec![])))
            .is_err());
    }

    #[tokio::test]
    async fn an_asking_prompt_without_anyone_to_answer_is_refused_with_the_code() {
        let p = Prompts::new()
            .with_prompt(Prompt::asking("ctx", |_, input| async move {
                let answer = input
                    .elicit(
                        "c",
                        "context?",
                        json!({"type": "object", "properties": {"c": {"type": "string"}}}),
                    )
                    .await?;
                Ok(vec![Message::user(format!("{answer:?}"))])
            }))
            .expect("valid");
        let e = p
            .get("ctx", BTreeMap::new(), PromptInput::none())
            .await
            .expect_err("nobody answers");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(
            e.data.as_ref().expect("data")["reason_code"],
            json!("input_unavailable")
        );
    }
}
