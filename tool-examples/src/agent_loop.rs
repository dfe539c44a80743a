//! An agent loop over a model's HTTP API: the tools go out in the provider's dialect, every tool
//! call the model makes runs through the [`Executor`], each result goes back with
//! [`tool_core::reply`] (call ids kept), until the model answers without calling a tool.
//!
//! Three wire formats:
//!
//! - [`Api::OpenAi`]: Chat Completions, `POST {base}/v1/chat/completions` with `tools` (the
//!   OpenAI export); the assistant message's `tool_calls` are run, each result goes back as a
//!   `role: tool` message with its `tool_call_id`.
//! - [`Api::Anthropic`]: Messages, `POST {base}/v1/messages` with `tools` (the Anthropic export);
//!   the `tool_use` blocks are run, the results go back as one user message of `tool_result`
//!   blocks with their `tool_use_id` and `is_error`.
//! - [`Api::Gemini`]: `POST {base}/v1beta/models/{model}:generateContent` with `tools:
//!   [{"functionDeclarations"}]` (the Gemini export); the candidate's `functionCall` parts are
//!   run, the results go back as one user content of `functionResponse` parts, matched by name
//!   and by id when the call had one.
//!
//! A refusal (bad arguments, a path outside the workspace, a denied approval) is not an error of
//! the loop: its feedback (reason code, failing paths, schema fragments) goes back to the model,
//! which may try again. The loop fails only on what it cannot hand back: a transport error, a
//! status other than 2xx, a reply it cannot read, a turn that cannot be parsed at all, or more
//! than [`AgentConfig::max_turns`] model turns.
//!
//! The example `agent_loop` (`cargo run -p tool-examples --example agent_loop`) runs it against
//! any base URL; the tests run it against a scripted server of each format.

use std::fmt;

use serde_json::{json, Value};
use tool_core::call::ParseLimits;
use tool_core::executor::BatchOptions;
use tool_core::reply::{reply_batch, Provider};
use tool_core::schema::export::{export_value, ExportOptions, Format};
use tool_core::{CallResult, Executor};

/// Which wire format the model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
}

impl Api {
    /// `openai`, `anthropic` or `gemini`.
    pub fn from_name(name: &str) -> Option<Api> {
        match name {
            "openai" => Some(Api::OpenAi),
            "anthropic" => Some(Api::Anthropic),
            "gemini" => Some(Api::Gemini),
            _ => None,
        }
    }
}

/// Where the model is and how to talk to it.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The wire format.
    pub api: Api,
    /// The API's base URL, without `/v1/...`: `https://api.openai.com`,
    /// `https://api.anthropic.com`, or a local server.
    pub base_url: String,
    /// The API key: sent as `Authorization: Bearer` (OpenAI), `x-api-key` (Anthropic) or
    /// `x-goog-api-key` (Gemini); none for a local server.
    pub api_key: Option<String>,
    /// The model name.
    pub model: String,
    /// Most model turns before the loop gives up.
    pub max_turns: usize,
    /// Anthropic's `max_tokens` per turn.
    pub max_tokens: u32,
}

impl AgentConfig {
    /// A configuration with 16 turns at most and 1024 tokens per Anthropic turn.
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        AgentConfig {
            api,
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            max_turns: 16,
            max_tokens: 1024,
        }
    }
}

/// How a loop ended with an answer.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The model's final text.
    pub answer: String,
    /// Model turns taken, the answer's included.
    pub turns: usize,
    /// Every tool call's result, in the order they ran.
    pub results: Vec<CallResult>,
    /// The conversation as sent to the model, plus its final message.
    pub messages: Vec<Value>,
}

/// Why a loop ended without an answer.
#[derive(Debug)]
pub enum AgentError {
    /// The HTTP request failed.
    Http(reqwest::Error),
    /// The API answered with an error status.
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The reply is not what the wire format says.
    BadReply(String),
    /// The tools could not be exported in the API's dialect.
    Export(String),
    /// The model was still calling tools after this many turns.
    TurnLimit(usize),
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentError::Http(e) => write!(f, "the request failed: {e}"),
            AgentError::Status { status, body } => {
                write!(f, "the API answered {status}: {body}")
            }
            AgentError::BadReply(why) => write!(f, "the reply is not understood: {why}"),
            AgentError::Export(why) => write!(f, "the tools could not be exported: {why}"),
            AgentError::TurnLimit(n) => write!(f, "no answer after {n} turns"),
        }
    }
}

impl std::error::Error for AgentError {}

impl From<reqwest::Error> for AgentError {
    fn from(e: reqwest::Error) -> Self {
        AgentError::Http(e)
    }
}

/// Largest reply body read, in bytes.
pub const MAX_REPLY_BYTES: usize = 8 << 20;

/// Run the loop for one user prompt: the conversation starts with `prompt` as the user's
/// message and ends at the model's first turn without a tool call.
pub async fn run(
    executor: &Executor,
    config: &AgentConfig,
    prompt: &str,
) -> Result<Finished, AgentError> {
    let format = match config.api {
        Api::OpenAi => Format::OpenAi,
        Api::Anthropic => Format::Anthropic,
        Api::Gemini => Format::Gemini,
    };
    let mut tools = export_value(executor.registry(), format, ExportOptions::default())
        .map_err(|e| AgentError::Export(e.to_string()))?;
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    if config.api == Api::Gemini {
        // Gemini's tools are a list of `{"functionDeclarations"}`, its turns are contents.
        tools = json!([tools]);
        messages = vec![json!({"role": "user", "parts": [{"text": prompt}]})];
    }
    let client = reqwest::Client::new();
    let session = executor.new_session();
    let mut results = Vec::new();
    for turn in 1..=config.max_turns {
        let reply = post(&client, config, &messages, &tools).await?;
        let (message, calls) = match config.api {
            Api::OpenAi => openai_turn(reply)?,
            Api::Anthropic => anthropic_turn(reply)?,
            Api::Gemini => gemini_turn(reply)?,
        };
        messages.push(message.clone());
        let Some(calls) = calls else {
            return Ok(Finished {
                answer: answer_text(config.api, &message),
                turns: turn,
                results,
                messages,
            });
        };
        // The calls as the model wrote them, each parsed by the strict parser; one that does
        // not parse is refused in its place (`malformed_call`) and the model hears why.
        let text =
            serde_json::to_string(&calls).map_err(|e| AgentError::BadReply(e.to_string()))?;
        let parsed = tool_core::call::parse_turn_items(&text, &ParseLimits::default())
            .map_err(|e| AgentError::BadReply(format!("the tool calls: {e}")))?;
        let ran = executor
            .run_batch(&session, parsed, BatchOptions::default())
            .await;
        match config.api {
            Api::OpenAi => match reply_batch(&ran, Provider::OpenAi) {
                Value::Array(replies) => messages.extend(replies),
                other => messages.push(other),
            },
            Api::Anthropic => messages.push(reply_batch(&ran, Provider::Anthropic)),
            Api::Gemini => messages.push(reply_batch(&ran, Provider::Gemini)),
        }
        results.extend(ran);
    }
    Err(AgentError::TurnLimit(config.max_turns))
}

async fn post(
    client: &reqwest::Client,
    config: &AgentConfig,
    messages: &[Value],
    tools: &Value,
) -> Result<Value, AgentError> {
    let base = config.base_url.trim_end_matches('/');
    let (url, body) = match config.api {
        Api::OpenAi => (
            format!("{base}/v1/chat/completions"),
            json!({"model": config.model, "messages": messages, "tools": tools}),
        ),
        Api::Anthropic => (
            format!("{base}/v1/messages"),
            json!({
                "model": config.model,
                "max_tokens": config.max_tokens,
                "messages": messages,
                "tools": tools,
            }),
        ),
        Api::Gemini => (
            format!("{base}/v1beta/models/{}:generateContent", config.model),
            json!({"contents": messages, "tools": tools}),
        ),
    };
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    request = match (config.api, &config.api_key) {
        (Api::OpenAi, Some(key)) => request.header("authorization", format!("Bearer {key}")),
        (Api::Anthropic, key) => {
            let r = request.header("anthropic-version", "2023-06-01");
            match key {
                Some(key) => r.header("x-api-key", key),
                None => r,
            }
        }
        (Api::Gemini, Some(key)) => request.header("x-goog-api-key", key),
        (Api::OpenAi | Api::Gemini, None) => request,
    };
    let mut response = request.send().await?;
    let status = response.status();
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
            return Err(AgentError::BadReply(format!(
                "the reply is longer than {MAX_REPLY_BYTES} bytes"
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        let body = String::from_utf8_lossy(&bytes).chars().take(512).collect();
        return Err(AgentError::Status {
            status: status.as_u16(),
            body,
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| AgentError::BadReply(e.to_string()))
}

/// The assistant message of a Chat Completions reply, and its `tool_calls` when it has any.
fn openai_turn(mut reply: Value) -> Result<(Value, Option<Value>), AgentError> {
    let message = reply
        .pointer_mut("/choices/0/message")
        .map(Value::take)
        .filter(Value::is_object)
        .ok_or_else(|| AgentError::BadReply("no `choices[0].message`".to_owned()))?;
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if a.is_empty() => None,
        Some(calls @ Value::Array(_)) => Some(calls.clone()),
        Some(_) => {
            return Err(AgentError::BadReply(
                "`tool_calls` is not an array".to_owned(),
            ))
        }
    };
    Ok((message, calls))
}

/// The assistant message of a Messages reply, and its content blocks when one is a `tool_use`.
fn anthropic_turn(reply: Value) -> Result<(Value, Option<Value>), AgentError> {
    let Some(content) = reply.get("content").filter(|c| c.is_array()).cloned() else {
        return Err(AgentError::BadReply("no `content` array".to_owned()));
    };
    let uses_tools = content
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_use"));
    let message = json!({"role": "assistant", "content": content});
    Ok((message, uses_tools.then_some(content)))
}

/// The model's content of a `generateContent` reply (its one candidate), and its parts when one
/// is a `functionCall`.
fn gemini_turn(mut reply: Value) -> Result<(Value, Option<Value>), AgentError> {
    let Some(content) = reply
        .pointer_mut("/candidates/0/content")
        .map(Value::take)
        .filter(|c| c["parts"].is_array())
    else {
        return Err(AgentError::BadReply(
            "no `candidates[0].content.parts`".to_owned(),
        ));
    };
    let calls = content["parts"]
        .as_array()
        .is_some_and(|parts| parts.iter().any(|p| p.get("functionCall").is_some()))
        .then(|| content["parts"].clone());
    let message = json!({"role": "model", "parts": content["parts"]});
    Ok((message, calls))
}

/// The text of the model's final message.
fn answer_text(api: Api, message: &Value) -> String {
    match api {
        Api::OpenAi => message["content"].as_str().unwrap_or_default().to_owned(),
        Api::Anthropic => message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        Api::Gemini => message["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p.get("thought").is_none())
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
    }
}
