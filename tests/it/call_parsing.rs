//! Call parsing through the public API: real provider payloads parse to the same `ToolCall`, and
//! every refusal is `malformed_call` with a message that says where.

use serde_json::{json, Map, Value};
use tool_core::call::{
    parse_batch, parse_call, Dialect, ParseError, ParseLimits, ToolCall, DEPTH_CEILING,
};
use tool_core::ReasonCode;

fn limits() -> ParseLimits {
    ParseLimits::default()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("test arguments must be an object"),
    }
}

#[test]
fn defaults_are_conservative() {
    let d = ParseLimits::default();
    assert_eq!(d.max_bytes, 1024 * 1024);
    assert_eq!(d.max_depth, 64);
    assert_eq!(d.max_string_len, 256 * 1024);
    assert!(!d.allow_fenced);
    assert_eq!(d.max_calls, 64);
    assert!(d.max_depth <= DEPTH_CEILING);
}

/// The same call written in every shape a model or provider may send parses to one `ToolCall`.
#[test]
fn every_shape_parses_to_the_same_call() {
    let want = ToolCall::new(
        "get_weather",
        obj(json!({"city": "Zürich", "days": 3, "units": ["c"], "opts": {"hourly": false}})),
    );
    let arguments = r#"{"city": "Zürich", "days": 3, "units": ["c"], "opts": {"hourly": false}}"#;
    let as_string = serde_json::to_string(arguments).expect("a string serializes");
    let (strict, anthropic) = (Some(Dialect::OpenAiStrict), Some(Dialect::Anthropic));
    let shapes = [
        (format!(r#"{{"tool": "get_weather", "args": {arguments}}}"#), None, None),
        (
            format!(
                r#"{{"id": "call_abc", "type": "function", "function": {{"name": "get_weather", "arguments": {as_string}}}}}"#
            ),
            Some("call_abc"),
            strict,
        ),
        (
            format!(
                r#"{{"type": "function_call", "id": "fc_1", "call_id": "call_x", "name": "get_weather", "arguments": {as_string}, "status": "completed"}}"#
            ),
            Some("call_x"),
            strict,
        ),
        (
            format!(
                r#"{{"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {arguments}}}"#
            ),
            Some("toolu_01"),
            anthropic,
        ),
        (
            r#"Action: get_weather(city="Z\u00fcrich", days=3, units=['c'], opts={"hourly": False})"#
                .to_owned(),
            None,
            None,
        ),
        (
            "get_weather(\n  city='Zürich',\n  days=3,\n  units=[\"c\"],\n  opts={'hourly': false},\n)"
                .to_owned(),
            None,
            None,
        ),
    ];
    for (input, id, dialect) in shapes {
        let got = parse_call(&input, &limits())
            .unwrap_or_else(|e| panic!("{input} should parse: {}", e.message));
        let mut expected = want.clone();
        expected.id = id.map(str::to_owned);
        expected.dialect = dialect;
        assert_eq!(got, expected, "{input}");
        assert_eq!(
            parse_batch(&input, &limits()).expect("a single call is a batch of one"),
            [expected]
        );
    }
}

/// A realistic Chat Completions response message with two parallel calls.
#[test]
fn openai_turn_keeps_order_and_ids() {
    let turn = json!({
        "role": "assistant",
        "content": null,
        "refusal": null,
        "annotations": [],
        "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}},
            {"id": "call_2", "type": "function",
             "function": {"name": "list_dir", "arguments": "{\"path\":\".\"}"}}
        ]
    });
    let calls = parse_batch(&turn.to_string(), &limits()).expect("a normal turn parses");
    assert_eq!(
        calls,
        [
            ToolCall::new("read_file", obj(json!({"path": "a.txt"})))
                .with_id("call_1")
                .with_dialect(Dialect::OpenAiStrict),
            ToolCall::new("list_dir", obj(json!({"path": "."})))
                .with_id("call_2")
                .with_dialect(Dialect::OpenAiStrict),
        ]
    );
    let array = turn["tool_calls"].to_string();
    assert_eq!(
        parse_batch(&array, &limits()).expect("the bare array parses"),
        calls
    );
}

/// A realistic Anthropic response content: text and thinking are skipped, tool_use kept in order.
#[test]
fn anthropic_turn_skips_text_blocks() {
    let content = json!([
        {"type": "thinking", "thinking": "The user wants the weather.", "signature": "abc"},
        {"type": "text", "text": "I'll check both cities."},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"city": "Oslo"}}
    ]);
    let calls = parse_batch(&content.to_string(), &limits()).expect("content blocks parse");
    let ids: Vec<_> = calls.iter().filter_map(|c| c.id.as_deref()).collect();
    assert_eq!(ids, ["toolu_a", "toolu_b"]);
    assert_eq!(calls[1].arguments, obj(json!({"city": "Oslo"})));
}

/// Each refusal, with the words its message must contain (what was wrong, and where).
#[test]
fn every_refusal_is_malformed_call_and_says_where() {
    let cases: &[(&str, &str)] = &[
        (r#"{"tool": "a", "args": {}, "x": 1}"#, r#"unexpected key "x" at $"#),
        (r#"{"tool": "a", "args": {"k": 1, "k": 2}}"#, r#"duplicate key "k" in the object at $.args"#),
        (r#"{"tool": "a", "args": {"s": "\udfff"}}"#, r"lone surrogate \udfff at byte 29"),
        (r#"{"tool": "a", "args": {"n": 99999999999999999999}}"#, "does not fit in 64 bits"),
        (r#"{"tool": "a", "args": {}} trailing"#, "trailing characters at line 1 column"),
        ("```json\n{\"tool\": \"a\", \"args\": {}}\n```", "markdown-fenced input is refused"),
        (r#"{"type": "function", "function": {"name": "a", "arguments": "{]"}}"#, "in $.function.arguments: invalid JSON"),
        (r#"{"type": "tool_use", "id": "t", "name": "a", "input": []}"#, "$.input must be a JSON object"),
        ("a(1)", "positional arguments are not accepted; write `key=value` at byte 2"),
        ("a(x=1, x=2)", "duplicate keyword argument `x` at byte 7"),
        ("a(**kw)", "`**kwargs` is not accepted at byte 2"),
        ("a(*xs)", "`*args` is not accepted at byte 2"),
        ("os.system(c='id')", "attribute calls (`a.b(...)`) are not accepted at byte 2"),
        ("a(x=b())", "nested calls are not accepted as values at byte 4"),
        ("a(x=1+1)", "expressions are not accepted, only literals"),
        ("a(x=-y)", "unary `-` is only accepted directly before a number at byte 4"),
        ("a(x=f'{y}')", "string prefixes are not accepted"),
        ("a(x=lambda: 0)", "lambdas are not accepted at byte 4"),
        ("a(x=1); b(y=2)", "several statements are not accepted (found `;`)"),
        ("a(x=1)\nb(y=2)", "several statements are not accepted (found a second line) at byte 7 (line 2, column 1)"),
        ("a(x=1) # done", "unexpected '#' after the call"),
        ("a(x=(1, 2))", "tuples and parenthesised expressions are not accepted"),
        ("a(x=99999999999999999999)", "does not fit in 64 bits at byte 4"),
        ("a(x='\\ud800')", "not a Unicode scalar value"),
    ];
    for (input, needle) in cases {
        let err: ParseError = parse_call(input, &limits()).expect_err(input);
        assert_eq!(err.code(), ReasonCode::MalformedCall, "{input}");
        assert!(
            err.message.contains(needle),
            "{input}: {needle:?} not in {:?}",
            err.message
        );
    }
}

#[test]
fn hundred_thousand_deep_nesting_is_refused() {
    let deep_json = format!(
        r#"{{"tool": "a", "args": {{"x": {}}}}}"#,
        "[".repeat(100_000)
    );
    let deep_array = "[".repeat(100_000);
    let deep_text = format!("a(x={})", "[".repeat(100_000));
    let mut roomy = limits();
    roomy.max_bytes = 16 << 20;
    for input in [&deep_json, &deep_array, &deep_text] {
        let err = parse_call(input, &roomy).expect_err("deep nesting is refused");
        assert!(
            err.message.contains("nesting deeper than 64 levels"),
            "{}",
            err.message
        );
        let err = parse_batch(input, &roomy).expect_err("deep nesting is refused in a batch");
        assert!(
            err.message.contains("nesting deeper than 64 levels"),
            "{}",
            err.message
        );
    }
}

#[test]
fn ten_mib_line_is_refused() {
    let line = format!(
        r#"{{"tool": "a", "args": {{"s": "{}"}}}}"#,
        "a".repeat(10 << 20)
    );
    let err = parse_call(&line, &limits()).expect_err("a 10 MiB call is over the 1 MiB limit");
    assert!(
        err.message.contains("the limit is 1048576"),
        "{}",
        err.message
    );
    // Raising the byte limit still leaves the string limit in force.
    let mut roomy = limits();
    roomy.max_bytes = 16 << 20;
    let err = parse_call(&line, &roomy).expect_err("the string is over the string limit");
    assert!(
        err.message.contains("string at $.args.s is 10485760 bytes"),
        "{}",
        err.message
    );
}

#[test]
fn batch_limits_and_refusals() {
    let mut one = limits();
    one.max_calls = 1;
    let two = r#"[{"tool": "a", "args": {}}, {"tool": "b", "args": {}}]"#;
    assert!(parse_batch(two, &one).is_err());
    assert_eq!(parse_batch(two, &limits()).map(|c| c.len()), Ok(2));
    let err = parse_batch(
        r#"[{"type": "tool_result", "tool_use_id": "t"}]"#,
        &limits(),
    )
    .expect_err("a tool_result is not a call");
    assert!(
        err.message
            .contains("unknown call type \"tool_result\" at $[0].type"),
        "{}",
        err.message
    );
}

/// A model turn parsed item by item: strict JSON for each call (a duplicate key refuses the call
/// it is in, in its place), an unknown shape refused in its place, call-less content blocks
/// skipped.
#[test]
fn turn_items_are_strict_json_but_refused_one_by_one() {
    use tool_core::call::parse_turn_items;
    let limits = ParseLimits::default();
    let dup = r#"[{"tool": "a", "args": {"x": 1, "x": 2}}, {"tool": "b", "args": {}}]"#;
    let items = parse_turn_items(dup, &limits).expect("split into its calls");
    assert!(items[0]
        .as_ref()
        .is_err_and(|e| e.message.contains("duplicate key \"x\"")));
    assert_eq!(items[1].as_ref().map(|c| c.name.as_str()), Ok("b"));
    assert!(parse_turn_items("[{\"tool\": \"a\"", &limits).is_err());
    let mixed = r#"[{"type": "text", "text": "hi"}, {"tool": "a", "args": {}}, {"tool": "b", "args": {}, "extra": 1}, 7]"#;
    let items = parse_turn_items(mixed, &limits).expect("well-formed JSON");
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].as_ref().map(|c| c.name.as_str()), Ok("a"));
    assert!(items[1].is_err());
    assert!(items[2].is_err());
    assert!(parse_turn_items("a(x=1)", &limits).is_err());
}
