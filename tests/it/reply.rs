//! Results back to the model: `call --reply` prints each result as the provider's next message,
//! with the id the call came with, refusals as feedback the model can act on.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::cli::call::CallArgs;
use tool_core::content::{Audio, Content, EmbeddedResource, Image};
use tool_core::reply::Provider;
use tool_core::{tool, Registry};

/// Add two numbers.
///
/// # Arguments
/// * `a` - the first
/// * `b` - the second
#[tool(risk = "safe", concurrency_safe)]
fn rp_add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always fails.
#[tool(risk = "safe")]
fn rp_fail() -> Result<String, String> {
    Err("the service is down".into())
}

/// A chart: a caption, a PNG, a sound and the data behind it.
#[tool(risk = "safe")]
fn rp_chart() -> Vec<Content> {
    vec![
        Content::text("Sales by month:"),
        Image::png(vec![0x89, b'P', b'N', b'G']).into(),
        Audio::wav(b"RIFF".to_vec()).into(),
        EmbeddedResource::text("report://sales.csv", "month,total\n1,10\n").into(),
    ]
}

fn registry() -> Arc<Registry> {
    crate::exec_support::module_registry(module_path!())
}

pub(crate) fn replies(provider: Provider, batch: bool, input: &str) -> Vec<Value> {
    let ws = tempfile::tempdir().expect("tempdir");
    let args = CallArgs {
        batch,
        reply: Some(provider),
        ..crate::exec_support::call_args(ws.path())
    };
    let out = crate::exec_support::call_lines(registry(), &args, input);
    for line in &out {
        assert_documented_shape(provider, batch, line);
    }
    out
}

/// Every reply matches the shape its provider documents (`tests/fixtures/reply`): each message
/// of an OpenAI or Responses batch, the one message of an Anthropic or Gemini batch.
fn assert_documented_shape(provider: Provider, batch: bool, reply: &Value) {
    let (key, many) = match provider {
        Provider::OpenAi => ("openai", true),
        Provider::Responses => ("responses", true),
        Provider::Anthropic => ("anthropic", false),
        Provider::Gemini => ("gemini", false),
    };
    let schema = &provider_shapes()[key];
    let validator = jsonschema::validator_for(schema).expect("the shape is a valid schema");
    let messages: Vec<&Value> = if batch && many {
        reply
            .as_array()
            .expect("a batch is an array")
            .iter()
            .collect()
    } else {
        vec![reply]
    };
    for m in messages {
        let errors: Vec<String> = validator
            .iter_errors(m)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "not the documented {key} shape: {errors:?}\n{m}"
        );
    }
}

fn provider_shapes() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/reply/provider_shapes.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("shapes file")).expect("JSON")
}

#[test]
fn content_blocks_go_back_where_each_provider_takes_them() {
    let call = r#"{"tool": "rp_chart", "args": {}}"#;
    let png = tool_core::content::base64_encode(&[0x89, b'P', b'N', b'G']);
    let wav = tool_core::content::base64_encode(b"RIFF");

    // Chat Completions: text parts only, the image and the sound described.
    let out = replies(Provider::OpenAi, false, &format!("{call}\n"));
    let texts: Vec<&str> = out[0]["content"]
        .as_array()
        .expect("text parts")
        .iter()
        .map(|p| p["text"].as_str().expect("text"))
        .collect();
    assert_eq!(texts[0], "Sales by month:");
    assert_eq!(texts[1], "[image: image/png, 4 bytes]");
    assert_eq!(texts[2], "[audio: audio/wav, 4 bytes]");
    assert!(texts[3].contains("month,total"), "{texts:?}");

    // Responses: the image as a data URL.
    let out = replies(Provider::Responses, false, &format!("{call}\n"));
    let output = &out[0]["output"];
    assert_eq!(
        output[0],
        json!({"type": "input_text", "text": "Sales by month:"})
    );
    assert_eq!(
        output[1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{png}")})
    );
    assert_eq!(output[2]["type"], "input_text");

    // Anthropic: a base64 image block inside the tool_result.
    let out = replies(Provider::Anthropic, false, &format!("{call}\n"));
    let content = &out[0]["content"][0]["content"];
    assert_eq!(
        content[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}})
    );
    assert_eq!(out[0]["content"][0]["is_error"], false);

    // Gemini: the function response, then the image and the sound as inline data.
    let out = replies(Provider::Gemini, false, &format!("{call}\n"));
    let parts = out[0]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 3, "{parts:?}");
    let text = parts[0]["functionResponse"]["response"]["output"]
        .as_str()
        .expect("the text blocks");
    assert!(
        text.starts_with("Sales by month:") && text.contains("month,total"),
        "{text}"
    );
    assert_eq!(
        parts[1],
        json!({"inlineData": {"mimeType": "image/png", "data": png}})
    );
    assert_eq!(
        parts[2],
        json!({"inlineData": {"mimeType": "audio/wav", "data": wav}})
    );

    // In a batch next to another result, each keeps its place.
    let line = format!("[{call}, {{\"tool\": \"rp_add\", \"args\": {{\"a\": 1, \"b\": 1}}}}]\n");
    let out = replies(Provider::Gemini, true, &line);
    let parts = out[0]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 4, "{parts:?}");
    assert_eq!(parts[3]["functionResponse"]["response"]["output"], 2);
}

#[test]
fn the_documented_shapes_are_strict_enough_to_fail() {
    // The check above is only worth something if a wrong message fails it.
    let shapes = provider_shapes();
    for (key, wrong) in [
        ("openai", json!({"role": "tool", "content": "3"})),
        (
            "openai",
            json!({"role": "tool", "tool_call_id": "c", "content": "3", "is_error": true}),
        ),
        (
            "responses",
            json!({"type": "function_call_output", "id": "x", "output": "3"}),
        ),
        (
            "anthropic",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call:1", "content": "3"}]}),
        ),
        (
            "anthropic",
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "isError": true}]}),
        ),
        (
            "gemini",
            json!({"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "3"}}]}),
        ),
    ] {
        let validator = jsonschema::validator_for(&shapes[key]).expect("valid schema");
        assert!(!validator.is_valid(&wrong), "{key} accepted {wrong}");
    }
}

#[test]
fn every_kind_of_result_has_the_documented_shape_on_every_provider() {
    // Calls without a provider id (the executor names them), an object output, a number, a
    // failure, a refusal with violations, an unknown tool and a malformed line, one by one and
    // as a batch.
    let lines = [
        r#"{"tool": "rp_add", "args": {"a": 1, "b": 2}}"#,
        r#"{"tool": "rp_fail", "args": {}}"#,
        r#"{"tool": "rp_add", "args": {"a": "x"}}"#,
        r#"{"tool": "nope", "args": {}}"#,
        r#"{"tool": 7}"#,
    ];
    for provider in [
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Gemini,
    ] {
        let out = replies(provider, false, &format!("{}\n", lines.join("\n")));
        assert_eq!(out.len(), lines.len(), "{provider:?}: {out:?}");
        let out = replies(provider, true, &format!("[{}]\n", lines[..4].join(", ")));
        assert_eq!(out.len(), 1, "{provider:?}: {out:?}");
    }
}

const OPENAI_CALL: &str = r#"{"id": "call_abc", "type": "function", "function": {"name": "rp_add", "arguments": "{\"a\": 1, \"b\": 2}"}}"#;
const OPENAI_BAD: &str = r#"{"id": "call_bad", "type": "function", "function": {"name": "rp_add", "arguments": "{\"a\": \"one\"}"}}"#;

#[test]
fn openai_chat_gets_tool_messages_with_the_call_id() {
    let out = replies(
        Provider::OpenAi,
        false,
        &format!("{OPENAI_CALL}\n{OPENAI_BAD}\n"),
    );
    assert_eq!(
        out[0],
        json!({"role": "tool", "tool_call_id": "call_abc", "content": "3"})
    );
    let bad = &out[1];
    assert_eq!(bad["role"], "tool");
    assert_eq!(bad["tool_call_id"], "call_bad");
    let text = bad["content"].as_str().expect("text content");
    // The feedback: status, code, step, each failing path, and what to do.
    assert!(
        text.starts_with("refused (invalid_arguments, at step validate): "),
        "{text}"
    );
    assert!(
        text.contains("at `/a`: ") && text.contains("\"b\" is a required property"),
        "{text}"
    );
    assert!(text.contains("Fix the arguments"), "{text}");
    assert_eq!(bad.as_object().expect("object").len(), 3, "{bad}");
}

#[test]
fn a_batch_is_one_message_per_call_in_order() {
    let line = format!("[{OPENAI_CALL}, {OPENAI_BAD}]\n");
    let out = replies(Provider::OpenAi, true, &line);
    assert_eq!(out.len(), 1);
    let ids: Vec<&str> = out[0]
        .as_array()
        .expect("an array of messages")
        .iter()
        .map(|m| m["tool_call_id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["call_abc", "call_bad"]);
    // Anthropic: one user message holding every tool_result.
    let line = r#"[{"type": "tool_use", "id": "toolu_1", "name": "rp_add", "input": {"a": 2, "b": 2}}, {"type": "tool_use", "id": "toolu_2", "name": "rp_fail", "input": {}}]"#;
    let out = replies(Provider::Anthropic, true, &format!("{line}\n"));
    assert_eq!(
        out[0],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "4", "is_error": false},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "failed (tool_error, at step run): the service is down", "is_error": true}
        ]})
    );
}

#[test]
fn responses_and_gemini_shapes() {
    let call = r#"{"type": "function_call", "call_id": "fc_1", "name": "rp_add", "arguments": "{\"a\": 40, \"b\": 2}"}"#;
    let out = replies(Provider::Responses, false, &format!("{call}\n"));
    assert_eq!(
        out[0],
        json!({"type": "function_call_output", "call_id": "fc_1", "output": "42"})
    );
    let out = replies(
        Provider::Gemini,
        false,
        &format!("{call}\n{{\"tool\": \"rp_fail\", \"args\": {{}}}}\n"),
    );
    assert_eq!(
        out[0],
        json!({"role": "user", "parts": [{"functionResponse": {"id": "fc_1", "name": "rp_add", "response": {"output": 42}}}]})
    );
    let err = &out[1]["parts"][0]["functionResponse"];
    assert_eq!(err["name"], "rp_fail");
    assert_eq!(err["response"]["error"]["code"], "tool_error");
    assert_eq!(err["response"]["error"]["status"], "failed");
}

#[test]
fn an_unknown_tool_is_feedback_too() {
    let line =
        r#"{"id": "call_x", "type": "function", "function": {"name": "nope", "arguments": "{}"}}"#;
    let out = replies(Provider::Anthropic, false, &format!("{line}\n"));
    let block = &out[0]["content"][0];
    assert_eq!(block["tool_use_id"], "call_x");
    assert_eq!(block["is_error"], true);
    let text = block["content"].as_str().expect("text");
    assert!(
        text.starts_with("refused (unknown_tool, at step lookup)"),
        "{text}"
    );
    assert!(text.contains("exact name"), "{text}");
}

/// The schema fragment on the feedback line of `path`, parsed.
fn fragment_for(text: &str, path: &str) -> Value {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("- `{path}`: ")))
        .unwrap_or_else(|| panic!("no line for `{path}` in {text}"));
    let (_, schema) = line.split_once("; schema: ").expect("a schema fragment");
    serde_json::from_str(schema).expect("the fragment is JSON")
}

#[test]
fn invalid_arguments_feedback_gives_each_failing_path_with_its_schema_fragment_on_every_provider() {
    // `a` has the wrong type, `b` is missing: two paths, each with the schema it must match.
    let want_a = json!({"type": "integer", "description": "the first"});
    let check = |text: &str| {
        assert!(text.contains("invalid_arguments"), "{text}");
        assert!(
            text.contains("Failing paths and the schema each must match:"),
            "{text}"
        );
        let a = fragment_for(text, "/a");
        for (k, v) in want_a.as_object().expect("object") {
            assert_eq!(&a[k], v, "{a}");
        }
        // The missing property's own schema, not the whole object's.
        let b = fragment_for(text, "/");
        assert_eq!(b["description"], "the second", "{b}");
        assert!(b.get("properties").is_none(), "{b}");
    };
    let out = replies(Provider::OpenAi, false, &format!("{OPENAI_BAD}\n"));
    check(out[0]["content"].as_str().expect("text"));
    let call = r#"{"type": "function_call", "call_id": "fc_1", "name": "rp_add", "arguments": "{\"a\": \"one\"}"}"#;
    let out = replies(Provider::Responses, false, &format!("{call}\n"));
    assert_eq!(out[0]["call_id"], "fc_1");
    check(out[0]["output"].as_str().expect("text"));
    let call = r#"{"type": "tool_use", "id": "toolu_1", "name": "rp_add", "input": {"a": "one"}}"#;
    let out = replies(Provider::Anthropic, false, &format!("{call}\n"));
    let block = &out[0]["content"][0];
    assert_eq!(block["tool_use_id"], "toolu_1");
    assert_eq!(block["is_error"], true);
    check(block["content"].as_str().expect("text"));
    let out = replies(Provider::Gemini, false, &format!("{OPENAI_BAD}\n"));
    let error = &out[0]["parts"][0]["functionResponse"]["response"]["error"];
    check(error["message"].as_str().expect("text"));
    let violations = error["violations"].as_array().expect("violations as data");
    let a = violations
        .iter()
        .find(|v| v["path"] == "/a")
        .expect("the `/a` violation");
    assert_eq!(a["schema"]["type"], "integer", "{a}");
    assert!(violations.iter().any(|v| v["path"] == ""
        && v["message"].as_str().is_some_and(|m| m.contains("\"b\""))
        && v["schema"]["description"] == "the second"));
}
