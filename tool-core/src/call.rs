//! Tool calls as the executor sees them, parsed from what a model wrote.

use serde_json::{Map, Value};

/// One proposed tool call: a name, a JSON object of arguments, an optional id.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool the model asked for.
    pub name: String,
    /// The arguments, always a JSON object.
    pub arguments: Map<String, Value>,
    /// The provider's call id, when it gave one.
    pub id: Option<String>,
}

impl ToolCall {
    /// A call with no id.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
            id: None,
        }
    }

    /// Set the call id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// Limits on what the parser accepts. The defaults are conservative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseLimits {
    /// Longest accepted input, in bytes.
    pub max_bytes: usize,
    /// Deepest accepted nesting of arrays and objects.
    pub max_depth: usize,
    /// Longest accepted string value, in bytes.
    pub max_string_len: usize,
    /// Accept JSON wrapped in a markdown code fence.
    pub allow_fenced: bool,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_bytes: 1024 * 1024,
            max_depth: 64,
            max_string_len: 256 * 1024,
            allow_fenced: false,
        }
    }
}

/// Why a call could not be parsed; always reason code `malformed_call`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed call: {message}")]
pub struct ParseError {
    /// What was wrong and where.
    pub message: String,
}

impl ParseError {
    /// A parse error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
        }
    }

    /// The reason code of every parse error.
    pub fn code(&self) -> crate::outcome::ReasonCode {
        crate::outcome::ReasonCode::MalformedCall
    }
}

/// Parse one call: `{"tool": NAME, "args": {...}}` with exactly those keys.
pub fn parse_call(input: &str, limits: &ParseLimits) -> Result<ToolCall, ParseError> {
    if input.len() > limits.max_bytes {
        return Err(ParseError::new(format!(
            "the call is {} bytes; the limit is {}",
            input.len(),
            limits.max_bytes
        )));
    }
    let value: Value =
        serde_json::from_str(input).map_err(|e| ParseError::new(format!("invalid JSON: {e}")))?;
    let Value::Object(mut obj) = value else {
        return Err(ParseError::new("a call must be a JSON object"));
    };
    if obj.len() != 2 || !obj.contains_key("tool") || !obj.contains_key("args") {
        return Err(ParseError::new(
            r#"a call must have exactly the keys "tool" and "args""#,
        ));
    }
    let Some(Value::String(name)) = obj.remove("tool") else {
        return Err(ParseError::new(r#""tool" must be a string"#));
    };
    let Some(Value::Object(args)) = obj.remove("args") else {
        return Err(ParseError::new(r#""args" must be a JSON object"#));
    };
    Ok(ToolCall::new(name, args))
}
