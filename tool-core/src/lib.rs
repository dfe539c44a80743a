//! Declared, schema-checked, guarded tools for LLM agents.
//!
//! A model's tool call is an untrusted request, never an instruction. A tool *declares* what it is
//! with `#[tool]` (risk, path arguments, script arguments, concurrency, timeout); the compiler
//! rejects declarations that contradict the code; the executor enforces every declaration before
//! the handler runs.
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
pub mod reason;
pub mod registry;
pub mod safety;
pub mod schema;
pub mod status;

#[cfg(feature = "cli")]
pub mod cli;

#[cfg(feature = "mcp")]
pub mod mcp;

pub use context::{ContextModifier, Progress, SessionState, StateKey, ToolContext};
pub use decl::{Risk, ScriptLang, ToolDecl};
pub use executor::{CallInput, CallOptions, CallResult, Executor, ExecutorConfig, Session};
pub use guard::path::WorkspacePath;
pub use outcome::{IntoToolOutcome, Json, Modified, ToolOutcome};
pub use reason::ReasonCode;
pub use registry::{Registry, RegistryError, ToolDef};
pub use status::{CallStatus, Step};
pub use tool_macros::tool;

#[doc(hidden)]
pub mod __private;

/// The README's example, compiled and run as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
