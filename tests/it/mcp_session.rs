//! In-process 2025-11-25 sessions: our MCP server and an rmcp client joined by a pipe, and the
//! client that answers whatever its server asks it (elicitation, sampling, roots).
// rmcp marks sampling and roots deprecated (SEP-2577); the 2025-11-25 revision still has them.
#![allow(deprecated)]

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData, Implementation,
    ListRootsResult, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use tool_core::mcp::{McpBackend, McpServer};

/// `server` served on one end of an in-process pipe, `handler` connected on the other.
pub(crate) async fn connect<B: McpBackend, H: ClientHandler>(
    server: McpServer<B>,
    handler: H,
) -> RunningService<RoleClient, H> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    handler.serve(client_io).await.expect("the client connects")
}

/// A 2025-11-25 client that declares `caps` and answers every question: a form with `form`, a
/// sampling request with one assistant message, a roots request with `file:///r`.
pub(crate) struct Answering {
    pub name: &'static str,
    pub caps: Value,
    pub form: Value,
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let caps: ClientCapabilities = serde_json::from_value(self.caps.clone()).expect("caps");
        ClientConfig::new(caps, Implementation::new(self.name, "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.form.clone()))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        serde_json::from_value(json!({
            "role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "m"
        }))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        serde_json::from_value(json!({"roots": [{"uri": "file:///r"}]}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}
