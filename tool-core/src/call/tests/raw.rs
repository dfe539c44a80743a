//! `tool_args_raw`, the typed path's reading of the envelope: whatever it returns is what
//! `parse_call` reads from the same input, name for name and argument for argument.

use super::*;

/// The arguments text read as one JSON value (as the typed path's reader requires).
fn one_value(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

#[test]
fn the_envelope_read_by_hand_is_the_one_parse_call_reads() {
    let limits = ParseLimits::default();
    let inputs = [
        r#"{"tool": "t", "args": {"a": 1}}"#,
        "\n\t{ \"tool\" :\"t\",\r\n\"args\":{} }\n",
        r#"{"tool":"t","args":{"a":{"b":[1,2]}}}"#,
        r#"{"tool": "t", "args": {"a": 1}, "id": "x"}"#,
        r#"{"tool": "t", "args": {"a": 1}}}"#,
        r#"{"tool": "t", "args": {"a": 1} "#,
        r#"{"tool": "t", "args": {"a": 1}} x"#,
        r#"{"tool": "t\u0041", "args": {}}"#,
        r#"{"tool": "é", "args": {}}"#,
        r#"{"args": {}, "tool": "t"}"#,
        r#"{"tool": "t", "args": [1]}"#,
        r#"{"tool": "", "args": {}}"#,
        r#"{"tool": "t", "args": {"a": 1}, "tool": "u"}"#,
        r#"{"tool": "t", "args": {}, "args": {"a": 2}}"#,
        r#"{"tool": "t", "args": {"a": 1}, "args": {}}"#,
        r#"["t", {}]"#,
        "{\"tool\": \"t\u{1}\", \"args\": {}}",
        "\u{a0}{\"tool\": \"t\", \"args\": {}}",
        r#"{"tool": 1, "args": {}}"#,
        r#"{"tool": "t", "args": {"a": "}"}}"#,
    ];
    for input in inputs {
        let Some((name, args)) = tool_args_raw(input, &limits) else {
            continue;
        };
        let Some(value) = one_value(args) else {
            continue;
        };
        let call = parse_call(input, &limits).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(call.name, name, "{input}");
        assert_eq!(Value::Object(call.arguments.clone()), value, "{input}");
    }
    // The common forms are read; the others left to `parse_call`.
    fn read(input: &str) -> Option<(String, &str)> {
        tool_args_raw(input, &ParseLimits::default()).map(|(n, a)| (n.into_owned(), a))
    }
    assert_eq!(
        read(r#"{"tool": "t", "args": {"a": 1}}"#),
        Some(("t".to_owned(), r#"{"a": 1}"#))
    );
    assert_eq!(
        read(r#"{"args": {}, "tool": "t\u0041"}"#),
        Some(("tA".to_owned(), "{}"))
    );
    for input in [
        r#"{"tool": "t", "args": [1]}"#,
        r#"{"tool": "", "args": {}}"#,
        r#"["t", {}]"#,
        r#"{"tool": "t", "args": {"a": 1}, "tool": "u"}"#,
        "t(a=1)",
    ] {
        assert!(
            read(input).is_none_or(|(_, a)| one_value(a).is_none()),
            "{input}"
        );
    }
}

#[test]
fn limits_the_parser_applies_leave_the_call_to_it() {
    let input = r#"{"tool": "tool", "args": {"a": "xyz"}}"#;
    let small = |limits: ParseLimits| tool_args_raw(input, &limits);
    assert!(small(ParseLimits::default()).is_some());
    for limits in [
        ParseLimits {
            max_string_len: 3,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_depth: 2,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_bytes: 10,
            ..ParseLimits::default()
        },
    ] {
        assert!(small(limits.clone()).is_none(), "{limits:?}");
    }
}
