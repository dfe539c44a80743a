//! Unit tests: every accepted shape, every refusal, and what each refusal message points at.

use serde_json::{json, Map, Value};

use super::*;
use crate::schema::export::Dialect;

pub(super) fn ok(input: &str) -> ToolCall {
    match parse_call(input, &ParseLimits::default()) {
        Ok(call) => call,
        Err(e) => panic!("expected {input:?} to parse, got: {}", e.message),
    }
}

/// Refused, and the message mentions `needle`.
pub(super) fn refused(input: &str, needle: &str) -> String {
    refused_with(input, &ParseLimits::default(), needle)
}

pub(super) fn refused_with(input: &str, limits: &ParseLimits, needle: &str) -> String {
    match parse_call(input, limits) {
        Ok(call) => panic!("expected {input:?} to be refused, got {call:?}"),
        Err(e) => {
            assert_eq!(e.code(), crate::reason::ReasonCode::MalformedCall);
            assert!(
                e.message.contains(needle),
                "message for {input:?} should contain {needle:?}: {}",
                e.message
            );
            e.message
        }
    }
}

pub(super) fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("test arguments must be an object"),
    }
}

// ---- JSON shapes ----

#[test]
fn tool_args_shape() {
    let call = ok(r#"{"tool": "read", "args": {"path": "a.txt"}}"#);
    assert_eq!(call, ToolCall::new("read", args(json!({"path": "a.txt"}))));
}

#[test]
fn tool_args_refuses_extra_or_missing_keys() {
    refused(
        r#"{"tool": "read", "args": {}, "id": "1"}"#,
        "unexpected key \"id\"",
    );
    refused(r#"{"tool": "read"}"#, "missing key \"args\"");
    refused(r#"{"args": {}}"#, "missing key \"tool\"");
    refused(r#"{"tool": 3, "args": {}}"#, "$.tool must be a string");
    refused(r#"{"tool": "", "args": {}}"#, "empty tool name");
    refused(
        r#"{"tool": "read", "args": []}"#,
        "$.args is missing or not a JSON object",
    );
}

#[test]
fn chat_completions_shape_with_and_without_id() {
    let input = r#"{"id": "call_1", "type": "function",
        "function": {"name": "get", "arguments": "{\"city\": \"Paris\"}"}}"#;
    assert_eq!(
        ok(input),
        ToolCall::new("get", args(json!({"city": "Paris"})))
            .with_id("call_1")
            .with_dialect(Dialect::OpenAiStrict)
    );
    let input = r#"{"type": "function", "function": {"name": "get", "arguments": "{}"}}"#;
    assert_eq!(
        ok(input),
        ToolCall::new("get", Map::new()).with_dialect(Dialect::OpenAiStrict)
    );
}

#[test]
fn chat_completions_refusals() {
    refused(
        r#"{"type": "function", "function": {"name": "get", "arguments": {}}}"#,
        "$.function.arguments must be a string holding a JSON object",
    );
    refused(
        r#"{"type": "function", "function": {"name": "get", "arguments": "[1]"}}"#,
        "$.function.arguments must hold a JSON object",
    );
    refused(
        r#"{"type": "function", "function": {"name": "get", "arguments": "{\"a\":1,\"a\":2}"}}"#,
        "in $.function.arguments: invalid JSON: duplicate key \"a\"",
    );
    refused(
        r#"{"type": "function", "function": {"name": "get", "arguments": "{}", "strict": true}}"#,
        "unexpected key \"strict\" at $.function",
    );
    refused(
        r#"{"type": "function", "index": 0, "function": {"name": "get", "arguments": "{}"}}"#,
        "unexpected key \"index\" at $",
    );
    refused(
        r#"{"type": "function", "id": 7, "function": {"name": "get", "arguments": "{}"}}"#,
        "$.id must be a non-empty string",
    );
    refused(r#"{"type": "function"}"#, "missing key \"function\"");
}

#[test]
fn inner_arguments_string_obeys_the_same_limits() {
    let deep = format!("{}{}", "[".repeat(10), "]".repeat(10));
    let inner = serde_json::to_string(&format!("{{\"a\": {deep}}}")).expect("a string serializes");
    let input =
        format!(r#"{{"type": "function", "function": {{"name": "f", "arguments": {inner}}}}}"#);
    let limits = ParseLimits {
        max_depth: 8,
        ..ParseLimits::default()
    };
    refused_with(
        &input,
        &limits,
        "in $.function.arguments: nesting deeper than 8 levels",
    );
}

#[test]
fn responses_shape() {
    let input = r#"{"type": "function_call", "id": "fc_1", "call_id": "call_9",
        "name": "get", "arguments": "{\"n\": 2}", "status": "completed"}"#;
    assert_eq!(
        ok(input),
        ToolCall::new("get", args(json!({"n": 2})))
            .with_id("call_9")
            .with_dialect(Dialect::OpenAiStrict)
    );
    let input = r#"{"type": "function_call", "call_id": "c", "name": "get", "arguments": "{}"}"#;
    assert_eq!(ok(input).id.as_deref(), Some("c"));
}

#[test]
fn responses_refusals() {
    refused(
        r#"{"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}", "status": "in_progress"}"#,
        "only a \"completed\" function_call is accepted",
    );
    refused(
        r#"{"type": "function_call", "name": "g", "arguments": "{}"}"#,
        "missing key \"call_id\"",
    );
    refused(
        r#"{"type": "function_call", "call_id": "c", "name": "g", "arguments": "{}", "extra": 1}"#,
        "unexpected key \"extra\"",
    );
}

#[test]
fn anthropic_shape() {
    let input = r#"{"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"q": [1, 2]}}"#;
    assert_eq!(
        ok(input),
        ToolCall::new("get", args(json!({"q": [1, 2]})))
            .with_id("toolu_1")
            .with_dialect(Dialect::Anthropic)
    );
}

#[test]
fn anthropic_refusals() {
    refused(
        r#"{"type": "tool_use", "id": "t", "name": "get", "input": "{}"}"#,
        "$.input must be a JSON object",
    );
    refused(
        r#"{"type": "tool_use", "name": "get", "input": {}}"#,
        "missing key \"id\"",
    );
    refused(
        r#"{"type": "tool_use", "id": "t", "name": "get", "input": {}, "cache_control": {}}"#,
        "unexpected key \"cache_control\"",
    );
}

#[test]
fn unknown_shapes_are_refused() {
    refused(
        r#"{"name": "get", "arguments": {}}"#,
        "unrecognised call shape at $",
    );
    refused(
        r#"{"type": "server_tool_use"}"#,
        "unknown call type \"server_tool_use\"",
    );
    refused(r#"{"type": 1}"#, "$.type must be a string");
    refused(r#"[{"tool": "a", "args": {}}]"#, "is a batch");
    refused(r#"{}"#, "found keys none");
}

// ---- strict JSON ----

#[test]
fn duplicate_keys_refused_at_any_depth_with_path() {
    refused(
        r#"{"tool": "a", "tool": "b", "args": {}}"#,
        "duplicate key \"tool\" in the object at $",
    );
    refused(
        r#"{"tool": "a", "args": {"x": [{"k": 1, "k": 2}]}}"#,
        "duplicate key \"k\" in the object at $.args.x[0]",
    );
    let msg = refused(
        r#"{"tool": "a", "args": {"x": 1, "x": 1}}"#,
        "line 1 column",
    );
    assert!(msg.contains("$.args"), "{msg}");
}

#[test]
fn lone_surrogates_refused() {
    refused(r#"{"tool": "a", "args": {"s": "\ud800"}}"#, "surrogate");
    refused(
        r#"{"tool": "a", "args": {"s": "\udc00x"}}"#,
        "lone surrogate \\udc00 at byte 29",
    );
    refused(
        r#"{"tool": "a", "args": {"\ud800\u0041": 1}}"#,
        "lone surrogate \\ud800 at byte 24",
    );
    refused(
        r#"{"tool": "a", "args": {"s": "\ud800"}}"#,
        "lone surrogate \\ud800 at byte 29",
    );
    // An escaped backslash before `u` is no escape, so the low half after it is alone.
    refused(
        r#"{"tool": "a", "args": {"s": "\\ud83d\ude00"}}"#,
        "lone surrogate \\ude00 at byte 36",
    );
    // A proper pair is a character, not a lone surrogate.
    assert_eq!(
        ok(r#"{"tool": "a", "args": {"s": "\ud83d\ude00"}}"#).arguments["s"],
        json!("\u{1F600}")
    );
}

#[test]
fn integers_beyond_64_bits_refused_not_rounded() {
    refused(
        r#"{"tool": "a", "args": {"n": 18446744073709551616}}"#,
        "integer \"18446744073709551616\" at byte 28 does not fit in 64 bits",
    );
    refused(
        r#"{"tool": "a", "args": {"n": -9223372036854775809}}"#,
        "does not fit in 64 bits",
    );
    let call =
        ok(r#"{"tool": "a", "args": {"n": 18446744073709551615, "m": -9223372036854775808}}"#);
    assert_eq!(call.arguments["n"], json!(u64::MAX));
    assert_eq!(call.arguments["m"], json!(i64::MIN));
    // Floats are floats: large exponents are fine while finite, refused when not.
    assert_eq!(
        ok(r#"{"tool": "a", "args": {"f": 1e300}}"#).arguments["f"],
        json!(1e300)
    );
    refused(r#"{"tool": "a", "args": {"f": 1e400}}"#, "invalid JSON");
}

#[test]
fn depth_limit_counts_from_the_document_root() {
    let limits = ParseLimits {
        max_depth: 3,
        ..ParseLimits::default()
    };
    assert!(parse_call(r#"{"tool": "a", "args": {"x": [1]}}"#, &limits).is_ok());
    refused_with(
        r#"{"tool": "a", "args": {"x": [[1]]}}"#,
        &limits,
        "nesting deeper than 3 levels at byte 29",
    );
    // Brackets inside strings do not count.
    assert!(parse_call(r#"{"tool": "a", "args": {"x": "[[[[[[\"{{{"}}"#, &limits).is_ok());
}

/// Depth means the same in every shape, so a call accepted in one shape is accepted in
/// `{"tool", "args"}` under the same limits.
#[test]
fn depth_is_the_same_in_every_shape() {
    let limits = ParseLimits {
        max_depth: 3,
        ..ParseLimits::default()
    };
    let fits = [
        "f(x=[1])",
        r#"{"type": "function", "function": {"name": "f", "arguments": "{\"x\": [1]}"}}"#,
        r#"{"type": "tool_use", "id": "t", "name": "f", "input": {"x": [1]}}"#,
    ];
    for input in fits {
        assert!(parse_call(input, &limits).is_ok(), "{input}");
    }
    refused_with(
        "f(x=[[1]])",
        &limits,
        "nesting deeper than 3 levels at byte 5",
    );
    refused_with(
        r#"{"type": "function", "function": {"name": "f", "arguments": "{\"x\": [[1]]}"}}"#,
        &limits,
        "in $.function.arguments: nesting deeper than 3 levels at byte 7",
    );
}

#[test]
fn depth_limit_has_a_ceiling() {
    let limits = ParseLimits {
        max_depth: usize::MAX,
        ..ParseLimits::default()
    };
    let input = format!(
        r#"{{"tool": "a", "args": {{"x": {}{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    refused_with(
        &input,
        &limits,
        &format!("nesting deeper than {DEPTH_CEILING} levels"),
    );
}

#[test]
fn hundred_thousand_deep_nesting_refused() {
    let limits = ParseLimits {
        max_bytes: 1 << 20,
        ..ParseLimits::default()
    };
    for open in ["[", "{\"a\":"] {
        let input = format!("{{\"tool\":\"a\",\"args\":{{\"x\":{}", open.repeat(100_000));
        refused_with(&input, &limits, "nesting deeper than 64 levels");
    }
    let text = format!("f(x={})", "[".repeat(100_000));
    refused_with(&text, &limits, "nesting deeper than 64 levels");
    let text = format!("f(x={})", "{'a': ".repeat(100_000));
    refused_with(&text, &limits, "nesting deeper than 64 levels");
}

#[test]
fn ten_mib_line_refused() {
    let input = format!(
        r#"{{"tool": "a", "args": {{"s": "{}"}}}}"#,
        "x".repeat(10 << 20)
    );
    refused(&input, "bytes; the limit is 1048576");
    let text = format!("f(s=\"{}\")", "x".repeat(10 << 20));
    refused(&text, "bytes; the limit is 1048576");
}

#[test]
fn string_length_limit() {
    let limits = ParseLimits {
        max_string_len: 4,
        ..ParseLimits::default()
    };
    assert!(parse_call(r#"{"tool": "a", "args": {"s": "abcd"}}"#, &limits).is_ok());
    refused_with(
        r#"{"tool": "a", "args": {"s": "abcde"}}"#,
        &limits,
        "string at $.args.s is 5 bytes; the limit is 4",
    );
    refused_with(
        r#"{"tool": "a", "args": {"abcde": 1}}"#,
        &limits,
        "key at $.args is 5 bytes",
    );
    refused_with(
        r#"f(s="abcde")"#,
        &limits,
        "string longer than 4 bytes at byte 4",
    );
    refused_with(
        r#"f(s="\x41\x41\x41\x41\x41")"#,
        &limits,
        "string longer than 4 bytes",
    );
}

#[test]
fn json_syntax_errors_say_where() {
    refused(
        r#"{"tool": "a", "args": {}} x"#,
        "trailing characters at line 1 column 27",
    );
    refused(r#"{"tool": "a", "args": {},}"#, "invalid JSON");
    refused(
        "{\"tool\": \"a\",\n \"args\": {\"s\": 'x'}}",
        "line 2 column",
    );
    refused(r#"{"tool": "a", "args": {"n": NaN}}"#, "invalid JSON");
    refused(
        "{\"tool\": \"a\", \"args\": {\"s\": \"a\u{1}b\"}}",
        "control character",
    );
}

#[test]
fn fenced_json_refused_by_default() {
    let fenced = "```json\n{\"tool\": \"a\", \"args\": {}}\n```";
    refused(fenced, "markdown-fenced input is refused");
    let limits = ParseLimits {
        allow_fenced: true,
        ..ParseLimits::default()
    };
    assert_eq!(
        parse_call(fenced, &limits).expect("fenced JSON is allowed here"),
        ToolCall::new("a", Map::new())
    );
    assert!(parse_call("```\n{\"tool\": \"a\", \"args\": {}}\n```\n", &limits).is_ok());
    refused_with(
        "```python\nf(x=1)\n```",
        &limits,
        "must open with ``` or ```json",
    );
    refused_with("```\nf(x=1)\n```", &limits, "may only hold JSON");
    refused_with(
        "```json\n{\"tool\": \"a\", \"args\": {}}",
        &limits,
        "no closing",
    );
    refused_with(
        "```json\n{\"tool\": \"a\", \"args\": {}}\n```\nmore",
        &limits,
        "no closing",
    );
}

#[test]
fn empty_input_refused() {
    refused("", "empty");
    refused(" \n\t", "empty");
}

mod batch;
mod raw;
mod text;
