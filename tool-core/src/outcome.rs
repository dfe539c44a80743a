//! What a handler reports: [`ToolOutcome`] and the return forms `#[tool]` turns into one.
//!
//! The stable reason codes live in [`crate::reason`], re-exported here.

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
/// `bool`, [`serde_json::Value`], [`Json<T>`], content blocks ([`Content`], `Vec<Content>`,
/// [`Image`], [`Audio`], [`EmbeddedResource`], [`ResourceLink`]), [`Modified<T>`],
/// `(T, ContextModifier)` and `Result<T, E: Display>` of any of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool result",
    label = "a `#[tool]` cannot return `{Self}` as it is",
    note = "wrap it in `Json`: `Json<{Self}>` returns any `Serialize + JsonSchema` value (a `Vec`, a map, your own struct) as structured output with its schema",
    note = "returned as they are: `String`, `&'static str`, numbers, `bool`, `()`, `serde_json::Value`, `ToolOutcome`, content blocks (`Image`, `Audio`, `Content`, `Vec<Content>`, ...), `Modified<T>`, `(T, ContextModifier)`, and `Result<T, E: Display>` of these"
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
    fn modifier_is_dropped_from_errors() {
        let mut m = ContextModifier::new();
        m.set("k", 1);
        let out = ToolOutcome::error("x").with_modifier(m);
        assert_eq!(out, ToolOutcome::error("x"));
    }
}
