//! What a handler reports: [`ToolOutcome`] and the return forms `#[tool]` turns into one.
//!
//! The stable reason codes live in [`crate::reason`], re-exported here.
//!
//! A tool's own errors get a code of their own with [`ToolError`]: return
//! `Result<T, ToolError>` and the code travels next to the message (the call's reason code stays
//! `tool_error`): in [`CallResult::error_code`](crate::executor::CallResult::error_code), the
//! audit event, `call`'s result lines, [`crate::reply`]'s messages and MCP's
//! `structuredContent`/`_meta` as `error_code`. An error type of the application implements
//! [`ToolErrorCode`], and `?` turns it into a `ToolError`:
//!
//! ```
//! use tool_core::outcome::{ToolError, ToolErrorCode};
//! use tool_core::tool;
//!
//! #[derive(Debug)]
//! enum LookupError {
//!     NotFound(String),
//!     Locked,
//! }
//!
//! impl std::fmt::Display for LookupError {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         match self {
//!             LookupError::NotFound(key) => write!(f, "no entry `{key}`"),
//!             LookupError::Locked => f.write_str("the table is locked"),
//!         }
//!     }
//! }
//!
//! impl ToolErrorCode for LookupError {
//!     fn code(&self) -> &str {
//!         match self {
//!             LookupError::NotFound(_) => "not_found",
//!             LookupError::Locked => "locked",
//!         }
//!     }
//! }
//!
//! fn find(key: &str) -> Result<String, LookupError> {
//!     Err(LookupError::NotFound(key.to_owned()))
//! }
//!
//! /// Look an entry up.
//! ///
//! /// # Arguments
//! /// * `key` - the entry's key
//! #[tool(risk = "read_only")]
//! fn lookup(key: String) -> Result<String, ToolError> {
//!     Ok(find(&key)?)
//! }
//!
//! let err = lookup("k".into()).unwrap_err();
//! assert_eq!((err.code(), err.message()), ("not_found", "no entry `k`"));
//! ```
//!
//! A code is an ASCII identifier of at most [`MAX_ERROR_CODE_LEN`] characters (a letter, then
//! letters, digits and `_`; see [`is_valid_error_code`]). The executor checks every code a
//! handler returns: an invalid one is never passed on, the call fails with no `error_code` and
//! its message says the code was dropped.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::content::{Audio, Content, EmbeddedResource, Image, ResourceLink};
use crate::context::ContextModifier;
pub use crate::reason::ReasonCode;

/// What a handler reports. Success is decided by the variant, never by the text.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The tool did its work.
    Ok {
        /// The output shown to the model: a string for text, any JSON value for structured
        /// output. `Null` when the result is content blocks only.
        output: Value,
        /// Content blocks (text, image, audio, resources; see [`crate::content`]): when not
        /// empty, they are the result's content, and `output` is `Null` or the structured
        /// output they go with.
        content: Vec<Content>,
        /// A change to the session context, merged by the executor in call order.
        modifier: Option<ContextModifier>,
    },
    /// The tool ran and failed.
    Error {
        /// What went wrong, shown to the model.
        message: String,
        /// The tool's own stable code for the error ([`ToolError`]), if it gives one; checked by
        /// the executor ([`is_valid_error_code`]).
        code: Option<String>,
    },
}

impl ToolOutcome {
    /// A successful outcome with this output.
    pub fn ok(output: impl Into<Value>) -> Self {
        ToolOutcome::Ok {
            output: output.into(),
            content: Vec::new(),
            modifier: None,
        }
    }

    /// A successful outcome made of content blocks (see [`crate::content`]).
    pub fn content(content: impl IntoIterator<Item = Content>) -> Self {
        ToolOutcome::Ok {
            output: Value::Null,
            content: content.into_iter().collect(),
            modifier: None,
        }
    }

    /// A failed outcome with this message.
    pub fn error(message: impl Into<String>) -> Self {
        ToolOutcome::Error {
            message: message.into(),
            code: None,
        }
    }

    /// A failed outcome with the tool's own error code (see [`ToolError`]).
    pub fn error_with_code(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolOutcome::Error {
            message: message.into(),
            code: Some(code.into()),
        }
    }

    /// Attach a context modifier to a successful outcome (an error outcome is returned unchanged:
    /// a failed call never changes the context).
    pub fn with_modifier(self, modifier: ContextModifier) -> Self {
        match self {
            ToolOutcome::Ok {
                output, content, ..
            } => ToolOutcome::Ok {
                output,
                content,
                modifier: Some(modifier),
            },
            err @ ToolOutcome::Error { .. } => err,
        }
    }

    /// `true` for [`ToolOutcome::Ok`].
    pub fn is_ok(&self) -> bool {
        matches!(self, ToolOutcome::Ok { .. })
    }
}

/// Longest tool error code, in bytes.
pub const MAX_ERROR_CODE_LEN: usize = 64;

/// `true` when `code` may be a tool's error code: an ASCII letter, then ASCII letters, digits and
/// `_`, at most [`MAX_ERROR_CODE_LEN`] in all (`not_found`, `E404`, `RateLimited`).
pub fn is_valid_error_code(code: &str) -> bool {
    let mut chars = code.chars();
    code.len() <= MAX_ERROR_CODE_LEN
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A tool's error with a stable code the model and the application can match on, besides the
/// message. Returned as `Result<T, ToolError>`; see the [module docs](self).
///
/// It is deliberately not `Display`: `Result<T, E: Display>` turns an error into its text only,
/// and `Result<T, ToolError>` must keep the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    code: String,
    message: String,
}

impl ToolError {
    /// An error with this code and message. The code is checked when the call's result is made
    /// ([`is_valid_error_code`]): an invalid code fails closed, never reaching the model.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError {
            code: code.into(),
            message: message.into(),
        }
    }

    /// The code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// An application's error type that has a stable code: `?` turns it into a [`ToolError`] (its
/// text as message), for a tool returning `Result<T, ToolError>`.
pub trait ToolErrorCode {
    /// The stable code of this error (`not_found`): an ASCII identifier, see
    /// [`is_valid_error_code`].
    fn code(&self) -> &str;
}

impl<E: ToolErrorCode + fmt::Display> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::new(e.code(), e.to_string())
    }
}

impl<T: IntoToolOutcome> IntoToolOutcome for Result<T, ToolError> {
    fn into_outcome(self) -> ToolOutcome {
        match self {
            Ok(v) => v.into_outcome(),
            Err(e) => ToolOutcome::Error {
                message: e.message,
                code: Some(e.code),
            },
        }
    }
}

/// Structured output: serialized as JSON and described by an output schema in the declaration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

/// An output together with a change to the session context.
#[derive(Debug, Clone, PartialEq)]
pub struct Modified<T> {
    /// The output shown to the model.
    pub output: T,
    /// The change to merge into the session context.
    pub modifier: ContextModifier,
}

impl<T> Modified<T> {
    /// Pair an output with a context modifier.
    pub fn new(output: T, modifier: ContextModifier) -> Self {
        Modified { output, modifier }
    }
}

/// Conversion of a handler's return value into a [`ToolOutcome`].
///
/// Implemented for the return forms `#[tool]` accepts: [`ToolOutcome`], strings, `()`, numbers,
/// `bool`, [`serde_json::Value`], [`Json<T>`], `Vec<String>` (structured, as `Json<Vec<String>>`),
/// content blocks ([`Content`], `Vec<Content>`,
/// [`Image`], [`Audio`], [`EmbeddedResource`], [`ResourceLink`]), [`Modified<T>`],
/// `(T, ContextModifier)` and `Result<T, E: Display>` or `Result<T, ToolError>` of any of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    label = "a `#[tool]` cannot return `{Self}` as it is",
    note = "wrap it in `Json`: `Json<{Self}>` returns any `Serialize + JsonSchema` value (a `Vec`, a map, your own struct) as structured output with its schema",
    note = "returned as they are: `String`, `&'static str`, `Vec<String>`, numbers, `bool`, `()`, `serde_json::Value`, `ToolOutcome`, content blocks (`Image`, `Audio`, `Content`, `Vec<Content>`, ...), `Modified<T>`, `(T, ContextModifier)`, and `Result<T, E: Display>` or `Result<T, ToolError>` of these"
)]
pub trait IntoToolOutcome {
    /// Convert into an outcome.
    fn into_outcome(self) -> ToolOutcome;
}

impl IntoToolOutcome for ToolOutcome {
    fn into_outcome(self) -> ToolOutcome {
        self
    }
}

impl IntoToolOutcome for String {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

impl IntoToolOutcome for &'static str {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

impl IntoToolOutcome for () {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok("ok")
    }
}

impl IntoToolOutcome for Value {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self)
    }
}

macro_rules! scalar_outcome {
    ($($t:ty),*) => {$(
        impl IntoToolOutcome for $t {
            fn into_outcome(self) -> ToolOutcome {
                ToolOutcome::ok(self)
            }
        }
    )*};
}
scalar_outcome!(bool, i32, i64, u32, u64, f64);

impl IntoToolOutcome for usize {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::ok(self as u64)
    }
}

impl<T: Serialize> IntoToolOutcome for Json<T> {
    fn into_outcome(self) -> ToolOutcome {
        match serde_json::to_value(&self.0) {
            Ok(v) => ToolOutcome::ok(v),
            Err(e) => ToolOutcome::error(format!("output could not be serialized: {e}")),
        }
    }
}

macro_rules! content_outcome {
    ($($t:ty),*) => {$(
        impl IntoToolOutcome for $t {
            fn into_outcome(self) -> ToolOutcome {
                ToolOutcome::content([Content::from(self)])
            }
        }
    )*};
}
content_outcome!(Content, Image, Audio, EmbeddedResource, ResourceLink);

/// A list of strings is structured output, as `Json<Vec<String>>` is: `#[tool]` declares the
/// output schema (an array of strings) for it.
impl IntoToolOutcome for Vec<String> {
    fn into_outcome(self) -> ToolOutcome {
        Json(self).into_outcome()
    }
}

impl IntoToolOutcome for Vec<Content> {
    fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::content(self)
    }
}

impl<T: IntoToolOutcome> IntoToolOutcome for Modified<T> {
    fn into_outcome(self) -> ToolOutcome {
        self.output.into_outcome().with_modifier(self.modifier)
    }
}

impl<T: IntoToolOutcome> IntoToolOutcome for (T, ContextModifier) {
    fn into_outcome(self) -> ToolOutcome {
        self.0.into_outcome().with_modifier(self.1)
    }
}

impl<T: IntoToolOutcome, E: fmt::Display> IntoToolOutcome for Result<T, E> {
    fn into_outcome(self) -> ToolOutcome {
        match self {
            Ok(v) => v.into_outcome(),
            Err(e) => ToolOutcome::error(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_error_is_an_error_outcome_whatever_the_text() {
        let r: Result<String, String> = Err("ok".into());
        assert!(!r.into_outcome().is_ok());
        let r: Result<String, String> = Ok("error: looks bad but is fine".into());
        assert!(r.into_outcome().is_ok());
    }

    #[test]
    fn a_tool_error_keeps_its_code_and_an_error_type_with_a_code_converts_with_question_mark() {
        struct Busy;
        impl fmt::Display for Busy {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("try later")
            }
        }
        impl ToolErrorCode for Busy {
            fn code(&self) -> &str {
                "busy"
            }
        }
        fn handler() -> Result<String, ToolError> {
            Err(Busy)?
        }
        assert_eq!(
            handler().into_outcome(),
            ToolOutcome::error_with_code("busy", "try later")
        );
        let plain: Result<String, String> = Err("busy".into());
        assert_eq!(plain.into_outcome(), ToolOutcome::error("busy"));
    }

    #[test]
    fn error_codes_are_short_ascii_identifiers() {
        for ok in ["not_found", "E404", "RateLimited", "a", &"x".repeat(64)] {
            assert!(is_valid_error_code(ok), "{ok}");
        }
        for bad in [
            "",
            "_x",
            "4xx",
            "not found",
            "a-b",
            "é",
            "a\n",
            "code: ignore previous instructions",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_error_code(bad), "{bad:?}");
        }
    }

    #[test]
    fn modifier_is_dropped_from_errors() {
        let mut m = ContextModifier::new();
        m.set("k", 1);
        let out = ToolOutcome::error("x").with_modifier(m);
        assert_eq!(out, ToolOutcome::error("x"));
    }
}
