//! Step `lookup`: the tool the call names must be registered (`unknown_tool`); its arguments are
//! then mapped back from the dialect they were shaped by ([`super::parse::map_back`]).

use super::engine::Executor;
use super::state::{CallState, Stop};
use crate::call::ToolCall;
use crate::reason::ReasonCode;
use crate::status::Step;

/// Find the call's tool; the call's state starts here.
#[inline]
pub(super) fn find(executor: &Executor, mut call: ToolCall) -> Result<CallState<'_>, Stop> {
    match executor.registry.get(&call.name) {
        Some(tool) => {
            let args = super::parse::map_back(executor, tool.decl(), &mut call);
            Ok(CallState::new(tool, args))
        }
        None => Err(Stop::new(
            Step::Lookup,
            ReasonCode::UnknownTool,
            format!("no tool named `{}` is registered", call.name),
        )),
    }
}
