//! Step `parse`: the call's input becomes a [`ToolCall`], or the call is refused
//! (`malformed_call`). The parsers themselves are in [`crate::call`].

use super::engine::Executor;
use super::options::CallInput;
use super::state::Stop;
use crate::call::{parse_call, ParseError, ToolCall};
use crate::status::Step;

/// Parse the input: text under the configured limits, a parsed call or parse result as it is.
#[inline]
pub(super) fn parse(executor: &Executor, input: CallInput<'_>) -> Result<ToolCall, ParseError> {
    match input {
        CallInput::Text(text) => parse_call(text, &executor.config.parse_limits),
        CallInput::Call(call) => Ok(call),
        CallInput::Parsed(parsed) => parsed,
    }
}

/// Refuse a call that did not parse.
#[inline]
pub(super) fn accept(parsed: Result<ToolCall, ParseError>) -> Result<ToolCall, Stop> {
    parsed.map_err(|e| Stop::new(Step::Parse, e.code(), e.to_string()))
}
