//! Tool calls as the executor sees them, parsed from what a model wrote.
//!
//! A model's output is untrusted text. [`parse_call`] turns one call into a [`ToolCall`] and
//! [`parse_batch`] turns a whole model turn into a list of them; both refuse anything they do not
//! fully understand with a [`ParseError`] (reason code `malformed_call`) whose message says what was
//! wrong and where (byte offset, line and column, or JSON path).
//!
//! # Accepted shapes
//!
//! JSON (the input starts with `{` or `[` after leading whitespace):
//! - `{"tool": NAME, "args": {...}}`, exactly those two keys;
//! - OpenAI Chat Completions: `{"type": "function", "function": {"name": NAME, "arguments":
//!   "<JSON object as a string>"}}`, with an optional `"id"`;
//! - OpenAI Responses API: `{"type": "function_call", "name": NAME, "arguments": "<JSON string>",
//!   "call_id": ID}`, with optional `"id"` and `"status": "completed"` (other statuses are refused:
//!   the call is not finished); the call id is `call_id`;
//! - Anthropic: `{"type": "tool_use", "id": ID, "name": NAME, "input": {...}}`;
//! - Gemini: a part `{"functionCall": {"name": NAME, "args": {...}, "id"?: ID}}` (optional
//!   `thoughtSignature`; no `args`: no arguments).
//!
//! Call ids chosen by a model must be [`valid_call_id`]s. When a call does not parse but its
//! envelope still names its id (malformed `arguments`, a duplicate key in `input`, an oversized
//! input, a bad name), the [`ParseError`] keeps that id and the tool name, so the refusal is
//! answered under the id the provider expects.
//!
//! Any other key is refused. The `arguments` string of the OpenAI shapes is parsed by the same
//! strict parser under the same limits and must hold a JSON object.
//!
//! Text actions (anything else): `name(key=literal, ...)`, optionally after `Action:`. See
//! [`text`](self#text-actions) below.
//!
//! # Strict JSON
//!
//! Duplicate object keys are refused at any depth, lone surrogates (`"\ud800"`) are refused,
//! integers that do not fit in 64 bits are refused rather than rounded, nesting deeper than
//! [`ParseLimits::max_depth`] is refused by a linear pre-scan before any recursive parsing, and
//! strings longer than [`ParseLimits::max_string_len`] are refused. JSON wrapped in a markdown
//! code fence is refused unless [`ParseLimits::allow_fenced`] is set.
//!
//! # Text actions
//!
//! `get_weather(city="Paris", days=3)` or `Action: get_weather(city='Paris')`. The tool name and
//! every keyword are ASCII identifiers (`[A-Za-z_][A-Za-z0-9_]*`, not a Python keyword). Values
//! are literals only:
//! - strings in single or double quotes, with the escapes `\\ \' \" \n \r \t \0 \xNN \uNNNN
//!   \UNNNNNNNN`; any other escape, raw control characters (other than tab), surrogate code
//!   points, string prefixes (`f""`, `b""`, `r""`, `u""`, ...) and triple quotes are refused;
//! - integers that fit in `i64` (negative) or `u64` (non-negative), written in decimal without
//!   leading zeros or `_` separators; anything larger is refused rather than rounded;
//! - finite floats (`1.5`, `.5`, `5.`, `1e-3`, optionally with a leading `-`);
//! - `true`/`True`, `false`/`False`, `null`/`None`;
//! - lists `[...]` and dicts `{"key": literal, ...}` with string keys (duplicates refused).
//!
//! Tuples, sets, positional arguments, duplicate keywords, `*args`, `**kwargs`, attribute calls,
//! nested calls, names as values, operators and expressions (`1+1`, `-x`), lambdas, several
//! statements (`;` or a second line) and trailing text are refused. Whitespace, newlines inside the
//! brackets and trailing commas are accepted, as Python accepts them.

mod fields;
mod gemini;
mod input;
mod json;
mod salvage;
mod shape;
pub mod stream;
mod text;
mod turn;
mod types;

use serde_json::Value;

use input::{classify, Input};

pub use crate::schema::export::Dialect;
pub use stream::ToolCallAssembler;
pub use turn::{parse_turn, parse_turn_items, Turn};
pub use types::{valid_call_id, ParseError, ParseLimits, ToolCall, DEPTH_CEILING, MAX_CALL_ID_LEN};

/// Parse one call, in any of the shapes listed in the [module documentation](self).
///
/// A JSON array is refused here: a list of calls is a batch, see [`parse_batch`].
pub fn parse_call(input: &str, limits: &ParseLimits) -> Result<ToolCall, ParseError> {
    match classify(input, limits)? {
        Input::Json(doc) => {
            // The common shape, read without building the outer object; anything else, or any
            // fault, takes the general path below, which says precisely what is wrong.
            if let Some((name, args)) = json::tool_args_call(doc, limits) {
                return Ok(ToolCall::new(name, args));
            }
            json::parse(doc, limits)
                .and_then(|value| call_from_value(value, limits))
                .map_err(|e| salvage::from_doc(e, doc))
        }
        Input::Text(text) => text::parse(text, limits),
    }
}

/// A call from a parsed JSON document (the general path of [`parse_call`]).
fn call_from_value(doc: Value, limits: &ParseLimits) -> Result<ToolCall, ParseError> {
    match doc {
        Value::Object(obj) => shape::call_from_object(obj, "$", limits),
        Value::Array(_) => Err(ParseError::new(
            "the input is a JSON array, which is a batch of calls; a single call is a JSON object",
        )),
        _ => Err(ParseError::new("a call must be a JSON object")),
    }
}

/// Parse a model turn into its calls, in order.
///
/// Accepts a JSON array whose items are calls of any JSON shape, OpenAI `tool_calls` entries or
/// Anthropic content blocks (`text`, `thinking` and `redacted_thinking` blocks, and Responses API
/// `message` and `reasoning` items, are skipped; any other item type is refused); a Chat
/// Completions assistant message `{"role": "assistant", "content": ..., "tool_calls": [...]}`
/// (optional `refusal` and `annotations` keys tolerated); an Anthropic-style assistant message
/// `{"role": "assistant", "content": [blocks]}`; a Gemini content `{"role": "model", "parts":
/// [...]}` (text parts skipped) or a whole Gemini response `{"candidates": [{"content": ...}]}`
/// with one candidate; or a single call of any shape, text actions included. One bad item refuses the whole turn; more than [`ParseLimits::max_calls`] calls are
/// refused.
pub fn parse_batch(input: &str, limits: &ParseLimits) -> Result<Vec<ToolCall>, ParseError> {
    let calls = match classify(input, limits)? {
        Input::Json(doc) => match json::parse(doc, limits)? {
            Value::Array(items) => shape::calls_from_array(items, "$", limits)?,
            Value::Object(obj) => shape::calls_from_object(obj, limits)?,
            _ => {
                return Err(ParseError::new(
                    "a model turn must be a JSON array or object",
                ))
            }
        },
        Input::Text(text) => vec![text::parse(text, limits)?],
    };
    if calls.len() > limits.max_calls {
        return Err(ParseError::new(format!(
            "the turn has {} calls; the limit is {}",
            calls.len(),
            limits.max_calls
        )));
    }
    Ok(calls)
}

#[cfg(test)]
mod tests;
