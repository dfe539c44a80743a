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

/// The `{"tool": NAME, "args": {...}}` call as [`parse_call`] would read it, without reading
/// the arguments: the name and the arguments' JSON text, for the executor's typed path. `None`
/// for anything [`parse_call`] might refuse or read otherwise (another shape, a duplicate or
/// unknown key, a name or arguments text over the string limit, a nesting limit too low for
/// `{"tool", "args": {"x": [..]}}`); the caller then takes [`parse_call`]. The arguments text
/// is not checked here (the common form is scanned by hand, without reading the arguments):
/// whoever reads it must accept only one JSON value, and only what [`parse_call`] would.
pub(crate) fn tool_args_raw<'a>(
    input: &'a str,
    limits: &ParseLimits,
) -> Option<(std::borrow::Cow<'a, str>, &'a str)> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw<'a> {
        #[serde(borrow)]
        tool: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        args: &'a serde_json::value::RawValue,
    }
    let Ok(Input::Json(doc)) = classify(input, limits) else {
        return None;
    };
    // Three levels: the call, its arguments, an array among them. The arguments text bounds
    // every string in it, its keys included, whatever their escapes.
    if limits.depth() < 3 {
        return None;
    }
    let (tool, args) = match scan_envelope(doc) {
        Some((tool, args)) => (std::borrow::Cow::Borrowed(tool), args),
        // An object: serde would also read the struct from an array, which is a batch.
        None if doc.trim_start().starts_with('{') => {
            let raw: Raw<'a> = serde_json::from_str(doc).ok()?;
            (raw.tool, raw.args.get())
        }
        None => return None,
    };
    if tool.is_empty()
        || tool.len() > limits.max_string_len
        || args.len() > limits.max_string_len
        || !args.starts_with('{')
    {
        return None;
    }
    Some((tool, args))
}

/// `{"tool": NAME, "args": ARGS}` read by hand, in exactly that form (JSON whitespace anywhere
/// between tokens, a name without escapes or control characters): the name and the text between
/// `"args":` and the closing brace, whitespace trimmed. Whether that text is one JSON value is
/// for its reader to check (a reader that accepts nothing after its value). `None` for anything
/// else, which the serde reading of the envelope then takes.
fn scan_envelope(doc: &str) -> Option<(&str, &str)> {
    let b = doc.as_bytes();
    let ws = |i: usize| {
        let mut i = i;
        while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    };
    let token = |i: usize, t: &[u8]| {
        b.get(i..i + t.len())
            .filter(|s| *s == t)
            .map(|_| i + t.len())
    };
    let mut i = ws(0);
    i = ws(token(i, b"{")?);
    i = ws(token(i, b"\"tool\"")?);
    i = ws(token(i, b":")?);
    i = token(i, b"\"")?;
    let start = i;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => break,
            b'\\' | 0..=0x1f => return None,
            _ => i += 1,
        }
    }
    let name = doc.get(start..i)?;
    i = ws(token(i, b"\"")?);
    i = ws(token(i, b",")?);
    i = ws(token(i, b"\"args\"")?);
    i = ws(token(i, b":")?);
    let mut end = b.len();
    while end > i && matches!(b[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    if end <= i || b[end - 1] != b'}' {
        return None;
    }
    end -= 1;
    while end > i && matches!(b[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    Some((name, doc.get(i..end)?))
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
