//! Unit tests: every accepted shape, every refusal, and what each refusal message points at.

use serde_json::{json, Map, Value};

use super::*;

fn ok(input: &str) -> ToolCall {
    match parse_call(input, &ParseLimits::default()) {
        Ok(call) => call,
        Err(e) => panic!("expected {input:?} to parse, got: {}", e.message),
    }
}

/// Refused, and the message mentions `needle`.
fn refused(input: &str, needle: &str) -> String {
    refused_with(input, &ParseLimits::default(), needle)
}

fn refused_with(input: &str, limits: &ParseLimits, needle: &str) -> String {
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

fn args(v: Value) -> Map<String, Value> {
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
        ToolCall::new("get", args(json!({"city": "Paris"}))).with_id("call_1")
    );
    let input = r#"{"type": "function", "function": {"name": "get", "arguments": "{}"}}"#;
    assert_eq!(ok(input), ToolCall::new("get", Map::new()));
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
        ToolCall::new("get", args(json!({"n": 2}))).with_id("call_9")
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
        ToolCall::new("get", args(json!({"q": [1, 2]}))).with_id("toolu_1")
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

// ---- text actions ----

#[test]
fn text_action_with_every_literal_kind() {
    let call = ok(
        r#"Action: get_weather(city="Paris", days=3, ratio=-0.5, big=1e10, flag=True,
        off=false, none=None, nil=null, list=[1, 'two', [3.0]], dict={"k": {'n': -4}}, empty=[],)"#,
    );
    let want = json!({
        "city": "Paris", "days": 3, "ratio": -0.5, "big": 1e10, "flag": true, "off": false,
        "none": null, "nil": null, "list": [1, "two", [3.0]], "dict": {"k": {"n": -4}}, "empty": []
    });
    assert_eq!(call, ToolCall::new("get_weather", args(want)));
}

#[test]
fn text_action_without_arguments_and_with_whitespace() {
    assert_eq!(ok("ping()"), ToolCall::new("ping", Map::new()));
    assert_eq!(ok("  ping ( )  \n"), ToolCall::new("ping", Map::new()));
    assert_eq!(ok("Action:ping()"), ToolCall::new("ping", Map::new()));
    let call = ok("f(\n    a=1,\n    b=[\n        2,\n    ],\n)");
    assert_eq!(call.arguments, args(json!({"a": 1, "b": [2]})));
}

#[test]
fn text_string_escapes() {
    let call = ok(r#"f(a="q\"s\'b\\n\n\t\r\0", b='\x41\u00e9\U0001F600', c='it"s', d="tab	in")"#);
    assert_eq!(call.arguments["a"], json!("q\"s'b\\n\n\t\r\0"));
    assert_eq!(call.arguments["b"], json!("Aé\u{1F600}"));
    assert_eq!(call.arguments["c"], json!("it\"s"));
    assert_eq!(call.arguments["d"], json!("tab\tin"));
}

#[test]
fn text_string_refusals() {
    refused(r#"f(a="\q")"#, "unknown escape `\\q` in a string at byte 5");
    refused(r#"f(a="\ud800")"#, "not a Unicode scalar value");
    refused(r#"f(a="\U00110000")"#, "not a Unicode scalar value");
    refused(r#"f(a="\x4")"#, "needs 2 hex digits");
    refused(r#"f(a="\012")"#, "unknown escape `\\0`");
    refused("f(a=\"line\nbreak\")", "raw control character");
    refused(r#"f(a="open)"#, "unterminated string at byte 4");
    refused(
        r#"f(a="""doc""")"#,
        "triple-quoted strings are not accepted",
    );
    refused("f(a=\"\\\n\")", "unknown escape");
    for prefix in ["f", "b", "r", "u", "rb", "F", "fr"] {
        refused(
            &format!("f(a={prefix}\"x\")"),
            "string prefixes are not accepted",
        );
    }
}

#[test]
fn text_number_refusals() {
    refused(
        "f(n=18446744073709551616)",
        "integer \"18446744073709551616\" does not fit in 64 bits at byte 4",
    );
    refused("f(n=-9223372036854775809)", "does not fit in 64 bits");
    refused("f(n=1e400)", "float \"1e400\" is out of range");
    refused("f(n=007)", "leading zeros");
    refused("f(n=1_000)", "digit separators");
    refused("f(n=0x1F)", "only decimal numbers");
    refused("f(n=1j)", "complex numbers");
    refused("f(n=1e)", "exponent needs digits");
    refused("f(n=1.2.3)", "malformed number");
    refused(
        "f(n=- 1)",
        "unary `-` is only accepted directly before a number",
    );
    refused("f(n=--1)", "unary `-`");
    refused("f(n=-x)", "unary `-`");
    refused("f(n=+1)", "unary `+` is not accepted");
    refused("f(n=inf)", "`inf` is a name, not a literal");
    refused("f(n=nan)", "`nan` is a name");
    let call = ok("f(a=18446744073709551615, b=-9223372036854775808, c=.5, d=5., e=-0, g=1.5E-3)");
    assert_eq!(call.arguments["a"], json!(u64::MAX));
    assert_eq!(call.arguments["b"], json!(i64::MIN));
    assert_eq!(call.arguments["c"], json!(0.5));
    assert_eq!(call.arguments["d"], json!(5.0));
    assert_eq!(call.arguments["e"], json!(0));
    assert_eq!(call.arguments["g"], json!(0.0015));
}

#[test]
fn text_argument_refusals() {
    refused(
        r#"f("Paris")"#,
        "positional arguments are not accepted; write `key=value` at byte 2",
    );
    refused("f(x)", "positional arguments");
    refused("f(a=1, 2)", "positional arguments");
    refused("f(a==1)", "positional arguments");
    refused("f(a=1, a=2)", "duplicate keyword argument `a` at byte 7");
    refused("f(**kw)", "`**kwargs` is not accepted");
    refused("f(*args)", "`*args` is not accepted");
    refused("f(a=[*x])", "`*` unpacking is not accepted");
    refused("f(a={**x})", "`**` unpacking is not accepted");
    refused(
        "f(class=1)",
        "`class` is a Python keyword, not an argument name",
    );
    refused(
        "f(a=1 b=2)",
        "expected `,` or `)` after an argument, found 'b'",
    );
    refused("f(a=1", "found the end");
    refused("f(,)", "positional arguments");
}

#[test]
fn text_call_shape_refusals() {
    refused(
        "os.system(cmd='id')",
        "attribute calls (`a.b(...)`) are not accepted at byte 2",
    );
    refused(
        "f(a=g(x=1))",
        "nested calls are not accepted as values at byte 4",
    );
    refused(
        "f(a=os.environ)",
        "attribute access is not accepted as a value",
    );
    refused("f(a=x[0])", "indexing is not accepted");
    refused("f(a=1+1)", "expressions are not accepted, only literals");
    refused("f(a=[1 - 1])", "expressions are not accepted");
    refused("f(a={'k': 1 * 2})", "expressions are not accepted");
    refused("f(a=lambda: 1)", "lambdas are not accepted");
    refused("lambda x: x", "lambdas are not accepted");
    refused("import os", "`import` is a Python keyword, not a tool name");
    refused(
        "f(a=(1, 2))",
        "tuples and parenthesised expressions are not accepted",
    );
    refused("f(a={1, 2})", "dict keys must be quoted strings");
    refused("f(a={'x', 'y'})", "sets are not accepted");
    refused("f(a={'k': 1, 'k': 2})", "duplicate dict key \"k\"");
    refused("f(a={1: 2})", "dict keys must be quoted strings");
    refused("f(a=x)", "`x` is a name, not a literal; quote strings");
    refused("f(a=True())", "nested calls");
    refused("f(a=$)", "expected a literal value, found '$'");
    refused("f", "expected `(` after the tool name, found the end");
    refused(
        "get-weather(a=1)",
        "expected `(` after the tool name, found '-'",
    );
    refused("9f()", "expected a tool name, found '9'");
    refused("Action:", "expected a tool name, found the end");
    refused(
        "Thought: I should call f()",
        "expected `(` after the tool name, found ':'",
    );
}

#[test]
fn text_several_statements_refused() {
    refused(
        "f(a=1); g(b=2)",
        "several statements are not accepted (found `;`) at byte 6",
    );
    refused(
        "f(a=1)\ng(b=2)",
        "several statements are not accepted (found a second line) at byte 7 (line 2, column 1)",
    );
    refused("f(a=1) g(b=2)", "unexpected 'g' after the call");
    refused("f(a=1)()", "unexpected '('");
    refused("f(a=1).x", "unexpected '.'");
}

#[test]
fn text_position_reports_line_and_column() {
    let msg = refused("f(\n  a=1,\n  b=@)", "line 3, column 5");
    assert!(msg.contains("at byte 14"), "{msg}");
}

// ---- batches ----

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
        ToolCall::new("a", args(json!({"x": 1}))).with_id("c1")
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
        ToolCall::new("a", args(json!({"q": 1}))).with_id("t1")
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
    assert_eq!(calls, [ToolCall::new("a", Map::new()).with_id("c")]);
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
                Ok(Input::Json(doc)) => json::parse(doc, l).and_then(|v| call_from_value(v, l)),
                Ok(Input::Text(_)) => panic!("{input:?} is JSON"),
                Err(e) => Err(e),
            };
            assert_eq!(parse_call(input, l), general, "{input:?} under {l:?}");
        }
    }
}
