//! What runs a tool: its handler and permission rule, the future a handler returns, and the
//! refusal of arguments a handler cannot take.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolContext;
use crate::outcome::ToolOutcome;

/// A boxed, sendable future of a tool's outcome.
pub type BoxFuture = Pin<Box<dyn Future<Output = ToolOutcome> + Send + 'static>>;

/// Arguments the handler could not accept (they passed the schema but not the typed deserializer).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArgumentError {
    /// What was wrong.
    pub message: String,
}

impl ArgumentError {
    /// An argument error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ArgumentError {
            message: message.into(),
        }
    }
}

/// A tool's handler: takes the context and the final, validated, guarded arguments. Returns the
/// future to run, or refuses the arguments before anything runs.
pub type Handler =
    Arc<dyn Fn(ToolContext, Value) -> Result<BoxFuture, ArgumentError> + Send + Sync>;

/// A tool's own permission rule on its final arguments: `Err(reason)` refuses the call.
pub type PermissionCheck = Arc<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;
