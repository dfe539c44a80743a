//! What one call came to: [`CallResult`].

use std::time::Duration;

use serde_json::Value;

use crate::approval::ApprovalStatus;
use crate::content::Content;
use crate::context::ContextModifier;
use crate::reason::ReasonCode;
use crate::schema::validate::Violation;
use crate::status::{CallStatus, Step};

/// What one call came to.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The tool, when the call parsed.
    pub tool: Option<String>,
    /// The call id (the provider's, or one the executor made up).
    pub call_id: String,
    /// `true` when `call_id` came with the call (the caller's or the provider's), `false` when
    /// the executor made it up: a reply names the id only where the call named one (Gemini
    /// matches a `functionResponse` without an id by name and order).
    pub call_id_given: bool,
    /// How the call ended.
    pub status: CallStatus,
    /// Why it was refused or failed; `None` when `ok`.
    pub code: Option<ReasonCode>,
    /// The step that refused the call or where it failed; `None` when `ok`.
    pub step: Option<Step>,
    /// What went wrong, for the model; `None` when `ok`.
    pub message: Option<String>,
    /// The tool's own error code, when it failed with a [`ToolError`](crate::outcome::ToolError)
    /// whose code is valid (`code` is then `tool_error`).
    pub error_code: Option<String>,
    /// For `invalid_arguments`: every violation, with its JSON path and the schema fragment that
    /// path must match ([`Violation::schema`]); empty otherwise.
    pub violations: Vec<Violation>,
    /// The tool's output (capped); `None` unless `ok`. `Some(Null)` when the result is content
    /// blocks only.
    pub output: Option<Value>,
    /// The content blocks the tool returned (capped, see [`crate::content`]); empty unless `ok`
    /// and the tool returned blocks.
    pub content: Vec<Content>,
    /// The context change the tool returned, if any.
    pub modifier: Option<ContextModifier>,
    /// `true` when the modifier was merged into the session state.
    pub modifier_applied: bool,
    /// `true` when the output or message was cut at the output cap.
    pub truncated: bool,
    /// How approval went.
    pub approval: ApprovalStatus,
    /// Time from receipt to result.
    pub duration: Duration,
    /// What enforced the call (see [`crate::sandbox`]): e.g. `landlock-v7+seccomp` for a handler
    /// on a confined worker or runtime, `none` for an unconfined handler, `landlock-v7+seccomp;
    /// process: landlock-v7+seccomp+pidns+netns` when it started a confined program, `not_run`
    /// when the handler never started.
    pub enforced: &'static str,
}

impl CallResult {
    /// `true` when the status is `ok`.
    pub fn is_ok(&self) -> bool {
        self.status == CallStatus::Ok
    }

    /// The result as text, for a consumer that shows text only (a provider's tool result
    /// message): the message of a refusal or failure, else the output (a string as it is, other
    /// JSON as its text) followed by every content block, binary ones described
    /// ([`Content::describe`]).
    pub fn text(&self) -> String {
        if !self.is_ok() {
            return self.message.clone().unwrap_or_default();
        }
        let mut parts: Vec<String> = Vec::new();
        match &self.output {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => parts.push(s.clone()),
            Some(other) => parts.push(other.to_string()),
        }
        parts.extend(self.content.iter().map(Content::describe));
        parts.join("\n")
    }
}
