//! Serving: stdio and streamable HTTP, each incoming message checked before rmcp decodes it.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use super::backend::McpBackend;
use super::http_guard::{check_body, MAX_BODY_BYTES};
use super::stdio_guard::guarded;

use super::server::{McpServer, ServeError};

/// Serve `backend` over stdin/stdout until the client closes the connection. Each incoming line
/// is checked first: malformed JSON, duplicate keys and non-object `arguments` are answered with
/// their JSON-RPC errors and never reach the server.
pub async fn serve_stdio<B: McpBackend>(backend: B) -> Result<(), ServeError> {
    serve_stdio_server(McpServer::new(backend)).await
}

/// [`serve_stdio`] for a configured server (resources, prompts).
pub async fn serve_stdio_server<B: McpBackend>(server: McpServer<B>) -> Result<(), ServeError> {
    server.check()?;
    let (input, output) = rmcp::transport::stdio();
    let (server_in, server_out, writer) = guarded(input, output);
    let served = match server.serve((server_in, server_out)).await {
        Ok(service) => service
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| ServeError::Task(e.to_string())),
        Err(e) => Err(ServeError::Handshake(e.to_string())),
    };
    // The server's end is gone: what it wrote reaches stdout before the process may exit (a
    // client that closes its input right after a request still gets the reply).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), writer).await;
    served
}

/// Serve `backend` over streamable HTTP at `http://ADDR/mcp` until the process ends.
///
/// Requests whose `Host` header is not a loopback name, or whose `Origin` header (when present) is
/// not a loopback origin, are refused (DNS rebinding protection). Clients of revision 2026-07-28
/// are served statelessly; older clients get a session from `initialize` on.
pub async fn serve_http<B: McpBackend>(backend: B, addr: SocketAddr) -> Result<(), ServeError> {
    serve_http_server(McpServer::new(backend), addr).await
}

/// [`serve_http`] for a configured server (resources, prompts).
pub async fn serve_http_server<B: McpBackend>(
    server: McpServer<B>,
    addr: SocketAddr,
) -> Result<(), ServeError> {
    let listener = listen_http(&server, addr).await?;
    serve_http_server_on(listener, server, CancellationToken::new()).await
}

/// Checks what `server` serves, then binds `addr` for it (port 0: a port the system chooses; the
/// listener's `local_addr` names it), for [`serve_http_server_on`]. A program that says where it
/// serves says so after this, so it never claims an address it did not get; a bind that fails
/// names the address.
pub async fn listen_http<B: McpBackend>(
    server: &McpServer<B>,
    addr: SocketAddr,
) -> Result<tokio::net::TcpListener, ServeError> {
    server.check()?;
    tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        ServeError::Io(std::io::Error::new(
            e.kind(),
            format!("cannot listen on {addr}: {e}"),
        ))
    })
}

/// The origins a browser page may send requests from: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// Serve `backend` over streamable HTTP at `/mcp` on a bound listener until `shutdown` fires.
pub async fn serve_http_on<B: McpBackend>(
    listener: tokio::net::TcpListener,
    backend: B,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    serve_http_server_on(listener, McpServer::new(backend), shutdown).await
}

/// [`serve_http_on`] for a configured server (resources, prompts).
pub async fn serve_http_server_on<B: McpBackend>(
    listener: tokio::net::TcpListener,
    server: McpServer<B>,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    server.check()?;
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    let service: StreamableHttpService<McpServer<B>, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.for_connection()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    // One service for every request, shared: rmcp's own `Service` impl clones it (and its
    // config: the allowed hosts and origins) twice per request.
    let service = Arc::new(service);
    let mcp = axum::routing::any(move |request: axum::extract::Request| {
        let service = Arc::clone(&service);
        async move { service.handle(request).await }
    });
    let router = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn(check_body));
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await?;
    Ok(())
}
