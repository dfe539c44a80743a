//! MCP over streamable HTTP as a client of revision 2026-07-28 sees it, and the checks on the raw
//! request: approval through input-required results whose `requestState` is verified (a changed,
//! replayed or re-targeted state is refused and the tool does not run), refusals that carry their
//! reason code as data, duplicate keys, `Origin`, malformed JSON and non-object arguments.
//! Spoken as raw HTTP/1.1 over a loopback socket, byte for byte what a client sends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk, ToolError};

/// The tools below served on a loopback port, and how often `write` ran.
struct Server {
    addr: std::net::SocketAddr,
    runs: Arc<AtomicUsize>,
    _served: crate::mcp_wire::Server,
}

async fn start() -> Server {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": false
    });
    let write = ToolDef::builder("write")
        .description("Writes a text (counts its runs).")
        .input_schema(schema.clone())
        .risk(Risk::Mutation)
        .handler(move |_ctx, args: Value| {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                format!("wrote {}", args["text"].as_str().unwrap_or_default())
            }
        })
        .build()
        .expect("valid tool");
    let echo = ToolDef::builder("echo")
        .description("Echoes a text.")
        .input_schema(schema)
        .risk(Risk::Safe)
        .handler(
            |_ctx, args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
        )
        .build()
        .expect("valid tool");
    let lookup = ToolDef::builder("lookup")
        .description("Looks a key up (there is none): fails with the tool's own error code.")
        .input_schema(json!({
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
            "additionalProperties": false
        }))
        .risk(Risk::ReadOnly)
        .handler(|_ctx, args: Value| async move {
            let key = args["key"].as_str().unwrap_or_default().to_owned();
            Err::<String, _>(ToolError::new("not_found", format!("no entry `{key}`")))
        })
        .build()
        .expect("valid tool");
    let registry = Registry::builder()
        .tool(write)
        .tool(echo)
        .tool(lookup)
        .build()
        .expect("registry");
    let dir = tempfile::tempdir().expect("tempdir");
    let executor = Executor::new(Arc::new(registry), ExecutorConfig::new(dir.path()))
        .expect("executor over a temp dir");
    let backend = ExecutorBackend::new(Arc::new(executor));
    let served = crate::mcp_wire::serve(McpServer::new(backend), dir).await;
    Server {
        addr: served.addr,
        runs,
        _served: served,
    }
}

/// The per-request `_meta` of a 2026-07-28 client; `elicitation` says whether it can answer forms.
fn meta(elicitation: bool) -> Value {
    test_support::http::client_meta("raw-test", elicitation)
}

struct Reply {
    status: u16,
    /// The JSON-RPC response (from a JSON body or the SSE event that carries it), if any.
    message: Option<Value>,
}

/// POST `body` to `/mcp` as a 2026-07-28 client, with extra headers.
async fn post(server: &Server, body: &str, method: &str, extra: &[(&str, &str)]) -> Reply {
    let reply = test_support::http::mcp_post(server.addr, method, extra, body).await;
    Reply {
        status: reply.status,
        message: reply.message(),
    }
}

async fn call(server: &Server, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    post(
        server,
        &body.to_string(),
        "tools/call",
        &[("Mcp-Name", name.as_str())],
    )
    .await
}

fn result(reply: &Reply) -> &Value {
    &reply.message.as_ref().expect("a JSON-RPC message")["result"]
}

fn error(reply: &Reply) -> &Value {
    &reply.message.as_ref().expect("a JSON-RPC message")["error"]
}

fn accept() -> Value {
    json!({"approval": {"action": "accept", "content": {"approve": true}}})
}

/// Round 1 of a `write` call: the approval question and its state.
async fn ask(server: &Server, text: &str) -> String {
    let r = call(
        server,
        json!({"name": "write", "arguments": {"text": text}, "_meta": meta(true)}),
    )
    .await;
    let res = result(&r);
    assert_eq!(res["resultType"], "input_required", "{res}");
    assert_eq!(
        res["inputRequests"]["approval"]["method"], "elicitation/create",
        "{res}"
    );
    res["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_round_trip_runs_once_and_a_replay_is_refused() {
    let server = start().await;
    let state = ask(&server, "a").await;
    assert_eq!(
        server.runs.load(Ordering::SeqCst),
        0,
        "nothing ran in round 1"
    );
    let answer = json!({"name": "write", "arguments": {"text": "a"}, "_meta": meta(true),
        "inputResponses": accept(), "requestState": state});
    let r = call(&server, answer.clone()).await;
    let res = result(&r);
    assert_eq!(res["isError"], false, "{res}");
    assert_eq!(res["content"][0]["text"], "wrote a");
    assert_eq!(server.runs.load(Ordering::SeqCst), 1);

    let replay = call(&server, answer).await;
    let e = error(&replay);
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["reason_code"], "approval_state_replayed", "{e}");
    assert_eq!(
        server.runs.load(Ordering::SeqCst),
        1,
        "a replay does not run"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_state_or_other_arguments_are_refused() {
    let server = start().await;
    let state = ask(&server, "a").await;
    let mut tampered = state.clone().into_bytes();
    let last = tampered.len() - 3;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    for params in [
        json!({"name": "write", "arguments": {"text": "a"}, "_meta": meta(true),
            "inputResponses": accept(), "requestState": tampered}),
        // The approval of `a` does not approve `b`.
        json!({"name": "write", "arguments": {"text": "b"}, "_meta": meta(true),
            "inputResponses": accept(), "requestState": state.clone()}),
        // Nor a call of another tool.
        json!({"name": "echo", "arguments": {"text": "a"}, "_meta": meta(true),
            "inputResponses": accept(), "requestState": state.clone()}),
    ] {
        let r = call(&server, params).await;
        let e = error(&r);
        assert_eq!(e["code"], -32602, "{e}");
        assert_eq!(e["data"]["reason_code"], "approval_state_invalid", "{e}");
    }
    assert_eq!(server.runs.load(Ordering::SeqCst), 0);
    // The refused attempts did not use the state up: the call it was issued for still runs.
    let r = call(
        &server,
        json!({"name": "write", "arguments": {"text": "a"}, "_meta": meta(true),
            "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(result(&r)["isError"], false, "{:?}", r.message);
    assert_eq!(server.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declined_or_unaskable_approval_is_a_refusal_with_its_code_as_data() {
    let server = start().await;
    let state = ask(&server, "a").await;
    let declined = call(
        &server,
        json!({"name": "write", "arguments": {"text": "a"}, "_meta": meta(true),
            "inputResponses": {"approval": {"action": "decline"}}, "requestState": state}),
    )
    .await;
    // A client without elicitation is never asked: denied at once, as before.
    let unaskable = call(
        &server,
        json!({"name": "write", "arguments": {"text": "a"}, "_meta": meta(false)}),
    )
    .await;
    for r in [declined, unaskable] {
        let res = result(&r);
        assert_eq!(res["isError"], true, "{res}");
        assert_eq!(res["structuredContent"]["reason_code"], "approval_denied");
        assert_eq!(res["_meta"]["reason_code"], "approval_denied");
        let text = res["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("approval_denied"), "{text}");
    }
    assert_eq!(server.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tools_own_error_code_arrives_as_data_over_http() {
    let server = start().await;
    let r = call(
        &server,
        json!({"name": "lookup", "arguments": {"key": "zz"}, "_meta": meta(false)}),
    )
    .await;
    assert_eq!(r.status, 200);
    let res = result(&r);
    assert_eq!(res["isError"], true, "{res}");
    assert_eq!(
        res["structuredContent"]["reason_code"], "tool_error",
        "{res}"
    );
    assert_eq!(res["structuredContent"]["error_code"], "not_found", "{res}");
    assert_eq!(res["_meta"]["error_code"], "not_found", "{res}");
    let text = res["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("no entry `zz`"), "{res}");
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_keys_are_refused_and_nothing_runs() {
    let server = start().await;
    let m = meta(false).to_string();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"a","text":"b"}},"_meta":{m}}}}}"#
    );
    let r = post(&server, &body, "tools/call", &[("Mcp-Name", "echo")]).await;
    assert_eq!(r.status, 400);
    let e = error(&r);
    assert_eq!(e["code"], -32602, "{e}");
    assert_eq!(e["data"]["reason_code"], "malformed_call", "{e}");
    assert_eq!(r.message.as_ref().map(|m| &m["id"]), Some(&json!(5)));
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_and_array_arguments_get_their_json_rpc_errors() {
    let server = start().await;
    let r = post(
        &server,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#,
        "tools/list",
        &[],
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(error(&r)["code"], -32700);

    let r = call(
        &server,
        json!({"name": "echo", "arguments": ["a"], "_meta": meta(false)}),
    )
    .await;
    assert_eq!(error(&r)["code"], -32602, "{:?}", r.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_origin_is_refused_like_a_foreign_host() {
    let server = start().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": meta(false)}})
    .to_string();
    let foreign = post(
        &server,
        &body,
        "tools/list",
        &[("Origin", "http://evil.example")],
    )
    .await;
    assert_eq!(foreign.status, 403);
    let local_origin = format!("http://localhost:{}", server.addr.port());
    let local = post(&server, &body, "tools/list", &[("Origin", &local_origin)]).await;
    assert_eq!(local.status, 200);
    let res = result(&local);
    let names: Vec<&str> = res["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "lookup", "write"], "sorted by name");
    assert!(res["ttlMs"].as_u64().is_some_and(|t| t > 0), "{res}");
    assert_eq!(res["cacheScope"], "private");
}

/// Over stdio, the same checks apply to each line: a duplicate key or a malformed line is
/// answered with its error and never reaches the server (whose tool records every call it gets).
#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_duplicate_keys_and_bad_json_never_reach_the_server() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("received.jsonl");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp_recording_server"))
        .arg(&log)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the server starts");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"}}});
    let lines = [
        init.to_string(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","text":"x","path":"b"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call""#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","text":"x"}}}"#.to_owned(),
    ];
    for l in &lines {
        input.write_all(l.as_bytes()).await.expect("send");
        input.write_all(b"\n").await.expect("send");
    }
    let mut replies = Vec::new();
    while replies.len() < 4 {
        let line = output
            .next_line()
            .await
            .expect("read")
            .expect("the server answers every request");
        replies.push(serde_json::from_str::<Value>(&line).expect("a JSON line"));
    }
    let by_id = |id: Value| replies.iter().find(|r| r["id"] == id).cloned();
    let dup = by_id(json!(1)).expect("an answer to the duplicate-key call");
    assert_eq!(dup["error"]["code"], -32602, "{dup}");
    assert_eq!(dup["error"]["data"]["reason_code"], "malformed_call");
    let parse = by_id(Value::Null).expect("a parse error");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let ok = by_id(json!(3)).expect("an answer to the good call");
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    drop(input);
    let _ = child.wait().await;
    let received = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        received.lines().count(),
        1,
        "only the good call arrived: {received}"
    );
    assert!(received.contains(r#""path":"a""#), "{received}");
}
