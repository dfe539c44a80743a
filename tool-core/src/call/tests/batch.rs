//! Batches: a model turn's calls in order.

use super::*;
use crate::schema::export::Dialect;

fn batch(input: &str) -> Vec<ToolCall> {
    match parse_batch(input, &ParseLimits::default()) {
        Ok(calls) => calls,
        Err(e) => panic!("expected {input:?} to parse as a batch, got: {}", e.message),
    }
}

fn batch_refused(input: &str, needle: &str) {
    match parse_batch(input, &ParseLimits::default()) {
        Ok(calls) => panic!("expected {input:?} to be refused, got {calls:?}"),
        Err(e) => assert!(
            e.message.contains(needle),
            "{needle:?} not in: {}",
            e.message
        ),
    }
}

#[test]
fn batch_of_mixed_json_shapes_in_order() {
    let calls = batch(
        r#"[{"tool": "a", "args": {}},
            {"type": "function", "id": "c1", "function": {"name": "b", "arguments": "{}"}},
            {"type": "tool_use", "id": "t1", "name": "c", "input": {}}]"#,
    );
    let names: Vec<_> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn batch_openai_message_and_tool_calls_array() {
    let calls = batch(
        r#"{"role": "assistant", "content": null, "refusal": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{\"x\":1}"}},
            {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]}"#,
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0],
        ToolCall::new("a", args(json!({"x": 1})))
            .with_id("c1")
            .with_dialect(Dialect::OpenAiStrict)
    );
    assert_eq!(calls[1].id.as_deref(), Some("c2"));
    assert!(batch(r#"{"role": "assistant", "content": "just text"}"#).is_empty());
    batch_refused(
        r#"{"role": "user", "content": "hi"}"#,
        "$.role must be \"assistant\"",
    );
    batch_refused(
        r#"{"role": "assistant", "tool_calls": [], "audio": null}"#,
        "unexpected key \"audio\"",
    );
    batch_refused(
        r#"{"role": "assistant", "tool_calls": {}}"#,
        "$.tool_calls must be an array",
    );
    batch_refused(
        r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": "{"}}]}"#,
        "in $.tool_calls[0].function.arguments: invalid JSON",
    );
}

#[test]
fn batch_anthropic_blocks_skip_text() {
    let input = r#"[{"type": "text", "text": "Let me check."},
        {"type": "thinking", "thinking": "...", "signature": "x"},
        {"type": "tool_use", "id": "t1", "name": "a", "input": {"q": 1}},
        {"type": "tool_use", "id": "t2", "name": "b", "input": {}}]"#;
    let calls = batch(input);
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0],
        ToolCall::new("a", args(json!({"q": 1})))
            .with_id("t1")
            .with_dialect(Dialect::Anthropic)
    );
    let message = format!(r#"{{"role": "assistant", "content": {input}}}"#);
    assert_eq!(batch(&message), calls);
}

#[test]
fn batch_responses_output_skips_messages_and_reasoning() {
    let calls = batch(
        r#"[{"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "c", "name": "a", "arguments": "{}"}]"#,
    );
    assert_eq!(
        calls,
        [ToolCall::new("a", Map::new())
            .with_id("c")
            .with_dialect(Dialect::OpenAiStrict)]
    );
}

#[test]
fn batch_refusals() {
    batch_refused(
        r#"[{"type": "image", "source": {}}]"#,
        "unknown call type \"image\" at $[0].type",
    );
    batch_refused(
        r#"[{"tool": "a", "args": {}}, 3]"#,
        "$[1] must be a JSON object",
    );
    batch_refused(
        r#"[{"tool": "a", "args": {}}, {"tool": "b"}]"#,
        "missing key \"args\" at $[1]",
    );
    batch_refused("3", "expected a tool name, found '3'");
    let limits = ParseLimits {
        max_calls: 1,
        ..ParseLimits::default()
    };
    let two = r#"[{"tool": "a", "args": {}}, {"tool": "b", "args": {}}]"#;
    let err = parse_batch(two, &limits).expect_err("two calls exceed a limit of one");
    assert!(
        err.message.contains("the turn has 2 calls; the limit is 1"),
        "{}",
        err.message
    );
}

#[test]
fn batch_single_call_and_text_action() {
    assert_eq!(
        batch(r#"{"tool": "a", "args": {}}"#),
        [ToolCall::new("a", Map::new())]
    );
    assert_eq!(
        batch("Action: a(x=1)"),
        [ToolCall::new("a", args(json!({"x": 1})))]
    );
    assert!(batch("[]").is_empty());
}

#[test]
fn display_names_the_reason() {
    let err = parse_call("", &ParseLimits::default()).expect_err("empty input is refused");
    assert_eq!(err.to_string(), "malformed call: the input is empty");
}

// ---- the {"tool", "args"} fast path ----

/// `parse_call` reads `{"tool", "args"}` calls without building the outer object; it must give
/// exactly what the general path gives (the same call, or the same refusal) for every input.
#[test]
fn tool_args_fast_path_agrees_with_the_general_path() {
    let inputs = [
        r#"{"tool": "read", "args": {"path": "a.txt", "n": 2}}"#,
        r#"{"args": {"path": "a.txt"}, "tool": "read"}"#,
        r#"{"tool": "read", "args": {}}"#,
        r#"{"t\u006fol": "read", "args": {"p\u0061th": "x"}}"#,
        r#"{"tool": "r\u00e9ad", "args": {"a": [1, {"b": null}]}}"#,
        r#"{"tool": "read", "args": {"path": "a"}, "id": "x"}"#,
        r#"{"tool": "read", "tool": "write", "args": {}}"#,
        r#"{"tool": "read", "args": {}, "args": {}}"#,
        r#"{"tool": "read", "args": {"a": 1, "a": 2}}"#,
        r#"{"tool": "", "args": {}}"#,
        r#"{"tool": 7, "args": {}}"#,
        r#"{"tool": null, "args": {}}"#,
        r#"{"tool": "read", "args": []}"#,
        r#"{"tool": "read", "args": null}"#,
        r#"{"tool": "read", "args": "{}"}"#,
        r#"{"tool": "read"}"#,
        r#"{"args": {}}"#,
        r#"{}"#,
        r#"[{"tool": "read", "args": {}}]"#,
        r#"{"tool": "read", "args": {}} trailing"#,
        r#"{"tool": "read", "args": {"n": 123456789012345678901234567890}}"#,
        r#"{"tool": "read", "args": {"s": "\ud800"}}"#,
        r#"{"tool": "read", "args": {"s": "\udc00"}}"#,
        r#"{"tool": "read", "args": {"s": "\ud800\u0041"}}"#,
        r#"{"tool": "read", "args": {"s": "\ud83d\ude00"}}"#,
        r#"{"tool": "read", "args": {"n": -9223372036854775809}}"#,
        r#"{"tool": "read", "args": {"n": 18446744073709551615, "m": -9223372036854775808}}"#,
        r#"{"tool": "read", "args": {"x": 1.5, "y": 1e400}}"#,
        r#"{"tool": "read", "args": {"x": 2e3}}"#,
        r#"{"tool": "read", "args": {"x": [1, 2.5]}}"#,
        r#"{"tool": "read", "args": {"a": {"b": {"c": {"d": [[[1]]]}}}}}"#,
        r#"{"tool": "read", "args": {"long": "abcdefghij"}}"#,
        r#"{"tool": "abcdefghij", "args": {}}"#,
        r#"{"tool": "read", "args": {"a": 1,}}"#,
        r#"{"tool": "read", "args": {"a": NaN}}"#,
        r#"{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}"#,
        r#"{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}"#,
        r#"{"id": "t1", "type": "tool_use", "name": "f", "input": {}}"#,
        r#"{"tool": "read", "type": "tool_use", "args": {}}"#,
        r#"{"tool": "read", "args": {"a": 1}"#,
    ];
    let limits = [
        ParseLimits::default(),
        ParseLimits {
            max_string_len: 5,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_string_len: 3,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_depth: 3,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_depth: 1,
            ..ParseLimits::default()
        },
    ];
    let deep_array = format!(
        r#"{{"tool": "read", "args": {{"a": {}{}}}}}"#,
        "[".repeat(150),
        "]".repeat(150)
    );
    let deep_object = format!(
        r#"{{"tool": "read", "args": {}1{}}}"#,
        r#"{"a": "#.repeat(70),
        "}".repeat(70)
    );
    let mut inputs: Vec<&str> = inputs.to_vec();
    inputs.push(&deep_array);
    inputs.push(&deep_object);
    for l in &limits {
        for &input in &inputs {
            let general = match classify(input, l) {
                Ok(Input::Json(doc)) => json::parse(doc, l)
                    .and_then(|v| call_from_value(v, l))
                    .map_err(|e| salvage::from_doc(e, doc)),
                Ok(Input::Text(_)) => panic!("{input:?} is JSON"),
                Err(e) => Err(e),
            };
            assert_eq!(parse_call(input, l), general, "{input:?} under {l:?}");
        }
    }
}
