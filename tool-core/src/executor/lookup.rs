//! Step `lookup`: the tool the call names must be registered (`unknown_tool`).

use super::engine::Executor;
use super::state::{CallState, Stop};
use crate::call::ToolCall;
use crate::reason::ReasonCode;
use crate::status::Step;

/// Find the call's tool; the call's state starts here.
#[inline]
pub(super) fn find(executor: &Executor, call: ToolCall) -> Result<CallState<'_>, Stop> {
    match executor.registry.get(&call.name) {
        Some(tool) => Ok(CallState::new(tool, call.arguments)),
        None => Err(Stop::new(
            Step::Lookup,
            ReasonCode::UnknownTool,
            format!("no tool named `{}` is registered", call.name),
        )),
    }
}
