//! Text actions `name(key="literal", …)`.

use super::*;

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
    refused("not(1)", "`not` is a Python keyword, not a tool name");
    // Text that starts with a keyword is text, not a call to a keyword.
    for text in ["not json at all", "if the build fails", "for each file"] {
        refused(
            text,
            "expected a tool call (a JSON object, or `name(key=value, ...)`), found text",
        );
    }
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
