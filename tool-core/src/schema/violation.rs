//! One schema violation: where, what, and the subschema the value must match.

use serde_json::Value;

/// Longest violation message, in bytes: messages quote the offending value, which the model
/// chose and may have made huge; the path says where it is.
pub const MAX_VIOLATION_MESSAGE: usize = 512;

pub(crate) fn cut(mut text: String) -> String {
    if text.len() <= MAX_VIOLATION_MESSAGE {
        return text;
    }
    let total = text.len();
    let mut end = MAX_VIOLATION_MESSAGE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… (message cut, {total} bytes)"));
    text
}

/// One schema violation: where (JSON pointer into the arguments) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`""` for the root).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// JSON pointer into the schema of the subschema the value at `path` must match (for a
    /// missing property, that property's schema); `$ref`s already followed.
    pub schema_path: String,
    /// That subschema, at most `MAX_SCHEMA_FRAGMENT` bytes of JSON (see `fragment`), when
    /// the violation was found with the schema at hand (`with_fragments`).
    pub schema: Option<Value>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            self.path.as_str()
        };
        write!(f, "at `{path}`: {}", self.message)
    }
}
