//! The executor: every call goes down the same steps, one module each, and any step can refuse
//! with a stable reason code and the [`Step`] that refused it. A refused call never reaches the
//! handler.
//!
//! | step | module | refuses with |
//! |---|---|---|
//! | `budget` | `budget.rs` | `error_budget_exhausted` |
//! | `parse` | `parse.rs` (parsers in [`crate::call`]) | `malformed_call` |
//! | `lookup` | `lookup.rs` | `unknown_tool` |
//! | `filters` | `filters.rs` | `invalid_arguments` |
//! | `validate` | `validate.rs` | `invalid_arguments` |
//! | `guard` | `guard.rs` | `path_outside_workspace`, `invalid_arguments` |
//! | `permissions` | `permissions.rs` | `permission_denied` |
//! | `script_gate` | `script_gate.rs` (the [`ScriptGate`] seam) | `safety_denied`, `review_required` |
//! | `approve` | `approve.rs` | `approval_denied`, `review_required` |
//! | `run` | `run.rs` (confinement: [`crate::sandbox`]) | `sandbox_unavailable`, `timeout`, `cancelled`, `panicked`, `tool_error` |
//! | `outcome` | `outcome.rs` (result, error budget, audit) | `modifier_conflict` (batches) |
//!
//! `pipeline.rs` lists the steps in order ([`Executor::execute`]); `typed.rs` is the typed path,
//! which reads a `#[tool]`'s arguments straight into its parameter types where that checks what
//! the schema says and no other step needs the JSON arguments; `batch.rs` runs a model turn's
//! calls through the same steps ([`Executor::run_batch`]). The executor's own types live in
//! `engine.rs` ([`Executor`]), `config.rs` ([`ExecutorConfig`]), `options.rs` ([`CallOptions`],
//! [`CallInput`]), `session.rs` ([`Session`]), `result.rs` ([`CallResult`]) and `state.rs` (what
//! the steps share about one call); this file only declares and re-exports them.
//!
//! Error budget: see the `budget` step: every result other than `ok` counts as a failure except
//! `cancelled` and the budget refusal itself; a success resets the count; a spent budget refuses
//! calls until [`Session::reset_budget`].

mod approve;
mod batch;
mod budget;
mod config;
mod engine;
mod filters;
mod guard;
mod lookup;
mod options;
mod outcome;
mod output;
mod parse;
mod permissions;
mod pipeline;
mod result;
mod run;
mod script_gate;
mod session;
mod state;
mod typed;
mod validate;

pub use crate::gate::{
    GateAudit, GateEffect, GateRiskLevel, GateVerdict, ScanDecision, ScanMode, ScriptGate,
    MAX_AUDIT_EFFECTS, MAX_AUDIT_TARGET_CHARS,
};
pub use batch::BatchOptions;
pub use config::{
    ArgumentFilter, ExecutorConfig, ToolLimits, DEFAULT_ERROR_BUDGET, DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_EDIT_ROUNDS, DEFAULT_OUTPUT_CAP, DEFAULT_TIMEOUT,
};
pub use engine::{Executor, ExecutorError};
pub use options::{CallInput, CallOptions};
pub use result::CallResult;
pub use session::Session;

pub use crate::status::{CallStatus, Step};

#[cfg(test)]
mod tests;
