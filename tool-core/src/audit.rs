//! One audit event per call, written before the call returns.
//!
//! Events say what was decided, never what was passed: arguments appear only as the SHA-256 of
//! their canonical bytes, so secrets in arguments never reach the log. Every other string that
//! came from outside the executor (call ids, tool names, effect targets) passes one redaction,
//! [`AuditEvent::redacted`], before any sink sees it.
//!
//! [`JsonlAuditSink`] chains its lines: each carries `seq` and the SHA-256 of the line before it
//! (`prev_sha256`), and [`verify_chain`] names the first line that was edited, deleted,
//! reordered or inserted. Anyone who can write the file can recompute that chain, cut its tail
//! or empty it; opened with an [`AuditKey`] ([`JsonlAuditSink::open_keyed`]) the log is keyed
//! and forward-secure (see the `keyed` module docs and [`verify_keyed`]), which catches those
//! too.

mod chain;
mod event;
mod jsonl;
mod key;
mod keyed;
#[cfg(test)]
mod keyed_tests;
mod redact;

pub use redact::{audit_call_id, redact_text};
pub(crate) use redact::{AuditId, AuditText};

pub use jsonl::{AuditLogError, JsonlAuditSink};
pub use key::{AuditKey, AuditKeyError, MIN_KEY_BYTES};
pub use keyed::{
    state_path, verify_keyed, KeyedBreak, KeyedError, KeyedSummary, DEFAULT_EPOCH_LINES,
};

pub use chain::{
    line_sha256, verify_chain, verify_chain_summary, ChainBreak, ChainError, ChainSummary,
    GENESIS_SHA256,
};

pub use event::{
    timestamp_now, AuditEvent, AuditSink, MemoryAuditSink, NoopAuditSink, SafetyAudit,
};
