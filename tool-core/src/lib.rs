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
//! - `safety`: the static bash/Python scanner (the `tool-safety` crate) as the executor's script
//!   gate, re-exported as `tool_core::safety`; without it, tools with script arguments are
//!   refused;
//! - `cli`: the command line, `tool_core::cli`; its `scan` command, and the script gate of the
//!   commands that run tools, need `safety` as well;
//! - `mcp`: the MCP server and proxy, `tool_core::mcp`.
//!
//! The rules the `#[tool]` macro checks at compile time (risk names, timeouts, tool names) come
//! from the `tool-rules` crate, which the runtime uses too.
#![warn(missing_docs)]

pub mod approval;
pub mod audit;
pub mod call;
pub mod context;
pub mod decl;
pub mod executor;
pub mod guard;
pub mod outcome;
pub mod pin;
pub mod registry;
pub mod schema;

#[cfg(feature = "safety")]
pub mod safety;

#[cfg(feature = "cli")]
pub mod cli;

#[cfg(feature = "mcp")]
pub mod mcp;

pub use context::{ContextModifier, Progress, SessionState, StateKey, ToolContext};
pub use decl::{Risk, ScriptLang, ToolDecl};
pub use executor::{CallResult, CallStatus, Executor, ExecutorConfig, Session};
pub use guard::path::WorkspacePath;
pub use outcome::{IntoToolOutcome, Json, Modified, ReasonCode, ToolOutcome};
pub use registry::{Registry, RegistryError, ToolDef};
pub use tool_macros::tool;

#[doc(hidden)]
pub mod __private;

/// The README's example, compiled and run as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
