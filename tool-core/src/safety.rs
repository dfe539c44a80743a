//! The static script scan as the executor's script gate (feature `safety`).
//!
//! The scanner is its own crate, `tool-safety`, which knows nothing of the executor; everything
//! it exports is re-exported here, so `tool_core::safety::Scanner` and friends are the scanner's
//! own types. This module adds the glue that needs kernel types: [`ScannerGate`] (the scanner as a
//! [`ScriptGate`](crate::executor::ScriptGate)), [`audit_fields`] (a scan as the call's audit
//! record) and [`GuardedCodeExecutor`] (code blocks scanned before they run).
//!
//! This is not a sandbox: encodings, aliases, reflection and multi-stage downloads can evade a
//! static scan. Run untrusted code in an isolated process with least privilege as well.

mod executor;
mod record;
mod scanner_gate;

pub use tool_safety::*;

pub use crate::approval::ApprovalStatus;
pub use executor::{
    CodeBlock, CodeExecError, CodeExecutor, CodeOutput, GuardedCodeExecutor, ReviewApprover,
};
pub use record::{audit_fields, gate_audit, SafetyAuditFields};
pub use scanner_gate::ScannerGate;
