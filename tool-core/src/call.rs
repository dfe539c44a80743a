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
