//! The agent loop against a scripted model server of each wire format (OpenAI Chat Completions,
//! Anthropic Messages, Gemini generateContent), a real HTTP server on a loopback port: the server replies with tool calls
//! (one of them with arguments the schema refuses), then an answer; the test checks what the loop
//! sent (the exported tools, the call ids kept, the refusal's reason code, failing path and
//! schema fragment in the feedback) and that the loop ends with the scripted answer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use tool_core::{Executor, ExecutorConfig, ReasonCode};
use tool_examples::agent_loop::{run, AgentConfig, AgentError, Api, Finished};

/// What the server was sent, and what it answers next.
#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Value>>,
    requests: Mutex<Vec<(HeaderMap, Value)>>,
}

async fn answer(
    State(script): State<Arc<Script>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON".to_owned());
    };
    script
        .requests
        .lock()
        .expect("lock")
        .push((headers, request));
    match script.replies.lock().expect("lock").pop_front() {
        Some(reply) => (StatusCode::OK, reply.to_string()),
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the script is over".to_owned(),
        ),
    }
}

/// Serve `replies` at `path` on a loopback port; the base URL and the script.
async fn serve(path: &str, replies: Vec<Value>) -> (String, Arc<Script>) {
    let script = Arc::new(Script {
        replies: Mutex::new(replies.into()),
        ..Script::default()
    });
    let app = Router::new()
        .route(path, post(answer))
        .with_state(Arc::clone(&script));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), script)
}

fn executor(ws: &std::path::Path) -> Executor {
    std::fs::write(ws.join("notes.txt"), "buy milk\n").expect("write notes");
    let registry = tool_examples::registry().expect("registry");
    Executor::new(Arc::new(registry), ExecutorConfig::new(ws)).expect("executor")
}

const ANSWER: &str = "notes.txt says: buy milk";

/// Run the loop against `base` with the API key `key`: it ends with the scripted answer at the
/// second turn.
async fn answered(exec: &Executor, api: Api, base: &str, key: &str) -> Finished {
    let mut config = AgentConfig::new(api, base, "test-model");
    config.api_key = Some(key.to_owned());
    let done = run(exec, &config, "What do my notes say?")
        .await
        .expect("the loop ends with an answer");
    assert_eq!(done.answer, ANSWER);
    assert_eq!(done.turns, 2);
    done
}

/// The feedback of the refused call names the reason code, the failing path and the schema
/// fragment that path must match.
fn assert_retry_feedback(text: &str) {
    assert!(text.contains("invalid_arguments"), "{text}");
    assert!(text.contains("- `/max_bytes`: "), "{text}");
    let schema = text
        .lines()
        .find(|l| l.starts_with("- `/max_bytes`"))
        .and_then(|l| l.split_once("; schema: "))
        .map(|(_, s)| s)
        .expect("a schema fragment for `/max_bytes`");
    let schema: Value = serde_json::from_str(schema).expect("the fragment is JSON");
    assert_eq!(schema["type"], "integer", "{schema}");
    assert_eq!(schema["minimum"], 1, "{schema}");
    assert_eq!(schema["maximum"], 65536, "{schema}");
}

#[tokio::test]
async fn openai_chat_completions_loop_runs_the_calls_feeds_back_the_refusal_and_stops_at_the_answer(
) {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path());
    let calls = json!([
        {"id": "call_bad", "type": "function",
         "function": {"name": "read_file", "arguments": "{\"path\": \"notes.txt\", \"max_bytes\": 0}"}},
        {"id": "call_ok", "type": "function",
         "function": {"name": "read_file", "arguments": "{\"path\": \"notes.txt\", \"max_bytes\": 100}"}},
    ]);
    let (base, script) = serve(
        "/v1/chat/completions",
        vec![
            json!({"id": "1", "object": "chat.completion", "choices": [{"index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": calls}}]}),
            json!({"id": "2", "object": "chat.completion", "choices": [{"index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": ANSWER}}]}),
        ],
    )
    .await;
    let done = answered(&exec, Api::OpenAi, &base, "sk-test").await;
    let codes: Vec<_> = done
        .results
        .iter()
        .map(|r| (r.call_id.as_str(), r.code))
        .collect();
    assert_eq!(
        codes,
        [
            ("call_bad", Some(ReasonCode::InvalidArguments)),
            ("call_ok", None)
        ]
    );

    let requests = script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2, "one request per turn");
    for (headers, request) in requests.iter() {
        assert_eq!(headers["authorization"], "Bearer sk-test");
        assert_eq!(request["model"], "test-model");
        // The exported tools, in Chat Completions' shape.
        let tools = request["tools"].as_array().expect("tools");
        let read_file = tools
            .iter()
            .find(|t| t["function"]["name"] == "read_file")
            .expect("read_file is offered");
        assert_eq!(read_file["type"], "function");
        assert_eq!(read_file["function"]["parameters"]["type"], "object");
        assert!(read_file["function"]["description"].is_string());
    }
    let messages = requests[1].1["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": "What do my notes say?"})
    );
    assert_eq!(
        messages[1]["tool_calls"], calls,
        "the assistant turn goes back as it came"
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_bad");
    assert_retry_feedback(messages[2]["content"].as_str().expect("text"));
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_ok", "content": "buy milk\n"})
    );
}

#[tokio::test]
async fn anthropic_messages_loop_runs_the_calls_feeds_back_the_refusal_and_stops_at_the_answer() {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path());
    let blocks = json!([
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_bad", "name": "read_file",
         "input": {"path": "notes.txt", "max_bytes": 0}},
        {"type": "tool_use", "id": "toolu_ok", "name": "read_file",
         "input": {"path": "notes.txt", "max_bytes": 100}},
    ]);
    let (base, script) = serve(
        "/v1/messages",
        vec![
            json!({"id": "msg_1", "type": "message", "role": "assistant",
                "stop_reason": "tool_use", "content": blocks}),
            json!({"id": "msg_2", "type": "message", "role": "assistant",
                "stop_reason": "end_turn", "content": [{"type": "text", "text": ANSWER}]}),
        ],
    )
    .await;
    answered(&exec, Api::Anthropic, &base, "key-test").await;

    let requests = script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2, "one request per turn");
    for (headers, request) in requests.iter() {
        assert_eq!(headers["x-api-key"], "key-test");
        assert_eq!(headers["anthropic-version"], "2023-06-01");
        assert!(request["max_tokens"].is_u64());
        let tools = request["tools"].as_array().expect("tools");
        let read_file = tools
            .iter()
            .find(|t| t["name"] == "read_file")
            .expect("read_file is offered");
        assert_eq!(read_file["input_schema"]["type"], "object");
        assert!(read_file.get("function").is_none(), "{read_file}");
    }
    let messages = requests[1].1["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[1], json!({"role": "assistant", "content": blocks}));
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"]
        .as_array()
        .expect("tool_result blocks");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "toolu_bad");
    assert_eq!(results[0]["is_error"], true);
    assert_retry_feedback(results[0]["content"].as_str().expect("text"));
    assert_eq!(
        results[1],
        json!({"type": "tool_result", "tool_use_id": "toolu_ok", "content": "buy milk\n",
               "is_error": false})
    );
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_ends_at_the_turn_limit() {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path());
    let turn = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "list_dir", "arguments": "{\"path\": \".\"}"}}]}}]});
    let (base, script) = serve("/v1/chat/completions", vec![turn; 5]).await;
    let mut config = AgentConfig::new(Api::OpenAi, &base, "m");
    config.max_turns = 3;
    let err = run(&exec, &config, "loop").await.expect_err("no answer");
    assert!(matches!(err, AgentError::TurnLimit(3)), "{err}");
    assert_eq!(script.requests.lock().expect("lock").len(), 3);
}

#[tokio::test]
async fn an_error_status_ends_the_loop_with_it() {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path());
    let (base, _script) = serve("/v1/chat/completions", Vec::new()).await;
    let config = AgentConfig::new(Api::OpenAi, &base, "m");
    let err = run(&exec, &config, "hi").await.expect_err("no answer");
    assert!(
        matches!(&err, AgentError::Status { status: 500, body } if body == "the script is over"),
        "{err}"
    );
}

#[tokio::test]
async fn gemini_loop_runs_the_function_calls_feeds_back_the_refusal_and_stops_at_the_answer() {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path());
    let parts = json!([
        {"text": "Let me look."},
        {"functionCall": {"id": "fc_bad", "name": "read_file",
         "args": {"path": "notes.txt", "max_bytes": 0}}},
        {"functionCall": {"name": "read_file", "args": {"path": "notes.txt", "max_bytes": 100}}},
    ]);
    let (base, script) = serve(
        "/v1beta/models/test-model:generateContent",
        vec![
            json!({"candidates": [{"content": {"role": "model", "parts": parts},
                "finishReason": "STOP", "index": 0}], "modelVersion": "test-model"}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]},
                "finishReason": "STOP", "index": 0}]}),
        ],
    )
    .await;
    answered(&exec, Api::Gemini, &base, "key-test").await;

    let requests = script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2, "one request per turn");
    for (headers, request) in requests.iter() {
        assert_eq!(headers["x-goog-api-key"], "key-test");
        let declarations = request["tools"][0]["functionDeclarations"]
            .as_array()
            .expect("function declarations");
        let read_file = declarations
            .iter()
            .find(|t| t["name"] == "read_file")
            .expect("read_file is offered");
        assert_eq!(read_file["parameters"]["type"], "object");
    }
    let contents = requests[1].1["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 3, "{contents:?}");
    assert_eq!(
        contents[0],
        json!({"role": "user", "parts": [{"text": "What do my notes say?"}]})
    );
    assert_eq!(contents[1], json!({"role": "model", "parts": parts}));
    assert_eq!(contents[2]["role"], "user");
    let responses = contents[2]["parts"]
        .as_array()
        .expect("functionResponse parts");
    assert_eq!(responses.len(), 2);
    let bad = &responses[0]["functionResponse"];
    assert_eq!(bad["id"], "fc_bad");
    assert_eq!(bad["name"], "read_file");
    assert_eq!(bad["response"]["error"]["code"], "invalid_arguments");
    assert_retry_feedback(bad["response"]["error"]["message"].as_str().expect("text"));
    let ok = &responses[1]["functionResponse"];
    assert_eq!(ok["name"], "read_file");
    assert_eq!(ok["response"], json!({"output": "buy milk\n"}));
}
