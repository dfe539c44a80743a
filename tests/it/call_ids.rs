//! Ids survive errors: whenever a call's envelope names its id, the reply to it carries that id,
//! success or refusal, in every provider's shape, alone and in a batch (each reply its own id, in
//! order). An id a model may not choose is never used: the call goes on under a fresh one. A
//! Gemini call without an id is answered without one (Gemini then matches by name and order).

use serde_json::{json, Value};
use tool_core::reply::Provider;

use crate::reply::replies;

/// The call shapes whose envelope names an id, and the reply shape that answers each.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const SHAPES: [Shape; 4] = [
    Shape::Chat,
    Shape::Responses,
    Shape::Anthropic,
    Shape::Gemini,
];

impl Shape {
    fn provider(self) -> Provider {
        match self {
            Shape::Chat => Provider::OpenAi,
            Shape::Responses => Provider::Responses,
            Shape::Anthropic => Provider::Anthropic,
            Shape::Gemini => Provider::Gemini,
        }
    }

    /// A call of this shape; `args` is the arguments' JSON text, as the model wrote it (for the
    /// OpenAI shapes it goes in the `arguments` string, for the others it is inlined).
    fn call(self, id: &str, name: &str, args: &str) -> String {
        let id = json!(id);
        let name = json!(name);
        match self {
            Shape::Chat => format!(
                r#"{{"id": {id}, "type": "function", "function": {{"name": {name}, "arguments": {}}}}}"#,
                json!(args)
            ),
            Shape::Responses => format!(
                r#"{{"type": "function_call", "id": "fc_1", "call_id": {id}, "name": {name}, "arguments": {}, "status": "completed"}}"#,
                json!(args)
            ),
            Shape::Anthropic => {
                format!(r#"{{"type": "tool_use", "id": {id}, "name": {name}, "input": {args}}}"#)
            }
            Shape::Gemini => {
                format!(r#"{{"functionCall": {{"id": {id}, "name": {name}, "args": {args}}}}}"#)
            }
        }
    }

    /// Arguments that are not a JSON object, in a form the envelope itself still holds.
    fn malformed_args(self) -> &'static str {
        match self {
            Shape::Chat | Shape::Responses => r#"{"a": 1,"#,
            Shape::Anthropic | Shape::Gemini => "[1, 2]",
        }
    }

    /// The ids of a reply (one result or a batch), in order.
    fn ids(self, reply: &Value) -> Vec<Value> {
        match self {
            Shape::Chat | Shape::Responses => {
                let key = match self {
                    Shape::Chat => "tool_call_id",
                    _ => "call_id",
                };
                match reply {
                    Value::Array(items) => items.iter().map(|m| m[key].clone()).collect(),
                    one => vec![one[key].clone()],
                }
            }
            Shape::Anthropic => blocks(&reply["content"], |b| b["tool_use_id"].clone()),
            Shape::Gemini => blocks(&reply["parts"], |p| p["functionResponse"]["id"].clone()),
        }
    }
}

fn blocks(items: &Value, id: impl Fn(&Value) -> Value) -> Vec<Value> {
    items.as_array().expect("blocks").iter().map(id).collect()
}

/// Every kind of reply, each with the call that gets it: (what, tool name, arguments).
fn cases(shape: Shape) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("ok", "rp_add", r#"{"a": 1, "b": 2}"#.to_owned()),
        (
            "malformed arguments",
            "rp_add",
            shape.malformed_args().to_owned(),
        ),
        (
            "duplicate key",
            "rp_add",
            r#"{"a": 1, "a": 2, "b": 3}"#.to_owned(),
        ),
        ("unknown tool", "nope", r#"{}"#.to_owned()),
        ("bad name", "", r#"{"a": 1, "b": 2}"#.to_owned()),
        (
            "oversized input",
            "rp_add",
            format!(r#"{{"a": "{}", "b": 1}}"#, "x".repeat(300 * 1024)),
        ),
        (
            "refused at validate",
            "rp_add",
            r#"{"a": "one", "b": 2}"#.to_owned(),
        ),
    ]
}

/// Gemini's `functionResponse` must name its function: a call whose name is empty is answered
/// with a text part, which has no id.
fn answerable(shape: Shape, name: &str) -> bool {
    !(matches!(shape, Shape::Gemini) && name.is_empty())
}

#[test]
fn each_shape_keeps_its_id_through_each_failure() {
    for shape in SHAPES {
        for (i, (what, name, args)) in cases(shape).into_iter().enumerate() {
            let id = format!("call_{i}");
            let line = format!("{}\n", shape.call(&id, name, &args));
            let out = replies(shape.provider(), false, &line);
            assert_eq!(out.len(), 1, "{shape:?} {what}");
            let expected = if answerable(shape, name) {
                json!(id)
            } else {
                Value::Null
            };
            assert_eq!(
                shape.ids(&out[0]),
                [expected],
                "{shape:?} {what}: {}",
                out[0]
            );
        }
    }
}

#[test]
fn a_batch_keeps_each_id_in_its_place() {
    for shape in SHAPES {
        let calls: Vec<String> = cases(shape)
            .iter()
            .enumerate()
            .map(|(i, (_, name, args))| shape.call(&format!("id_{i}"), name, args))
            .collect();
        let expected: Vec<Value> = cases(shape)
            .iter()
            .enumerate()
            .map(|(i, (_, name, _))| {
                if answerable(shape, name) {
                    json!(format!("id_{i}"))
                } else {
                    Value::Null
                }
            })
            .collect();
        let out = replies(shape.provider(), true, &format!("[{}]\n", calls.join(", ")));
        assert_eq!(out.len(), 1, "{shape:?}");
        assert_eq!(shape.ids(&out[0]), expected, "{shape:?}: {}", out[0]);
    }
}

#[test]
fn the_openai_call_of_the_issue_keeps_call_8() {
    let line = r#"{"id": "call_8", "type": "function", "function": {"name": "rp_add", "arguments": "{\"a\": 1, \"a\": 2, \"b\": 3}"}}"#;
    let out = replies(Provider::OpenAi, false, &format!("{line}\n"));
    assert_eq!(out[0]["tool_call_id"], "call_8");
    let text = out[0]["content"].as_str().expect("text");
    assert!(text.starts_with("refused (malformed_call"), "{text}");
    assert!(text.contains("duplicate key \"a\""), "{text}");
}

#[test]
fn an_id_a_model_may_not_choose_is_replaced_by_a_fresh_one() {
    for bad in ["../../etc/passwd", "a b", "x\ny", &"a".repeat(129)] {
        for shape in SHAPES {
            let line = format!("{}\n", shape.call(bad, "rp_add", r#"{"a": 1, "b": 2}"#));
            let out = replies(shape.provider(), false, &line);
            let ids = shape.ids(&out[0]);
            if matches!(shape, Shape::Gemini) {
                // The fresh id would match no call: Gemini matches this one by name and order.
                assert_eq!(ids, [Value::Null], "{bad:?}: {}", out[0]);
            } else {
                let id = ids[0].as_str().expect("a fresh id");
                assert!(id.starts_with("call-"), "{shape:?} {bad:?}: {}", out[0]);
            }
            let reply = out[0].to_string();
            assert!(!reply.contains(bad), "{shape:?} {bad:?}: {reply}");
            assert!(!reply.contains("refused"), "{shape:?} {bad:?}: {reply}");
        }
    }
}

#[test]
fn gemini_turns_are_accepted_whole() {
    let part = |id: &str, a: i64| json!({"functionCall": {"id": id, "name": "rp_add", "args": {"a": a, "b": 1}}});
    let response = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Adding."}, part("g1", 1), part("g2", 2),
            ]},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"totalTokenCount": 10},
        "modelVersion": "gemini-x",
    });
    let out = replies(Provider::Gemini, true, &format!("{response}\n"));
    let parts = out[0]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 2, "{}", out[0]);
    assert_eq!(
        parts[0],
        json!({"functionResponse": {"id": "g1", "name": "rp_add", "response": {"output": 2}}})
    );
    assert_eq!(parts[1]["functionResponse"]["id"], "g2");
    assert_eq!(parts[1]["functionResponse"]["response"]["output"], 3);
    // The content alone, and a single part on its own line.
    let content = &response["candidates"][0]["content"];
    let out = replies(Provider::Gemini, true, &format!("{content}\n"));
    assert_eq!(out[0]["parts"].as_array().map(Vec::len), Some(2));
    let out = replies(Provider::Gemini, false, &format!("{}\n", part("g3", 5)));
    assert_eq!(
        out[0]["parts"][0]["functionResponse"]["response"]["output"],
        6
    );
}

/// The `functionResponse` parts of a Gemini reply, in order.
fn function_responses(reply: &Value) -> Vec<Value> {
    blocks(&reply["parts"], |p| p["functionResponse"].clone())
}

#[test]
fn a_gemini_call_without_an_id_is_answered_without_one() {
    let call = |name: &str, args: &str| {
        format!(r#"{{"functionCall": {{"name": "{name}", "args": {args}}}}}"#)
    };
    for (what, line) in [
        ("ok", call("rp_add", r#"{"a": 1, "b": 2}"#)),
        (
            "refused at validate",
            call("rp_add", r#"{"a": "one", "b": 2}"#),
        ),
        (
            "duplicate key",
            call("rp_add", r#"{"a": 1, "a": 2, "b": 3}"#),
        ),
        ("unknown tool", call("nope", "{}")),
    ] {
        let out = replies(Provider::Gemini, false, &format!("{line}\n"));
        let responses = function_responses(&out[0]);
        assert_eq!(responses.len(), 1, "{what}: {}", out[0]);
        let response = responses[0].as_object().expect("a functionResponse");
        assert!(!response.contains_key("id"), "{what}: {}", out[0]);
        assert!(response["name"].is_string(), "{what}: {}", out[0]);
    }
    let out = replies(
        Provider::Gemini,
        false,
        &format!("{}\n", call("rp_add", r#"{"a": 1, "b": 2}"#)),
    );
    assert_eq!(
        out[0],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "rp_add", "response": {"output": 3}}}]})
    );
}

#[test]
fn parallel_gemini_calls_carry_an_id_only_where_the_call_had_one() {
    // Gemini's parallel calls: some with ids, some without, one refused; the replies keep the
    // calls' order, so the ones without an id are matched by name and place.
    let turn = json!({"role": "model", "parts": [
        {"functionCall": {"name": "rp_add", "args": {"a": 1, "b": 1}}},
        {"functionCall": {"id": "g2", "name": "rp_add", "args": {"a": 2, "b": 1}}},
        {"functionCall": {"name": "rp_add", "args": {"a": "x", "b": 1}}},
        {"functionCall": {"name": "rp_add", "args": {"a": 4, "b": 1}}},
    ]});
    let out = replies(Provider::Gemini, true, &format!("{turn}\n"));
    assert_eq!(out.len(), 1, "{out:?}");
    let responses = function_responses(&out[0]);
    let ids: Vec<Option<&Value>> = responses.iter().map(|r| r.get("id")).collect();
    assert_eq!(ids, [None, Some(&json!("g2")), None, None], "{}", out[0]);
    assert_eq!(responses[0]["response"]["output"], 2);
    assert_eq!(responses[1]["response"]["output"], 3);
    assert_eq!(
        responses[2]["response"]["error"]["code"],
        "invalid_arguments"
    );
    assert_eq!(responses[3]["response"]["output"], 5);
    // A turn where no call has an id: none of the replies has one.
    let turn = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "rp_add", "args": {"a": 1, "b": 2}}},
        {"functionCall": {"name": "nope"}},
    ]}}]});
    let out = replies(Provider::Gemini, true, &format!("{turn}\n"));
    let responses = function_responses(&out[0]);
    assert_eq!(responses.len(), 2, "{}", out[0]);
    assert!(
        responses.iter().all(|r| r.get("id").is_none()),
        "{}",
        out[0]
    );
    assert_eq!(responses[1]["response"]["error"]["code"], "unknown_tool");
}
