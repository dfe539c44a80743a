//! Raw stateless (2026-07-28) JSON-RPC over HTTP for the MCP tests that check wire shapes: one
//! request per connection, with the routing headers the transport checks.

use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use tool_core::mcp::{McpBackend, McpServer};

/// An MCP server on a free loopback port for one test, with its workspace; stopped when
/// dropped.
pub struct Server {
    pub addr: std::net::SocketAddr,
    stop: CancellationToken,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves `server` (whose workspace is `dir`) over streamable HTTP until the handle drops.
pub async fn serve<B: McpBackend>(server: McpServer<B>, dir: tempfile::TempDir) -> Server {
    serve_keeping(server, Some(dir)).await
}

/// [`serve`] for a server whose workspace the test keeps itself.
pub async fn serve_only<B: McpBackend>(server: McpServer<B>) -> Server {
    serve_keeping(server, None).await
}

async fn serve_keeping<B: McpBackend>(
    server: McpServer<B>,
    dir: Option<tempfile::TempDir>,
) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let addr = listener.local_addr().expect("address");
    let stop = CancellationToken::new();
    tokio::spawn(tool_core::mcp::serve_http_server_on(
        listener,
        server,
        stop.clone(),
    ));
    Server {
        addr,
        stop,
        _dir: dir,
    }
}

/// An HTTP status and the JSON-RPC response it carried (`Null` when none).
pub struct Reply {
    pub status: u16,
    pub message: Value,
}

impl Reply {
    /// The `result`, asserting there is one.
    pub fn result(&self) -> &Value {
        assert!(
            self.message.get("result").is_some(),
            "expected a result: {}",
            self.message
        );
        &self.message["result"]
    }

    /// The JSON-RPC error code, asserting there is an error.
    pub fn error_code(&self) -> i64 {
        self.message["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error: {}", self.message))
    }
}

/// One stateless request `method` with `params`, declaring `caps` in its `_meta`. `name` is the
/// `Mcp-Name` header (the tool, prompt or task the body names).
pub async fn post(
    addr: std::net::SocketAddr,
    method: &str,
    name: Option<&str>,
    caps: Value,
    params: Value,
) -> Reply {
    post_with(addr, method, name, caps, params, &[]).await
}

/// [`post`] with more headers (`Authorization`, …).
pub async fn post_with(
    addr: std::net::SocketAddr,
    method: &str,
    name: Option<&str>,
    caps: Value,
    params: Value,
    headers: &[(&str, &str)],
) -> Reply {
    let mut params = params;
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in extra {
            meta[k] = v.clone();
        }
    }
    params["_meta"] = meta;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let mut all: Vec<(&str, &str)> = name.map(|n| ("Mcp-Name", n)).into_iter().collect();
    all.extend_from_slice(headers);
    let reply = test_support::http::mcp_post(addr, method, &all, &body).await;
    // The JSON-RPC response: a JSON body, or the SSE event (in chunks or not) that carries it.
    Reply {
        status: reply.status,
        message: reply.rpc().unwrap_or(Value::Null),
    }
}

/// An accepted form answer.
pub fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}
