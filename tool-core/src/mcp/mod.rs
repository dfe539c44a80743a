//! MCP: serve tools over stdio and streamable HTTP, and guard a third-party MCP server.
//!
//! The server side speaks MCP through a [`McpBackend`]: `tools/list` is whatever the backend lists,
//! and every `tools/call` is handed to the backend with a [`McpCallContext`] that carries the
//! client's progress token, the call's cancellation and an approver (MCP elicitation when the
//! client supports it, denial otherwise). Refusals and failures become `isError: true` results
//! whose text starts with the reason code; an unknown tool is a JSON-RPC `-32602` error.
//! Successful results become MCP content ([`content`]: text, structured content, and the
//! tool's image, audio and resource blocks); a tool's log messages become
//! `notifications/message` for a request that asked for them ([`logging`]).
//!
//! [`ExecutorBackend`] is the backend to serve: every call goes through the [`Executor`]'s full
//! pipeline, one executor session per client connection.
//!
//! [`Executor`]: crate::executor::Executor

mod backend;
pub mod content;
mod executor_backend;
pub mod logging;
pub mod proxy;
mod server;

pub use backend::{McpBackend, McpCallContext, McpCallOutcome, SERVER_NAME, SERVER_VERSION};
pub use executor_backend::ExecutorBackend;
pub use server::{serve_http, serve_http_on, serve_stdio, McpServer, ServeError};
