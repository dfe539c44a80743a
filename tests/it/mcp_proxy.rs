//! The guarding proxy: a third-party MCP server's tools are served through the executor, so a
//! call that breaks the schema or leaves the workspace is refused before the child server sees
//! it, and the child's own annotations never lower the risk.
//!
//! The proxy speaks either MCP revision with its child (a child that speaks only 2025-11-25 is
//! reached through `initialize`) and either revision with its clients, whatever the child
//! speaks; approval is the proxy's own (input-required results for 2026-07-28 clients,
//! elicitation for 2025-11-25 clients, denial with the reason code as data for a client that can
//! do neither); a cancelled call is cancelled at the child, whose handler records it; duplicate
//! keys and output caps apply to proxied calls as to local ones.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProtocolVersion};
use rmcp::service::PeerRequestOptions;
use rmcp::RoleClient;
use serde_json::{json, Map, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tool_core::approval::FixedApprover;
use tool_core::mcp::proxy::{self, ChildRevision, ImportedServer, ProxyConfig, ProxyError};
use tool_core::mcp::{ExecutorBackend, McpBackend, McpCallContext, McpCallOutcome, McpServer};
use tool_core::{Executor, ExecutorConfig, ReasonCode, Registry, Risk};

use crate::mcp_session::{connect, Answering};

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("test arguments are objects"),
    }
}

/// A call whose client approves everything, standing for a person who approves the call.
fn ctx(id: &str) -> McpCallContext {
    McpCallContext::new(id, Default::default()).with_approver(Arc::new(FixedApprover::allow()))
}

fn received(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("the recorder writes JSON lines"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_refuses_bad_calls_before_the_child_sees_them() {
    let (dir, workspace, log, imported) =
        import_child(Child::BothRevisions, &ProxyConfig::default()).await;
    assert!(imported.skipped.is_empty(), "{:?}", imported.skipped);
    let def = imported
        .tools
        .iter()
        .find(|t| t.decl().name == "write_file")
        .expect("write_file imported");
    // The child claims readOnlyHint: true; risk comes from our config, default mutation.
    assert_eq!(def.decl().risk, Risk::Mutation);
    assert!(def.guarded_path_args().contains(&"path".to_owned()));

    let executor = executor(&imported, ExecutorConfig::new(&workspace));
    let backend = ExecutorBackend::new(Arc::new(executor));
    let listed = backend.list_tools();
    let write_file = listed
        .iter()
        .find(|t| t["name"] == "write_file")
        .expect("write_file listed");
    assert_eq!(write_file["annotations"]["readOnlyHint"], json!(false));

    let unknown_arg = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x", "mode": "0777"})),
            ctx("1"),
        )
        .await;
    assert!(
        matches!(
            unknown_arg,
            McpCallOutcome::Refused {
                code: ReasonCode::InvalidArguments,
                ..
            }
        ),
        "{unknown_arg:?}"
    );

    let escape = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "../outside.txt", "text": "x"})),
            ctx("2"),
        )
        .await;
    assert!(
        matches!(
            escape,
            McpCallOutcome::Refused {
                code: ReasonCode::PathOutsideWorkspace,
                ..
            }
        ),
        "{escape:?}"
    );

    // Only a guard that resolves symlinks sees this one leave the workspace.
    std::os::unix::fs::symlink(dir.path(), workspace.join("link")).expect("symlink");
    let via_symlink = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "link/outside.txt", "text": "x"})),
            ctx("2b"),
        )
        .await;
    assert!(
        matches!(
            via_symlink,
            McpCallOutcome::Refused {
                code: ReasonCode::PathOutsideWorkspace,
                ..
            }
        ),
        "{via_symlink:?}"
    );

    let unapproved = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x"})),
            McpCallContext::new("3", Default::default()),
        )
        .await;
    assert!(
        matches!(
            unapproved,
            McpCallOutcome::Refused {
                code: ReasonCode::ApprovalDenied,
                ..
            }
        ),
        "{unapproved:?}"
    );

    assert!(received(&log).is_empty(), "the child saw a refused call");

    let ok = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x"})),
            ctx("4"),
        )
        .await;
    assert_eq!(ok, McpCallOutcome::ok(json!("received")));
    let seen = received(&log);
    assert_eq!(seen.len(), 1, "{seen:?}");
    // The child gets the path the guard checked: absolute, inside the canonical workspace.
    let checked = workspace
        .canonicalize()
        .expect("workspace exists")
        .join("a.txt");
    assert_eq!(
        seen[0]["arguments"],
        json!({"path": checked.display().to_string(), "text": "x"})
    );

    imported.shutdown().await;
}

/// The recording server as a child that speaks both revisions, or only 2025-11-25.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    BothRevisions,
    Legacy,
    /// Speaks 2025-11-25 only, and never answers `server/discover`.
    MuteDiscover,
}

impl Child {
    fn args(self, log: &std::path::Path) -> Vec<String> {
        let mut args = vec![log.display().to_string()];
        match self {
            Child::BothRevisions => {}
            Child::Legacy => args.push("--legacy".to_owned()),
            Child::MuteDiscover => args.push("--mute-discover".to_owned()),
        }
        args
    }
}

/// A proxy in front of a recording child, served over loopback HTTP, with `wait` and `flood`
/// declared `safe` (no approval) and `write_file` left at the default, `mutation`.
struct Proxy {
    imported: Option<ImportedServer>,
    backend: ExecutorBackend,
    addr: std::net::SocketAddr,
    log: std::path::PathBuf,
    workspace: std::path::PathBuf,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Proxy {
    async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(imported) = self.imported.take() {
            imported.shutdown().await;
        }
    }

    fn received(&self) -> Vec<Value> {
        received(&self.log)
    }

    /// Wait (bounded) until the child recorded a line that `pred` accepts.
    async fn child_recorded(&self, pred: impl Fn(&Value) -> bool) -> bool {
        for _ in 0..1500 {
            if self.received().iter().any(&pred) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// A 2025-11-25 client connected to the proxy over an in-memory stream.
    async fn session_client(
        &self,
        handler: Answering,
    ) -> rmcp::service::RunningService<RoleClient, Answering> {
        connect(McpServer::new(self.backend.clone()), handler).await
    }
}

/// A temporary directory with the workspace `ws` and the child's log `received.jsonl`, and the
/// tools of a recording child started under `config`.
async fn import_child(
    child: Child,
    config: &ProxyConfig,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    ImportedServer,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).expect("workspace");
    let log = dir.path().join("received.jsonl");
    let imported = proxy::import(
        env!("CARGO_BIN_EXE_mcp_recording_server"),
        &child.args(&log),
        config,
    )
    .await
    .expect("the child server starts and lists its tools");
    (dir, workspace, log, imported)
}

async fn start_proxy(child: Child, revision: ChildRevision) -> Proxy {
    let config = ProxyConfig {
        risks: [
            ("wait".to_owned(), Risk::Safe),
            ("flood".to_owned(), Risk::Safe),
        ]
        .into_iter()
        .collect(),
        revision,
        // Short, so that the child that never answers it does not hold the test up.
        discover_timeout: Some(Duration::from_millis(500)),
        ..ProxyConfig::default()
    };
    let (dir, workspace, log, imported) = import_child(child, &config).await;
    let executor = executor(&imported, ExecutorConfig::new(&workspace));
    let backend = ExecutorBackend::new(Arc::new(executor));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let addr = listener.local_addr().expect("address");
    let stop = CancellationToken::new();
    tokio::spawn(tool_core::mcp::serve_http_on(
        listener,
        backend.clone(),
        stop.clone(),
    ));
    Proxy {
        imported: Some(imported),
        backend,
        addr,
        log,
        workspace,
        stop,
        _dir: dir,
    }
}

/// An executor over the imported tools.
fn executor(imported: &ImportedServer, config: ExecutorConfig) -> Executor {
    let mut b = Registry::builder();
    for t in imported.tools.iter().cloned() {
        b = b.tool(t);
    }
    Executor::new(Arc::new(b.build().expect("registry")), config).expect("executor")
}

/// A 2025-11-25 client; with `approve`, it declares form elicitation and approves what it is
/// asked; without, it declares nothing.
fn session_handler(approve: bool) -> Answering {
    let caps = if approve {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    Answering {
        name: "proxy-test",
        caps,
        form: json!({"approve": true}),
    }
}

/// The per-request `_meta` of a 2026-07-28 client; `elicitation` says whether it can answer forms.
fn meta(elicitation: bool) -> Value {
    test_support::http::client_meta("proxy-test", elicitation)
}

/// The head of a 2026-07-28 `tools/call` POST with `body`.
fn call_head(addr: std::net::SocketAddr, tool: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
}

/// POST a raw 2026-07-28 `tools/call` body and return the JSON-RPC response.
async fn post_call(addr: std::net::SocketAddr, tool: &str, body: &str) -> Value {
    let reply = test_support::http::mcp_post(addr, "tools/call", &[("Mcp-Name", tool)], body).await;
    reply.message().unwrap_or_else(|| {
        panic!(
            "no JSON-RPC response in {}\r\n\r\n{}",
            reply.head, reply.body
        )
    })
}

/// A 2026-07-28 `tools/call` with these params.
async fn call_2026(addr: std::net::SocketAddr, params: Value) -> Value {
    let tool = params["name"].as_str().unwrap_or_default().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    post_call(addr, &tool, &body.to_string()).await
}

fn writes(log: &[Value]) -> usize {
    log.iter().filter(|l| l["tool"] == "write_file").count()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proxy_speaks_either_revision_with_its_child() {
    for (child, revision, expected) in [
        (Child::BothRevisions, ChildRevision::Auto, "2026-07-28"),
        (Child::Legacy, ChildRevision::Auto, "2025-11-25"),
        (Child::MuteDiscover, ChildRevision::Auto, "2025-11-25"),
        (
            Child::BothRevisions,
            ChildRevision::V2025_11_25,
            "2025-11-25",
        ),
        (
            Child::BothRevisions,
            ChildRevision::V2026_07_28,
            "2026-07-28",
        ),
    ] {
        let p = start_proxy(child, revision).await;
        let negotiated = p
            .imported
            .as_ref()
            .and_then(ImportedServer::protocol_version);
        assert_eq!(
            negotiated.as_deref(),
            Some(expected),
            "{child:?} {revision:?}"
        );
        let ok = p
            .backend
            .call_tool(
                "write_file".into(),
                args(json!({"path": "a.txt", "text": "x"})),
                ctx("1"),
            )
            .await;
        assert_eq!(
            ok,
            McpCallOutcome::ok(json!("received")),
            "{child:?} {revision:?}"
        );
        assert_eq!(writes(&p.received()), 1, "{child:?} {revision:?}");
        p.shutdown().await;
    }
    // Asked for 2026-07-28 only, a child that does not speak it is an error, not a downgrade.
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = proxy::import(
        env!("CARGO_BIN_EXE_mcp_recording_server"),
        &Child::Legacy.args(&dir.path().join("log")),
        &ProxyConfig {
            revision: ChildRevision::V2026_07_28,
            ..ProxyConfig::default()
        },
    )
    .await;
    assert!(
        matches!(refused, Err(ProxyError::Handshake { .. })),
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_of_either_revision_approve_through_the_proxy_not_the_child() {
    for child in [Child::BothRevisions, Child::Legacy] {
        let p = start_proxy(child, ChildRevision::Auto).await;
        let call = json!({"name": "write_file", "arguments": {"path": "a.txt", "text": "x"}});

        // 2026-07-28: the child's readOnlyHint notwithstanding, an input-required result first.
        let mut asked = call.clone();
        asked["_meta"] = meta(true);
        let r = call_2026(p.addr, asked.clone()).await;
        let res = &r["result"];
        assert_eq!(res["resultType"], "input_required", "{child:?} {r}");
        assert_eq!(
            res["inputRequests"]["approval"]["method"], "elicitation/create",
            "{r}"
        );
        assert_eq!(writes(&p.received()), 0, "{child:?}: ran before approval");
        let mut answered = asked.clone();
        answered["inputResponses"] =
            json!({"approval": {"action": "accept", "content": {"approve": true}}});
        answered["requestState"] = res["requestState"].clone();
        let r = call_2026(p.addr, answered).await;
        assert_eq!(r["result"]["isError"], false, "{child:?} {r}");
        assert_eq!(r["result"]["content"][0]["text"], "received", "{r}");
        assert_eq!(writes(&p.received()), 1, "{child:?}");

        // 2026-07-28 without elicitation: denied, the code as data, the child never asked.
        let mut unaskable = call.clone();
        unaskable["_meta"] = meta(false);
        let r = call_2026(p.addr, unaskable).await;
        let res = &r["result"];
        assert_eq!(res["isError"], true, "{child:?} {r}");
        assert_eq!(
            res["structuredContent"]["reason_code"], "approval_denied",
            "{r}"
        );
        assert_eq!(res["_meta"]["reason_code"], "approval_denied", "{r}");
        assert_eq!(
            writes(&p.received()),
            1,
            "{child:?}: a denied call reached the child"
        );

        // 2025-11-25: approval through an elicitation request to the client.
        let client = p.session_client(session_handler(true)).await;
        assert_eq!(
            client.peer_info().map(|i| i.protocol_version.clone()),
            Some(ProtocolVersion::V_2025_11_25)
        );
        let params = CallToolRequestParams::new("write_file")
            .with_arguments(args(json!({"path": "b.txt", "text": "y"})));
        let r = client
            .peer()
            .call_tool(params.clone())
            .await
            .expect("answered");
        assert_eq!(r.is_error, Some(false), "{child:?} {r:?}");
        assert_eq!(writes(&p.received()), 2, "{child:?}");
        let _ = client.cancel().await;

        // 2025-11-25 without elicitation: denied, the code as data.
        let client = p.session_client(session_handler(false)).await;
        let r = client.peer().call_tool(params).await.expect("answered");
        assert_eq!(r.is_error, Some(true), "{child:?} {r:?}");
        assert_eq!(
            r.structured_content
                .as_ref()
                .map(|v| v["reason_code"].clone()),
            Some(json!("approval_denied")),
            "{r:?}"
        );
        assert_eq!(
            writes(&p.received()),
            2,
            "{child:?}: a denied call reached the child"
        );
        let _ = client.cancel().await;
        p.shutdown().await;
    }
}

/// The child recorded that its `wait` call tagged `tag` was cancelled.
fn cancelled(tag: &'static str) -> impl Fn(&Value) -> bool {
    move |l: &Value| l["cancelled"] == "wait" && l["tag"] == tag
}

/// The child received the `wait` call tagged `tag`.
fn started(tag: &'static str) -> impl Fn(&Value) -> bool {
    move |l: &Value| l["tool"] == "wait" && l["arguments"]["tag"] == tag
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_proxied_call_is_cancelled_at_the_child() {
    for child in [Child::BothRevisions, Child::Legacy] {
        let p = start_proxy(child, ChildRevision::Auto).await;

        // The executor's own cancellation (an MCP call context's token).
        let token = CancellationToken::new();
        let backend = p.backend.clone();
        let call_ctx = McpCallContext::new("w1", token.clone());
        let running = tokio::spawn(async move {
            backend
                .call_tool("wait".into(), args(json!({"tag": "direct"})), call_ctx)
                .await
        });
        assert!(
            p.child_recorded(started("direct")).await,
            "{child:?}: never forwarded"
        );
        token.cancel();
        let outcome = running.await.expect("the call ends");
        assert!(
            matches!(
                outcome,
                McpCallOutcome::Failed {
                    code: ReasonCode::Cancelled,
                    ..
                }
            ),
            "{outcome:?}"
        );
        assert!(
            p.child_recorded(cancelled("direct")).await,
            "{child:?}: the child never saw the cancellation: {:?}",
            p.received()
        );

        // The executor's timeout.
        let timed = executor(
            p.imported.as_ref().expect("imported"),
            ExecutorConfig::new(&p.workspace).default_timeout(Duration::from_millis(300)),
        );
        let outcome = ExecutorBackend::new(Arc::new(timed))
            .call_tool(
                "wait".into(),
                args(json!({"tag": "timeout"})),
                McpCallContext::new("w2", CancellationToken::new()),
            )
            .await;
        assert!(
            matches!(
                outcome,
                McpCallOutcome::Failed {
                    code: ReasonCode::Timeout,
                    ..
                }
            ),
            "{outcome:?}"
        );
        assert!(
            p.child_recorded(cancelled("timeout")).await,
            "{child:?}: the child never saw the timeout as a cancellation: {:?}",
            p.received()
        );

        // A 2025-11-25 client's `notifications/cancelled`.
        let client = p.session_client(session_handler(false)).await;
        let params =
            CallToolRequestParams::new("wait").with_arguments(args(json!({"tag": "session"})));
        let handle = client
            .peer()
            .send_request_with_option(
                ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("sent");
        assert!(
            p.child_recorded(started("session")).await,
            "{child:?}: never forwarded"
        );
        handle
            .cancel(Some("the user stopped it".to_owned()))
            .await
            .expect("cancellation sent");
        assert!(
            p.child_recorded(cancelled("session")).await,
            "{child:?}: the child never saw the client's cancellation: {:?}",
            p.received()
        );
        let _ = client.cancel().await;

        // A 2026-07-28 client over streamable HTTP cancels by closing the request's stream.
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params":
            {"name": "wait", "arguments": {"tag": "stateless"}, "_meta": meta(false)}})
        .to_string();
        let mut stream = TcpStream::connect(p.addr).await.expect("connect");
        stream
            .write_all(call_head(p.addr, "wait", &body).as_bytes())
            .await
            .expect("send head");
        stream.write_all(body.as_bytes()).await.expect("send body");
        assert!(
            p.child_recorded(started("stateless")).await,
            "{child:?}: never forwarded"
        );
        drop(stream);
        assert!(
            p.child_recorded(cancelled("stateless")).await,
            "{child:?}: the child never saw the closed stream as a cancellation: {:?}",
            p.received()
        );
        p.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_keys_and_output_caps_apply_to_proxied_calls() {
    let p = start_proxy(Child::BothRevisions, ChildRevision::Auto).await;
    let meta = meta(false).to_string();
    let dup = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"flood","arguments":{{"bytes":1,"bytes":2}},"_meta":{meta}}}}}"#
    );
    let r = post_call(p.addr, "flood", &dup).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason_code"], "malformed_call", "{r}");
    assert!(
        p.received().is_empty(),
        "the child saw a duplicate-key call"
    );

    // The child answers with 200 000 bytes; the proxy's output cap (64 KiB) cuts it.
    let r = call_2026(
        p.addr,
        json!({"name": "flood", "arguments": {"bytes": 200_000}, "_meta": serde_json::from_str::<Value>(&meta).expect("json")}),
    )
    .await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().expect("text");
    assert!(
        text.ends_with("[output truncated: showing 65536 of 200000 bytes]"),
        "{}",
        &text[text.len().saturating_sub(120)..]
    );
    assert!(text.len() < 66_000, "{}", text.len());
    assert_eq!(p.received().len(), 1);
    p.shutdown().await;
}
