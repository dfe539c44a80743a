//! A rig agent, on rig's OpenAI-compatible Chat Completions client, against a mock server on
//! loopback: the model's tool calls run through the executor (validation, approval, audit), and
//! what comes back, a result or a refusal with its reason code, is in the next request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State as AxumState;
use axum::routing::post;
use axum::{Json, Router};
use rig_agent::AgentBuilder;
use rig_core::providers::openai::OpenAIConfig;
use serde_json::{json, Value};
use tool_core::audit::MemoryAuditSink;
use tool_core::{CallStatus, Executor, ExecutorConfig, Registry};
use tool_rig::RigTools;

/// The mock model: it answers each request with the next scripted reply and keeps every
/// request it was sent.
#[derive(Clone, Default)]
struct Model {
    replies: Arc<Mutex<Vec<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl Model {
    fn scripted(replies: Vec<Value>) -> Self {
        Model {
            replies: Arc::new(Mutex::new(replies.into_iter().rev().collect())),
            requests: Arc::default(),
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("requests").clone()
    }
}

async fn chat(AxumState(model): AxumState<Model>, Json(body): Json<Value>) -> Json<Value> {
    model.requests.lock().expect("requests").push(body);
    let message = model
        .replies
        .lock()
        .expect("replies")
        .pop()
        .unwrap_or_else(|| json!({"role": "assistant", "content": "no more replies"}));
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    Json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "mock-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    }))
}

/// Serve the mock on a loopback port; the base URL rig's client is pointed at.
async fn serve(model: Model) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(model);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/v1")
}

fn tool_call(id: &str, name: &str, arguments: Value) -> Value {
    json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}
        }]
    })
}

/// Add two integers.
#[tool_core::tool(risk = "safe")]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// How often `delete_everything` ran.
static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Delete every file.
#[tool_core::tool(risk = "destructive")]
fn delete_everything() -> String {
    DELETED.fetch_add(1, Ordering::SeqCst);
    "deleted".to_owned()
}

struct Run {
    answer: String,
    requests: Vec<Value>,
    audit: Arc<MemoryAuditSink>,
    _ws: tempfile::TempDir,
}

/// One agent prompt over the registry's tools, the model scripted with `replies`.
async fn run(replies: Vec<Value>) -> Run {
    let ws = tempfile::tempdir().expect("workspace");
    let audit = Arc::new(MemoryAuditSink::new());
    let config = ExecutorConfig::new(ws.path()).audit(audit.clone());
    let registry = Registry::from_inventory().expect("the tools above");
    let executor = Arc::new(Executor::new(Arc::new(registry), config).expect("executor"));
    let model = Model::scripted(replies);
    let base_url = serve(model.clone()).await;
    let client = OpenAIConfig::new("sk-test")
        .with_base_url(base_url)
        .client();
    let agent = AgentBuilder::new(client.chat("mock-model"))
        .preamble("Use the tools.")
        .dynamic_tools(RigTools::new(executor).tools())
        .build();
    let response = agent
        .prompt("What is 2 + 3?")
        .max_turns(4)
        .await
        .expect("the agent run ends");
    Run {
        answer: response.output(),
        requests: model.requests(),
        audit,
        _ws: ws,
    }
}

/// The tool message answering `call_id` in a request, if any.
fn tool_message<'a>(request: &'a Value, call_id: &str) -> Option<&'a Value> {
    request["messages"]
        .as_array()?
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
}

fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_tool_call_runs_through_the_executor_and_its_result_goes_back_to_the_model() {
    let r = run(vec![
        tool_call("call_1", "add", json!({"a": 2, "b": 3})),
        json!({"role": "assistant", "content": "2 + 3 = 5"}),
    ])
    .await;
    assert_eq!(r.answer, "2 + 3 = 5");
    assert_eq!(r.requests.len(), 2, "{:#?}", r.requests);
    // The first request offers the tools with their declared schemas.
    let offered = r.requests[0]["tools"].as_array().expect("tools offered");
    let add = offered
        .iter()
        .find(|t| t["function"]["name"] == "add")
        .expect("add offered");
    assert_eq!(
        add["function"]["parameters"]["properties"]["a"]["type"],
        "integer"
    );
    let answer = tool_message(&r.requests[1], "call_1").expect("the tool result, by call id");
    assert_eq!(content_text(answer), "5");
    let events = r.audit.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].tool.as_deref(), Some("add"));
    assert_eq!(events[0].status, CallStatus::Ok);
    // The async handler ran on a confined runtime.
    assert!(
        events[0].enforced.starts_with("landlock"),
        "{}",
        events[0].enforced
    );
}

#[tokio::test]
async fn refusals_come_back_to_the_model_with_their_reason_codes() {
    let r = run(vec![
        tool_call("call_bad", "add", json!({"a": "two", "b": 3})),
        tool_call("call_rm", "delete_everything", json!({})),
        json!({"role": "assistant", "content": "I cannot do that."}),
    ])
    .await;
    assert_eq!(r.answer, "I cannot do that.");
    assert_eq!(r.requests.len(), 3, "{:#?}", r.requests);
    let invalid = content_text(tool_message(&r.requests[1], "call_bad").expect("refusal sent"));
    assert!(invalid.contains("invalid_arguments"), "{invalid}");
    assert!(invalid.contains("/a"), "names the failing path: {invalid}");
    let denied = content_text(tool_message(&r.requests[2], "call_rm").expect("refusal sent"));
    assert!(denied.contains("approval_denied"), "{denied}");
    let events = r.audit.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.status == CallStatus::Refused));
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        0,
        "the refused call never ran"
    );
}
