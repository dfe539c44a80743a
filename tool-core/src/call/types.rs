//! What the parsers share: the call, the limits, the error.

use serde_json::{Map, Value};

use crate::schema::export::accept::Dialect;

/// One proposed tool call: a name, a JSON object of arguments, an optional id.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool the model asked for.
    pub name: String,
    /// The arguments, always a JSON object.
    pub arguments: Map<String, Value>,
    /// The provider's call id, when it gave one.
    pub id: Option<String>,
    /// The schema dialect the call's envelope says it was shaped by (OpenAI calls: strict OpenAI,
    /// Anthropic `tool_use`: Anthropic, Gemini `functionCall`: Gemini); `None`: canonical. The
    /// executor maps the arguments back from it before validation
    /// ([`crate::schema::export::accept`]).
    pub dialect: Option<Dialect>,
}

impl ToolCall {
    /// A call with no id.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
            id: None,
            dialect: None,
        }
    }

    /// Set the call id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Set the dialect the arguments were shaped by.
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = Some(dialect);
        self
    }
}

/// Nesting depth the parsers never go beyond, whatever [`ParseLimits::max_depth`] says: it keeps
/// recursion (ours and serde_json's, which stops at 128) far from the stack's end.
pub const DEPTH_CEILING: usize = 100;

/// Limits on what the parser accepts. The defaults are conservative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLimits {
    /// Longest accepted input, in bytes (for [`parse_batch`](super::parse_batch), the whole turn).
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects, counted from the outermost one of the
    /// document. A call's arguments count as they do in `{"tool": .., "args": {..}}`: the text
    /// action `f(x=[1])` and the OpenAI arguments string `{"x": [1]}` are 3 levels deep, so a call
    /// accepted in any shape is accepted in that one. Capped at [`DEPTH_CEILING`].
    pub max_depth: usize,
    /// Longest accepted string (values, keys, names, ids), in bytes once unescaped.
    pub max_string_len: usize,
    /// Accept JSON wrapped in a markdown code fence (```` ``` ```` or ```` ```json ````).
    pub allow_fenced: bool,
    /// Most calls accepted in one batch by [`parse_batch`](super::parse_batch).
    pub max_calls: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_bytes: 1024 * 1024,
            max_depth: 64,
            max_string_len: 256 * 1024,
            allow_fenced: false,
            max_calls: 64,
        }
    }
}

impl ParseLimits {
    pub(super) fn depth(&self) -> usize {
        self.max_depth.min(DEPTH_CEILING)
    }
}

/// Why a call could not be parsed; always reason code `malformed_call`.
///
/// When the call's envelope could still be read (an OpenAI call whose `arguments` string is
/// malformed, an Anthropic `tool_use` whose `input` has a duplicate key, ...), the error keeps the
/// call id and tool name the envelope named, so the refusal is answered under that id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed call: {message}")]
pub struct ParseError {
    /// What was wrong and where.
    pub message: String,
    /// The provider's call id the envelope named, when it is a valid id ([`valid_call_id`]).
    pub call_id: Option<String>,
    /// The tool name the envelope named, when it named one.
    pub tool: Option<String>,
}

impl ParseError {
    /// A parse error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            call_id: None,
            tool: None,
        }
    }

    /// The reason code of every parse error.
    pub fn code(&self) -> crate::reason::ReasonCode {
        crate::reason::ReasonCode::MalformedCall
    }
}

/// Longest call id accepted from a model, in bytes.
pub const MAX_CALL_ID_LEN: usize = 128;

/// `true` for a call id a model may choose: 1 to [`MAX_CALL_ID_LEN`] ASCII letters, digits, `_`
/// and `-` (Anthropic's own rule for `tool_use` ids, which OpenAI's `call_...` ids and Gemini's
/// ids follow too). Anything else could become a path, a log line or a key it was not meant to
/// be: such an id is never used, the call goes on under a fresh id.
pub fn valid_call_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CALL_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `s` as a JSON string literal, for messages (bounded so a huge key cannot flood a log).
pub(super) fn quoted(s: &str) -> String {
    const MAX: usize = 64;
    if s.len() <= MAX {
        return format!("{s:?}");
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}...", &s[..end])
}
