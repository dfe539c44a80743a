//! MCP: serve tools over stdio and streamable HTTP, and guard a third-party MCP server.
//!
//! The server speaks revisions 2026-07-28 (stateless: version and capabilities in each request's
//! `_meta`, `server/discover`) and 2025-11-25 (a session from `initialize` on), chosen per request.
//! It speaks MCP through a [`McpBackend`]: `tools/list` is what the backend lists, sorted by name,
//! and every `tools/call` is handed to the backend with a [`McpCallContext`] that carries the
//! client's progress token, the call's cancellation and an approver: on 2026-07-28 an
//! input-required result with a signed, single-use `requestState`; on 2025-11-25 an elicitation
//! request; denial for a client that can do neither. Refusals and failures become `isError: true`
//! results whose text starts with the reason code and whose `structuredContent` and `_meta` carry
//! it as [`REASON_CODE_KEY`]; an unknown tool is a JSON-RPC `-32602` error. Every incoming message
//! is checked before rmcp decodes it (malformed JSON, duplicate keys, non-object `arguments`).
//! Successful results become MCP content ([`content`]: text, structured content, and the
//! tool's image, audio and resource blocks); a tool's log messages become
//! `notifications/message` for a request that asked for them ([`logging`]).
//!
//! A tool's own questions ([`crate::input`]) travel the same two ways: input-required results
//! whose state carries the answers so far ([`MAX_INPUT_ROUNDS`] rounds at most), or
//! server-to-client requests.
//!
//! Tools declared with [`tasks::TaskTools`] are also served as tasks (the
//! `io.modelcontextprotocol/tasks` extension) to clients that declare it ([`tasks`]).
//!
//! Running tasks and outstanding input-required rounds are bounded server-wide and, below that,
//! per client ([`ClientQuotas`], [`quota`]): a client at its quota is refused with
//! `client_quota_exceeded`, and the others are still served.
//!
//! [`ExecutorBackend`] is the backend to serve: every call goes through the [`Executor`]'s full
//! pipeline, one executor session per client connection (per request for a stateless client).
//!
//! [`Executor`]: crate::executor::Executor

mod backend;
mod body_scan;
mod catalog;
pub mod completion;
pub mod content;
mod elicitation;
mod executor_backend;
mod fleet;
pub mod headers;
mod http_guard;
mod input;
mod input_required;
pub mod logging;
mod outcome;
mod progress;
pub mod prompts;
pub mod proxy;
pub mod quota;
pub mod resources;
mod server;
pub mod state_key;
mod stateless;
mod stdio_guard;
mod task_calls;
mod task_fleet;
pub mod tasks;
mod tool_index;
mod transport;

pub use backend::{
    McpBackend, McpCallContext, McpCallOutcome, Named, ServerInfo, SERVER_NAME, SERVER_VERSION,
};
pub use executor_backend::ExecutorBackend;
pub use fleet::{check_replica_name, default_replica_name, MAX_REPLICA_NAME};
pub use input_required::{MAX_INPUT_ROUNDS, MAX_STATE_ANSWER_BYTES};
pub use outcome::REASON_CODE_KEY;
pub use quota::ClientQuotas;
pub use server::{McpServer, ServeError};
pub use transport::{listen_http, serve_http, serve_http_on, serve_stdio};
pub use transport::{serve_http_server, serve_http_server_on, serve_stdio_server};
