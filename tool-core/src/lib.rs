//! Declared, schema-checked, guarded tools for LLM agents.
//!
//! A model's tool call is an untrusted request, never an instruction. A tool *declares* what it is
//! with `#[tool]` (risk, path arguments, script arguments, concurrency, timeout); the compiler
//! rejects declarations that contradict the code; the executor enforces every declaration before
//! the handler runs.
//!
//! This crate is the kernel: declarations, registry, executor, guards, schema export and
//! pinning. What not every program needs is behind cargo features, all off by default:
//!
//! - `safety`: the static bash/Python scanner (the `tool-safety` crate) as the executor's default
//!   script gate, judged against the executor's workspace, re-exported as `tool_core::safety`;
//!   without it, [`Executor::new`] refuses a registry with tools that take scripts, naming the
//!   feature;
//! - `cli`: the command line, `tool_core::cli`; its `scan` command, and the script gate of the
//!   commands that run tools, need `safety` as well;
//! - `mcp`: the MCP server and proxy, `tool_core::mcp`;
//! - `jsonschema` (turned on by `cli` and `mcp`): the general JSON Schema engine, for dynamic
//!   tools, proxied MCP tools, `dump --from` and any `#[tool]` schema outside what the built-in
//!   argument checker covers (see [`schema::Validator`]); without it such a schema is refused
//!   when the registry is built.
//!
//! Where the pieces an application wires in live: the executor's approver is an
//! [`approval::Approver`] (a closure through [`approval::from_fn`]; the trait's future is
//! [`approval::BoxFuture`]); its audit log an [`audit::AuditSink`] such as
//! [`audit::JsonlAuditSink`] (one JSON line per call); with `safety`, the scanner as script gate
//! is `safety::ScannerGate`.
//! Handlers and the programs they start are confined by the kernel to what the declaration
//! allows (Landlock, seccomp, namespaces, on Linux): see [`sandbox`] and [`process`].
//!
//! The rules the `#[tool]` macro checks at compile time (risk names, timeouts, tool names) come
//! from the `tool-rules` crate, which the runtime uses too.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod approval;
pub mod audit;
pub mod call;
pub mod content;
pub mod context;
pub mod decl;
pub mod executor;
pub mod gate;
pub mod guard;
pub mod input;
pub mod outcome;
pub mod pin;
pub mod process;
pub mod reason;
pub mod registry;
pub mod reply;
pub mod resource;
pub mod sandbox;
pub mod schema;
pub mod status;

#[cfg(feature = "safety")]
#[cfg_attr(docsrs, doc(cfg(feature = "safety")))]
pub mod safety;

#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;

#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod store;

pub use context::{ContextModifier, LogLevel, Progress, SessionState, StateKey, ToolContext};
pub use decl::{InputSchema, Risk, ScriptLang, ScriptSetup, ToolDecl};
pub use executor::{CallInput, CallOptions, CallResult, Executor, ExecutorConfig, Session};
pub use guard::path::WorkspacePath;
pub use outcome::{IntoToolOutcome, Json, Modified, ToolError, ToolErrorCode, ToolOutcome};
pub use reason::ReasonCode;
pub use registry::{Registry, RegistryError, ToolDef};
pub use resource::State;
pub use status::{CallStatus, Step};
/// A `main` whose first act is the sandbox helper's dispatch (see [`sandbox::dispatch_helper`]);
/// on an `async fn main` it replaces `#[tokio::main]`.
pub use tool_macros::main;
#[doc = include_str!("tool.md")]
pub use tool_macros::tool;

/// `schemars`, the JSON Schema generator behind every schema here, for the derive below.
pub use schemars;

/// The JSON Schema of a type of your own, for `Json<T>` outputs and parameters: derive it
/// through this re-export, pointing the derive at it with `#[schemars(crate = "tool_core::schemars")]`,
/// and the application needs no `schemars` dependency of its own.
///
/// ```
/// use tool_core::{tool, Json};
///
/// #[derive(serde::Serialize, tool_core::JsonSchema)]
/// #[schemars(crate = "tool_core::schemars")]
/// struct Hit {
///     line: u32,
///     text: String,
/// }
///
/// /// Find the lines that mention a word.
/// #[tool(risk = "read_only")]
/// fn find(word: String) -> Json<Vec<Hit>> {
///     Json(vec![Hit { line: 1, text: format!("a line with {word}") }])
/// }
/// ```
pub use schemars::JsonSchema;

mod __private;

/// Used by code `#[tool]` generates, not public API. The name carries this crate's version, and
/// `tool-macros` derives the path it generates from its own version: a `tool-macros` of another
/// version fails to compile (``cannot find `__private_…` in `tool_core` ``) instead of generating
/// code against a runtime it was not written for. Renamed with every release; a test checks it.
#[doc(hidden)]
pub mod __private_0_1_0 {
    #[doc(hidden)]
    pub use crate::__private::*;

    /// This module's path, for the test that keeps its name in step with the crate version.
    #[cfg(test)]
    pub(crate) const PATH: &str = module_path!();
}

// The README's Rust blocks are doctests of `tool-examples`, which has every feature and the
// example tools they name.
