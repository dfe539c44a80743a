//! Step `parse`: the call's input becomes a [`ToolCall`], or the call is refused
//! (`malformed_call`). The parsers themselves are in [`crate::call`]; the dialect mapping of its
//! arguments runs once the tool is known ([`map_back`]).

use super::engine::Executor;
use super::options::CallInput;
use super::state::Stop;
use serde_json::{Map, Value};

use crate::call::{parse_call, ParseError, ToolCall};
use crate::decl::ToolDecl;
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

/// The call's arguments mapped back from the dialect they were shaped by (the configured one, else
/// the envelope's) to what the tool's canonical schema expects; validation follows.
#[inline]
pub(super) fn map_back(
    executor: &Executor,
    decl: &ToolDecl,
    call: &mut ToolCall,
) -> Map<String, Value> {
    let args = std::mem::take(&mut call.arguments);
    let Some(dialect) = executor.config.dialect.or(call.dialect) else {
        return args;
    };
    let mut value = Value::Object(args);
    dialect.map_back(&decl.input_schema, &mut value);
    match value {
        Value::Object(args) => args,
        // The mapping only removes members of objects: an object stays an object.
        _ => Map::new(),
    }
}
