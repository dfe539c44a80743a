//! Property tests for call parsing: no input panics, and accepted calls round-trip.
//!
//! The text renderer here is written independently of the parser and picks quoting, escapes,
//! spelling of constants, whitespace and trailing commas at random, so the round trip exercises
//! every accepted literal form.

use proptest::prelude::*;
use serde_json::{json, Map, Number, Value};
use tool_core::call::{parse_batch, parse_call, Dialect, ParseLimits, ToolCall};

const RESERVED: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn ident() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_]{0,12}"
        .prop_filter("not a Python keyword", |s| !RESERVED.contains(&s.as_str()))
}

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
    ]
}

fn literal() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        ident(),
        prop::collection::btree_map(ident(), literal(), 0..6),
    )
        .prop_map(|(name, args)| ToolCall::new(name, args.into_iter().collect()))
}

/// Random choices for one rendering, drawn once per case.
#[derive(Debug, Clone)]
struct Style {
    choices: Vec<u8>,
    next: usize,
}

impl Style {
    fn pick(&mut self, n: u8) -> u8 {
        let c = self.choices[self.next % self.choices.len()];
        self.next += 1;
        c % n
    }

    fn space(&mut self) -> &'static str {
        ["", " ", "\n  ", "\t"][self.pick(4) as usize]
    }
}

fn style() -> impl Strategy<Value = Style> {
    prop::collection::vec(any::<u8>(), 1..64).prop_map(|choices| Style { choices, next: 0 })
}

fn render_string(s: &str, st: &mut Style) -> String {
    let quote = if st.pick(2) == 0 { '"' } else { '\'' };
    let mut out = String::from(quote);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_is_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        let code = c as u32;
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' if st.pick(2) == 0 => out.push('\t'),
            '\t' => out.push_str("\\t"),
            '\0' if !next_is_digit && st.pick(2) == 0 => out.push_str("\\0"),
            _ if code < 0x20 => out.push_str(&format!("\\x{code:02x}")),
            c => match st.pick(4) {
                0 if code <= 0xFF => out.push_str(&format!("\\x{code:02X}")),
                1 if code <= 0xFFFF => out.push_str(&format!("\\u{code:04x}")),
                2 => out.push_str(&format!("\\U{code:08X}")),
                _ => out.push(c),
            },
        }
    }
    out.push(quote);
    out
}

fn render_value(v: &Value, st: &mut Style) -> String {
    match v {
        Value::Null => ["None", "null"][st.pick(2) as usize].to_owned(),
        Value::Bool(true) => ["True", "true"][st.pick(2) as usize].to_owned(),
        Value::Bool(false) => ["False", "false"][st.pick(2) as usize].to_owned(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            // Debug keeps a `.` or an exponent, so the float stays a float.
            (None, None, Some(f)) => format!("{f:?}"),
            _ => unreachable!("a JSON number is u64, i64 or f64"),
        },
        Value::String(s) => render_string(s, st),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(|i| render_value(i, st)).collect();
            render_seq('[', ']', parts, st)
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    let key = render_string(k, st);
                    let sp = st.space();
                    format!("{key}:{sp}{}", render_value(v, st))
                })
                .collect();
            render_seq('{', '}', parts, st)
        }
    }
}

fn render_seq(open: char, close: char, parts: Vec<String>, st: &mut Style) -> String {
    let sep = format!(",{}", st.space());
    let trailing = if !parts.is_empty() && st.pick(3) == 0 {
        ","
    } else {
        ""
    };
    format!("{open}{}{trailing}{close}", parts.join(&sep))
}

fn render_action(call: &ToolCall, st: &mut Style) -> String {
    let prefix = ["", "Action: ", "Action:", "  "][st.pick(4) as usize];
    let parts: Vec<String> = call
        .arguments
        .iter()
        .map(|(k, v)| {
            let eq = [("=", ""), (" = ", " "), ("=", " ")][st.pick(3) as usize];
            format!("{k}{}{}", eq.0, render_value(v, st))
        })
        .collect();
    let args = render_seq('(', ')', parts, st);
    format!("{prefix}{}{args}{}", call.name, st.space())
}

/// Bytes that matter to the parsers, so random inputs reach deep into both grammars.
fn syntaxy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "{",
                "}",
                "[",
                "]",
                "(",
                ")",
                "\"",
                "'",
                ":",
                ",",
                "=",
                "\\",
                "\\u",
                "\\ud800",
                "\\x",
                "-",
                ".",
                "e",
                "0",
                "9",
                "1e400",
                "True",
                "None",
                "null",
                "\"tool\"",
                "\"args\"",
                "\"type\"",
                "\"function\"",
                "\"tool_use\"",
                "\"input\"",
                "Action:",
                "f",
                "x",
                " ",
                "\n",
                "```",
                "*",
                "**",
                ";",
                "lambda",
            ])
            .prop_map(str::to_owned),
            any::<char>().prop_map(String::from),
        ],
        0..64,
    )
    .prop_map(|parts| parts.concat())
}

fn tight() -> ParseLimits {
    ParseLimits {
        max_bytes: 512,
        max_depth: 4,
        max_string_len: 16,
        allow_fenced: true,
        max_calls: 2,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the input, parsing returns (no panic), under default and tight limits.
    #[test]
    fn arbitrary_strings_never_panic(input in any::<String>()) {
        for limits in [ParseLimits::default(), tight()] {
            let _ = parse_call(&input, &limits);
            let _ = parse_batch(&input, &limits);
        }
    }

    /// The same, with inputs made of the tokens the grammars care about.
    #[test]
    fn syntax_soup_never_panics(input in syntaxy()) {
        for limits in [ParseLimits::default(), tight()] {
            let _ = parse_call(&input, &limits);
            let _ = parse_batch(&input, &limits);
            let _ = parse_call(&format!("f(a={input})"), &limits);
            let _ = parse_call(&format!("{{\"tool\": \"f\", \"args\": {input}}}"), &limits);
        }
    }

    /// Any call made of literals, rendered as a text action in any accepted style, parses back
    /// to the same call.
    #[test]
    fn text_actions_round_trip(call in tool_call(), mut st in style()) {
        let text = render_action(&call, &mut st);
        let parsed = parse_call(&text, &ParseLimits::default());
        prop_assert_eq!(parsed, Ok(call), "rendered as {}", text);
    }

    /// Any call, written in each provider's JSON shape, parses back to the same call.
    #[test]
    fn json_shapes_round_trip(call in tool_call(), id in "[a-z0-9_]{1,12}") {
        let args = Value::Object(call.arguments.clone());
        let args_string = args.to_string();
        let shapes = [
            (json!({"tool": call.name, "args": args}), None, None),
            (json!({"type": "function", "id": id,
                    "function": {"name": call.name, "arguments": args_string}}), Some(&id),
                    Some(Dialect::OpenAiStrict)),
            (json!({"type": "function_call", "call_id": id, "name": call.name,
                    "arguments": args_string, "status": "completed"}), Some(&id),
                    Some(Dialect::OpenAiStrict)),
            (json!({"type": "tool_use", "id": id, "name": call.name, "input": args}), Some(&id),
                    Some(Dialect::Anthropic)),
        ];
        for (shape, want_id, dialect) in shapes {
            let mut want = call.clone();
            want.id = want_id.cloned();
            want.dialect = dialect;
            let text = shape.to_string();
            prop_assert_eq!(parse_call(&text, &ParseLimits::default()), Ok(want.clone()));
            let pretty = serde_json::to_string_pretty(&shape).expect("a value serializes");
            prop_assert_eq!(parse_batch(&format!("[{pretty}]"), &ParseLimits::default()), Ok(vec![want]));
        }
    }

    /// An accepted text action is also accepted, unchanged, in the canonical JSON shape: the text
    /// parser produces nothing the JSON parser would refuse.
    #[test]
    fn accepted_text_is_valid_json(input in syntaxy()) {
        if let Ok(call) = parse_call(&format!("f(a={input})"), &ParseLimits::default()) {
            let canonical = json!({"tool": call.name, "args": Value::Object(call.arguments.clone())});
            prop_assert_eq!(parse_call(&canonical.to_string(), &ParseLimits::default()), Ok(call));
        }
    }
}

/// Regression guard for the renderer itself: a hand-written case with every escape kind.
#[test]
fn renderer_sanity() {
    let mut args = Map::new();
    args.insert("s".into(), json!("a'\"\\\n\t\0\u{1}é\u{1F600}"));
    let call = ToolCall::new("f", args);
    for seed in 0..=255u8 {
        let mut st = Style {
            choices: vec![seed, seed.wrapping_mul(7), seed.wrapping_add(3)],
            next: 0,
        };
        let text = render_action(&call, &mut st);
        assert_eq!(
            parse_call(&text, &ParseLimits::default()),
            Ok(call.clone()),
            "{text}"
        );
    }
}
