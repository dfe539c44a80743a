//! MCP resources, prompts and completion as real clients see them: rmcp's client over a
//! 2025-11-25 session, and raw HTTP/1.1 as a stateless 2026-07-28 client. Workspace files are
//! read through the path guard (traversal, symlinks out, FIFOs, hard links and oversized files
//! refused), unknown URIs are the resource-not-found error with `data.uri`, lists are sorted and
//! carry caching hints on 2026-07-28, prompts refuse bad arguments before they are built, and
//! `x-mcp-header` parameters must match their `Mcp-Param-*` headers or the tool does not run.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
    Reference, ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{json, Map, Value};
use test_support::site::{Site, CANARY};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tool_core::content::{EmbeddedResource, Image, ResourceBody};
use tool_core::guard::path::PathGuard;
use tool_core::mcp::completion::Completer;
use tool_core::mcp::prompts::{Message, Prompt, PromptArgument, Prompts};
use tool_core::mcp::resources::{Resource, ResourceTemplate, Resources, WorkspaceResources};
use tool_core::mcp::{ExecutorBackend, McpServer, ServeError};
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk};

use crate::mcp_wire::{serve_only, Server};

/// Files the workspace tests read: the workspace `ws` and a sibling directory `outside` with
/// the canary `secret.txt`.
struct Fixture {
    _site: Site,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
    runs: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let site = Site::new()
        .with_dir("sub")
        .with_file("b.txt", "bee")
        .with_file("a file.txt", "hello resources")
        .with_file("sub/c.md", "# c")
        .with_file(".hidden", "dot")
        .with_file("big.bin", vec![7u8; 2048])
        .with_file("raw.bin", [0u8, 159, 146, 150]);
    std::os::unix::fs::symlink(&site.canary, site.ws.join("escape.txt")).expect("link");
    std::fs::hard_link(&site.canary, site.ws.join("linked.txt")).expect("hard link");
    let status = Command::new("mkfifo")
        .arg(site.ws.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    Fixture {
        ws: site.ws.clone(),
        outside: site.outside.clone(),
        _site: site,
        runs: Arc::new(AtomicUsize::new(0)),
    }
}

fn echo_template() -> ResourceTemplate {
    ResourceTemplate::new("test://notes/{day}/summary", "day-summary", |m| {
        Ok(ResourceBody::Text(format!(
            "summary of {}",
            m.vars.get("day").map(String::as_str).unwrap_or_default()
        )))
    })
    .expect("valid template")
    .with_mime_type("text/plain")
    .with_completer("day", Completer::from_values(["monday", "mars", "tuesday"]))
    .expect("the template has `day`")
}

fn resources(f: &Fixture) -> Resources {
    let guard = PathGuard::new(&f.ws).expect("guard");
    Resources::new()
        .with_resource(Resource::text("test://z-last", "z", "zed"))
        .and_then(|r| {
            r.with_resource(Resource::blob(
                "test://blob",
                "blob",
                vec![1u8, 2, 3],
                "application/octet-stream",
            ))
        })
        .and_then(|r| r.with_template(echo_template()))
        .expect("valid resources")
        .with_workspace(WorkspaceResources::new(guard).with_max_bytes(1024))
}

fn prompts() -> Prompts {
    Prompts::new()
        .with_prompt(
            Prompt::new("review", |args| {
                Ok(vec![
                    Message::user(format!(
                        "review {} for {}",
                        args.get("file").unwrap_or_default(),
                        args.get("focus").unwrap_or("anything")
                    )),
                    Message::user(
                        EmbeddedResource::text("test://context", "ctx")
                            .with_mime_type("text/plain"),
                    ),
                    Message::assistant(Image::png(tool_examples::media::png_rgb(1, 1, [0, 0, 0]))),
                ])
            })
            .with_description("Review a file")
            .with_argument(
                PromptArgument::required("file")
                    .with_completer(Completer::from_values(["main.rs", "mod.rs", "lib.rs"])),
            )
            .with_argument(PromptArgument::optional("focus")),
        )
        .and_then(|p| p.with_prompt(Prompt::new("a-first", |_| Ok(vec![Message::user("a")]))))
        .expect("valid prompts")
}

/// `route` (its `region` parameter declares `x-mcp-header: Region`; counts its runs).
fn registry(runs: Arc<AtomicUsize>) -> Registry {
    let route = ToolDef::builder("route")
        .description("Routes by region.")
        .input_schema(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
            "additionalProperties": false
        }))
        .risk(Risk::Safe)
        .handler(move |_ctx, args: Value| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                format!("routed to {}", args["region"].as_str().unwrap_or_default())
            }
        })
        .build()
        .expect("valid tool");
    Registry::builder().tool(route).build().expect("registry")
}

fn server(f: &Fixture, res: Resources) -> McpServer<ExecutorBackend> {
    let exec = Executor::new(
        Arc::new(registry(Arc::clone(&f.runs))),
        ExecutorConfig::new(&f.ws),
    )
    .expect("executor");
    McpServer::new(ExecutorBackend::new(Arc::new(exec)))
        .with_resources(res)
        .with_prompts(prompts())
}

/// Forwards `notifications/resources/updated` to a channel.
#[derive(Clone)]
struct Updates(mpsc::UnboundedSender<String>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

/// A 2025-11-25 session over an in-process pipe.
async fn session(
    server: McpServer<ExecutorBackend>,
) -> (
    RunningService<RoleClient, Updates>,
    mpsc::UnboundedReceiver<String>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let client = crate::mcp_session::connect(server, Updates(tx)).await;
    (client, rx)
}

/// The JSON-RPC error of a failed request.
fn rpc_error<T: std::fmt::Debug>(r: Result<T, ServiceError>) -> (i32, Value) {
    match r {
        Err(ServiceError::McpError(e)) => (e.code.0, e.data.unwrap_or(Value::Null)),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn file_uri(path: &std::path::Path) -> String {
    format!(
        "file://{}",
        path.to_str().expect("utf-8").replace(' ', "%20")
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn workspace_files_are_listed_sorted_and_only_safe_ones_are_read() {
    let f = fixture();
    let (client, _) = session(server(&f, resources(&f))).await;
    let peer = client.peer().clone();

    let listed = peer.list_resources(None).await.expect("listed");
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    let mut sorted = uris.clone();
    sorted.sort_unstable();
    assert_eq!(uris, sorted, "resources/list is sorted by URI");
    let names: Vec<&str> = listed.resources.iter().map(|r| r.name.as_str()).collect();
    for want in [
        "a file.txt",
        "b.txt",
        "big.bin",
        "raw.bin",
        "sub/c.md",
        "z",
        "blob",
    ] {
        assert!(names.contains(&want), "{want} listed in {names:?}");
    }
    for never in [".hidden", "pipe", "escape.txt", "linked.txt"] {
        assert!(!names.contains(&never), "{never} must not be listed");
    }

    let read = |uri: String| {
        let peer = peer.clone();
        async move {
            peer.read_resource(ReadResourceRequestParams::new(uri))
                .await
        }
    };
    let ok = read(file_uri(&f.ws.join("a file.txt")))
        .await
        .expect("read");
    match &ok.contents[..] {
        [ResourceContents::TextResourceContents {
            text, mime_type, ..
        }] => {
            assert_eq!(text, "hello resources");
            assert_eq!(mime_type.as_deref(), Some("text/plain"));
        }
        other => panic!("one text content, got {other:?}"),
    }
    let raw = read(file_uri(&f.ws.join("raw.bin"))).await.expect("read");
    assert!(matches!(
        &raw.contents[..],
        [ResourceContents::BlobResourceContents { blob, .. }] if tool_core::content::base64_decode(blob) == Some(vec![0, 159, 146, 150])
    ));

    // Escapes: `..`, a path elsewhere, a symlink out, a hard link to a file outside.
    let escapes = [
        format!("file://{}/../outside/secret.txt", f.ws.display()),
        file_uri(&f.outside.join("secret.txt")),
        "file:///etc/passwd".to_owned(),
        file_uri(&f.ws.join("escape.txt")),
        file_uri(&f.ws.join("linked.txt")),
    ];
    for uri in escapes {
        let (code, data) = rpc_error(read(uri.clone()).await);
        assert_eq!(code, -32602, "{uri}");
        assert_eq!(
            data["reason_code"], "path_outside_workspace",
            "{uri}: {data}"
        );
        assert_eq!(data["uri"], uri.as_str());
    }
    // A FIFO is refused at once (the read never waits for a writer); so are directories and
    // files over the cap.
    for name in ["pipe", "sub", "big.bin"] {
        let uri = file_uri(&f.ws.join(name));
        let (code, data) = rpc_error(read(uri.clone()).await);
        assert_eq!(code, -32602, "{name}: {data}");
        assert_eq!(data["uri"], uri.as_str());
    }
    // Not file URIs this server serves.
    for uri in [
        "file://other-host/x".to_owned(),
        format!("{}?q=1", file_uri(&f.ws.join("b.txt"))),
        "file:///%ZZ".to_owned(),
        "no scheme".to_owned(),
    ] {
        let (code, data) = rpc_error(read(uri.clone()).await);
        assert_eq!(code, -32602, "{uri}: {data}");
    }
    // Unknown: the 2025-11-25 resource-not-found code, with the URI.
    for uri in [
        file_uri(&f.ws.join("missing.txt")),
        "test://nowhere".to_owned(),
    ] {
        let (code, data) = rpc_error(read(uri.clone()).await);
        assert_eq!(code, -32002, "{uri}");
        assert_eq!(data["uri"], uri.as_str());
    }
    // The outside file was never changed or exposed.
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).expect("secret"),
        CANARY
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fixed_resources_templates_and_their_completion() {
    let f = fixture();
    let (client, _) = session(server(&f, resources(&f))).await;
    let peer = client.peer().clone();
    let blob = peer
        .read_resource(ReadResourceRequestParams::new("test://blob"))
        .await
        .expect("read");
    assert!(matches!(
        &blob.contents[..],
        [ResourceContents::BlobResourceContents { blob, mime_type, .. }]
            if blob == "AQID" && mime_type.as_deref() == Some("application/octet-stream")
    ));
    let templates = peer.list_resource_templates(None).await.expect("templates");
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "test://notes/{day}/summary"
    );
    let day = peer
        .read_resource(ReadResourceRequestParams::new(
            "test://notes/2026-01-02/summary",
        ))
        .await
        .expect("read");
    assert!(matches!(
        &day.contents[..],
        [ResourceContents::TextResourceContents { text, uri, .. }]
            if text == "summary of 2026-01-02" && uri == "test://notes/2026-01-02/summary"
    ));
    // A value with a `/` (encoded or not) does not match the template.
    for uri in ["test://notes/a/b/summary", "test://notes/a%2Fb/summary"] {
        let (code, _) = rpc_error(
            peer.read_resource(ReadResourceRequestParams::new(uri))
                .await,
        );
        assert_eq!(code, -32002, "{uri}");
    }
    let done = peer
        .complete(CompleteRequestParams::new(
            Reference::for_resource("test://notes/{day}/summary"),
            ArgumentInfo::new("day", "m"),
        ))
        .await
        .expect("completed");
    assert_eq!(done.completion.values, ["monday", "mars"]);
    assert_eq!(done.completion.has_more, Some(false));
    let (code, _) = rpc_error(
        peer.complete(CompleteRequestParams::new(
            Reference::for_resource("test://notes/{day}/summary"),
            ArgumentInfo::new("month", ""),
        ))
        .await,
    );
    assert_eq!(code, -32602);
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_are_sorted_and_refuse_bad_arguments_before_they_are_built() {
    let f = fixture();
    let (client, _) = session(server(&f, resources(&f))).await;
    let peer = client.peer().clone();
    let listed = peer.list_prompts(None).await.expect("listed");
    let names: Vec<&str> = listed.prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a-first", "review"]);
    let review = &listed.prompts[1];
    let args = review.arguments.as_ref().expect("arguments");
    assert_eq!(
        args.iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect::<Vec<_>>(),
        [("file", Some(true)), ("focus", Some(false))]
    );

    let get = |args: Value| {
        let peer = peer.clone();
        async move {
            let mut p = GetPromptRequestParams::new("review");
            p.arguments = args.as_object().cloned();
            peer.get_prompt(p).await
        }
    };
    let got = get(json!({"file": "main.rs"})).await.expect("built");
    let v = serde_json::to_value(&got.messages).expect("json");
    assert_eq!(v[0]["content"]["text"], "review main.rs for anything");
    assert_eq!(v[1]["content"]["type"], "resource");
    assert_eq!(v[1]["content"]["resource"]["uri"], "test://context");
    assert_eq!(v[2]["role"], "assistant");
    assert_eq!(v[2]["content"]["type"], "image");
    assert_eq!(v[2]["content"]["mimeType"], "image/png");

    let (code, data) = rpc_error(get(json!({"focus": "style"})).await);
    assert_eq!((code, &data["missing"]), (-32602, &json!(["file"])));
    assert_eq!(data["reason_code"], "invalid_arguments");
    let (code, data) = rpc_error(get(json!({"file": "a", "path": "/etc/passwd"})).await);
    assert_eq!((code, &data["unknown"]), (-32602, &json!(["path"])));
    let (code, _) = rpc_error(get(json!({"file": 42})).await);
    assert_eq!(code, -32602);
    let (code, data) = rpc_error(
        peer.get_prompt(GetPromptRequestParams::new("no-such-prompt"))
            .await,
    );
    assert_eq!((code, &data["name"]), (-32602, &json!("no-such-prompt")));

    let done = peer
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("review"),
            ArgumentInfo::new("file", "m"),
        ))
        .await
        .expect("completed");
    assert_eq!(done.completion.values, ["main.rs", "mod.rs"]);
    assert_eq!(done.completion.total, Some(2));
}

#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)]
async fn subscribed_sessions_hear_of_updates_until_they_unsubscribe() {
    let f = fixture();
    let res = resources(&f);
    let (client, mut updates) = session(server(&f, res.clone())).await;
    let peer = client.peer().clone();
    let (code, data) = rpc_error(
        peer.subscribe(SubscribeRequestParams::new("test://nowhere"))
            .await,
    );
    assert_eq!((code, &data["uri"]), (-32002, &json!("test://nowhere")));
    let (code, _) = rpc_error(
        peer.subscribe(SubscribeRequestParams::new(file_uri(
            &f.ws.join("escape.txt"),
        )))
        .await,
    );
    assert_eq!(code, -32602);

    peer.subscribe(SubscribeRequestParams::new("test://z-last"))
        .await
        .expect("subscribed");
    res.notify_updated("test://blob");
    res.notify_updated("test://z-last");
    assert_eq!(next(&mut updates).await, "test://z-last");

    peer.unsubscribe(UnsubscribeRequestParams::new("test://z-last"))
        .await
        .expect("unsubscribed");
    peer.subscribe(SubscribeRequestParams::new("test://blob"))
        .await
        .expect("subscribed");
    res.notify_updated("test://z-last");
    res.notify_updated("test://blob");
    // Updates are forwarded in order: had the unsubscribed one been sent, it would come first.
    assert_eq!(next(&mut updates).await, "test://blob");
}

/// The next update; a bound so a broken server fails the test instead of hanging it.
async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("an update arrives")
        .expect("the channel is open")
}

fn meta() -> Value {
    test_support::http::client_meta("raw-test", false)
}

/// POST one 2026-07-28 request with these extra headers; the HTTP status and the JSON-RPC reply.
async fn post(
    server: &Server,
    method: &str,
    mut params: Map<String, Value>,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    params.insert("_meta".into(), meta());
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let reply = test_support::http::mcp_post(server.addr, method, headers, &body).await;
    // The reply is one JSON object, possibly chunked or as an SSE `data:` line: find it.
    (reply.status, reply.rpc().unwrap_or(Value::Null))
}

fn params(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn stateless_lists_carry_caching_hints_and_unknown_uris_are_invalid_params() {
    let f = fixture();
    let server = serve_only(server(&f, resources(&f))).await;
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let (status, reply) = post(&server, method, Map::new(), &[]).await;
        assert_eq!(status, 200, "{method}: {reply}");
        let result = &reply["result"];
        assert!(result["ttlMs"].as_u64().is_some(), "{method}: {result}");
        assert_eq!(result["cacheScope"], "private", "{method}");
    }
    let uri = "test://z-last";
    let (_, reply) = post(
        &server,
        "resources/read",
        params(json!({"uri": uri})),
        &[("Mcp-Name", uri)],
    )
    .await;
    assert_eq!(reply["result"]["contents"][0]["text"], "zed");
    assert!(reply["result"]["ttlMs"].as_u64().is_some());
    assert_eq!(reply["result"]["cacheScope"], "private");

    let missing = "test://nonexistent-resource";
    let (_, reply) = post(
        &server,
        "resources/read",
        params(json!({"uri": missing})),
        &[("Mcp-Name", missing)],
    )
    .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["data"]["uri"], missing);

    // Discovery declares resources and prompts, and no `subscribe` (not a stateless method).
    let (_, reply) = post(&server, "server/discover", Map::new(), &[]).await;
    let caps = &reply["result"]["capabilities"];
    assert!(
        caps["prompts"].is_object() && caps["resources"].is_object(),
        "{caps}"
    );
    assert!(caps["resources"].get("subscribe").is_none(), "{caps}");
    assert!(caps["completions"].is_object());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_x_mcp_header_parameter_must_match_its_header_or_the_tool_does_not_run() {
    let f = fixture();
    let server = serve_only(server(&f, resources(&f))).await;
    let call = |region: Value, headers: Vec<(&'static str, String)>| {
        let server = &server;
        async move {
            let mut h: Vec<(&str, &str)> = vec![("Mcp-Name", "route")];
            h.extend(headers.iter().map(|(k, v)| (*k, v.as_str())));
            post(
                server,
                "tools/call",
                params(json!({"name": "route", "arguments": {"region": region}})),
                &h,
            )
            .await
        }
    };
    let (status, reply) = call(
        json!("eu-west"),
        vec![("Mcp-Param-Region", "eu-west".into())],
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "routed to eu-west");
    // Base64-wrapped values are decoded before the comparison.
    let (status, _) = call(
        json!("Hello"),
        vec![("Mcp-Param-Region", "=?base64?SGVsbG8=?=".into())],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);

    for (label, headers) in [
        ("mismatch", vec![("Mcp-Param-Region", "us-east".to_owned())]),
        ("missing", vec![]),
        (
            "bad base64",
            vec![("Mcp-Param-Region", "=?base64?SGVsbG8?=".to_owned())],
        ),
    ] {
        let (status, reply) = call(json!("eu-west"), headers).await;
        assert_eq!(status, 400, "{label}: {reply}");
        assert_eq!(reply["error"]["code"], -32020, "{label}: {reply}");
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 2, "a refused call never ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_an_invalid_x_mcp_header_declaration_does_not_start() {
    let f = fixture();
    let bad = ToolDef::builder("bad")
        .description("Declares a header on an array.")
        .input_schema(json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Tags"}}
        }))
        .risk(Risk::Safe)
        .handler(|_ctx, _args: Value| async move { "never".to_owned() })
        .build()
        .expect("a valid tool otherwise");
    let exec = Executor::new(
        Arc::new(Registry::builder().tool(bad).build().expect("registry")),
        ExecutorConfig::new(&f.ws),
    )
    .expect("executor");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let served = tool_core::mcp::serve_http_server_on(
        listener,
        McpServer::new(ExecutorBackend::new(Arc::new(exec))),
        CancellationToken::new(),
    )
    .await;
    assert!(
        matches!(&served, Err(ServeError::Invalid(m)) if m.contains("bad") && m.contains("primitive")),
        "{served:?}"
    );
}
