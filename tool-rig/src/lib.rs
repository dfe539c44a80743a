//! Declared tools as [rig](https://docs.rs/rig-core) tools.
//!
//! [`RigTools`] turns every tool of an [`Executor`]'s registry into a rig
//! [`DynamicTool`]: its name, description and canonical input schema are what the model sees,
//! and every call it makes goes down the executor's pipeline like any other call: parsing,
//! schema validation, workspace path guards, permissions, the script gate, approval, kernel
//! confinement, output caps and the audit log. Nothing reaches a handler that the executor
//! would refuse.
//!
//! A refusal or failure comes back to the model as a rig tool error whose model-visible text is
//! the executor's feedback ([`tool_core::reply::text`]): the status, the stable reason code, the
//! step that stopped the call, the message and, for invalid arguments, every failing path with
//! the schema it must match. The error's code ([`ToolExecutionError::code`]) is the reason code,
//! and its kind follows it (`invalid_arguments` is [`ToolErrorKind::InvalidArgs`], refusals of
//! policy are [`ToolErrorKind::PermissionDenied`], ...), so rig's hooks and the model can act on
//! it.
//!
//! All calls of one [`RigTools`] share one executor [`Session`] (its error budget, grants made
//! for the session and context state), as calls of one conversation should.
//!
//! ```no_run
//! use std::sync::Arc;
//! use tool_core::{Executor, ExecutorConfig, Registry};
//! use tool_rig::RigTools;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Arc::new(Registry::from_inventory()?);
//! let executor = Arc::new(Executor::new(registry, ExecutorConfig::new("/srv/workspace"))?);
//! let tools = RigTools::new(executor).tools();
//! // rig_agent::AgentBuilder::new(model).dynamic_tools(tools).build()
//! # let _ = tools;
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

use std::sync::Arc;

use rig_core::message::ToolName;
use rig_core::tool::{DynamicTool, ToolErrorKind, ToolExecutionError, ToolOutput};
use serde_json::{Map, Value};
use tool_core::call::ToolCall;
use tool_core::content::Content;
use tool_core::executor::Session;
use tool_core::{CallOptions, CallResult, CallStatus, Executor, ReasonCode};

pub use rig_core;

/// The tools of an executor's registry as rig tools, all calling through that executor in one
/// session.
#[derive(Clone)]
pub struct RigTools {
    executor: Arc<Executor>,
    session: Arc<Session>,
}

impl std::fmt::Debug for RigTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigTools")
            .field("tools", &self.executor.registry().len())
            .field("session", &self.session.id())
            .finish()
    }
}

/// A registered tool's name is not a valid rig tool name.
#[derive(Debug, thiserror::Error)]
#[error("tool `{name}` cannot be a rig tool: its name is empty")]
pub struct InvalidToolName {
    /// The name.
    pub name: String,
}

impl RigTools {
    /// The executor's tools, calling in a new session of it.
    pub fn new(executor: Arc<Executor>) -> Self {
        let session = executor.new_session();
        RigTools { executor, session }
    }

    /// The executor's tools, calling in `session` (e.g. one per conversation).
    pub fn with_session(executor: Arc<Executor>, session: Arc<Session>) -> Self {
        RigTools { executor, session }
    }

    /// The session calls run in.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Every registered tool, in registry order, as a rig tool
    /// (`AgentBuilder::dynamic_tools`). A tool whose name rig refuses is left out; see
    /// [`RigTools::try_tools`] to be told.
    pub fn tools(&self) -> Vec<DynamicTool> {
        self.executor
            .registry()
            .iter()
            .filter_map(|t| self.tool(&t.decl().name).ok().flatten())
            .collect()
    }

    /// Every registered tool as a rig tool, or the first whose name rig refuses.
    pub fn try_tools(&self) -> Result<Vec<DynamicTool>, InvalidToolName> {
        self.executor
            .registry()
            .iter()
            .filter_map(|t| self.tool(&t.decl().name).transpose())
            .collect()
    }

    /// One registered tool as a rig tool; `Ok(None)` when no tool has this name.
    pub fn tool(&self, name: &str) -> Result<Option<DynamicTool>, InvalidToolName> {
        let Some(registered) = self.executor.registry().get(name) else {
            return Ok(None);
        };
        let decl = registered.decl();
        let tool_name = ToolName::new(decl.name.clone()).map_err(|_| InvalidToolName {
            name: decl.name.clone(),
        })?;
        let executor = Arc::clone(&self.executor);
        let session = Arc::clone(&self.session);
        let name = decl.name.clone();
        Ok(Some(DynamicTool::new(
            tool_name,
            decl.description.clone(),
            decl.input_schema.value().clone(),
            move |arguments: Value| {
                let executor = Arc::clone(&executor);
                let session = Arc::clone(&session);
                let name = name.clone();
                Box::pin(async move { call(&executor, &session, name, arguments).await })
            },
        )))
    }
}

/// One call through the executor, its result in rig's terms.
async fn call(
    executor: &Executor,
    session: &Session,
    name: String,
    arguments: Value,
) -> Result<ToolOutput, ToolExecutionError> {
    let arguments = match arguments {
        Value::Object(map) => map,
        // rig reads absent arguments as `null`; a tool without parameters takes `{}`.
        Value::Null => Map::new(),
        other => {
            // Not an object: the executor's parser refuses it with its own feedback.
            let raw = serde_json::json!({"name": name, "arguments": other}).to_string();
            let result = executor
                .execute(session, raw.as_str(), CallOptions::default())
                .await;
            return into_rig(result);
        }
    };
    let result = executor
        .execute(
            session,
            ToolCall::new(name, arguments),
            CallOptions::default(),
        )
        .await;
    into_rig(result)
}

/// A call's result as rig's tool output, or as a tool error the model reads.
pub fn into_rig(result: CallResult) -> Result<ToolOutput, ToolExecutionError> {
    if result.status == CallStatus::Ok {
        return Ok(output_of(&result));
    }
    let code = result.code.unwrap_or(ReasonCode::ToolError);
    let feedback = tool_core::reply::text(&result);
    let message = result.message.clone().unwrap_or_else(|| feedback.clone());
    let error = match result.status {
        CallStatus::Refused if refusal_of_policy(code) => ToolExecutionError::refused(message),
        _ => ToolExecutionError::new(kind_of(code), message),
    };
    Err(error
        .with_code(code.as_str())
        .with_retryable(retryable(code))
        .with_model_feedback(feedback))
}

/// The output the model reads: the tool's value (a string as text, other JSON as JSON), then
/// its content blocks (text as text, others described).
fn output_of(result: &CallResult) -> ToolOutput {
    let mut blocks: Vec<rig_core::message::ToolResultContent> = Vec::new();
    match &result.output {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => blocks.push(rig_core::message::ToolResultContent::text(s)),
        Some(v) => blocks.push(rig_core::message::ToolResultContent::json(v.clone())),
    }
    for block in &result.content {
        let text = match block {
            Content::Text(t) => t.clone(),
            other => other.describe(),
        };
        blocks.push(rig_core::message::ToolResultContent::text(text));
    }
    ToolOutput::content(blocks).unwrap_or_else(|_| ToolOutput::text(""))
}

/// Refusals a policy made on purpose (rig's refusal disposition), not failures of the call.
fn refusal_of_policy(code: ReasonCode) -> bool {
    matches!(
        code,
        ReasonCode::PermissionDenied
            | ReasonCode::ApprovalDenied
            | ReasonCode::SafetyDenied
            | ReasonCode::ReviewRequired
            | ReasonCode::PathOutsideWorkspace
    )
}

/// rig's normalized kind for a reason code.
fn kind_of(code: ReasonCode) -> ToolErrorKind {
    match code {
        ReasonCode::InvalidArguments | ReasonCode::MalformedCall => ToolErrorKind::InvalidArgs,
        ReasonCode::Timeout => ToolErrorKind::Timeout,
        ReasonCode::Cancelled => ToolErrorKind::Cancelled,
        ReasonCode::UnknownTool => ToolErrorKind::NotFound,
        c if refusal_of_policy(c) => ToolErrorKind::PermissionDenied,
        _ => ToolErrorKind::Other,
    }
}

/// Whether calling again with other arguments can succeed: the model's own mistakes are worth
/// a retry; refusals of policy, a spent budget or a missing sandbox are not.
fn retryable(code: ReasonCode) -> bool {
    matches!(
        code,
        ReasonCode::InvalidArguments
            | ReasonCode::MalformedCall
            | ReasonCode::PathOutsideWorkspace
            | ReasonCode::Timeout
            | ReasonCode::ToolError
    )
}
