//! What the replicas of one server share: the [`Store`], this replica's name, and the refusal a
//! request gets when the store fails.
//!
//! A server built without a store keeps its used states and outstanding rounds in a
//! [`MemoryStore`] of its own, and its tasks in its own memory: one replica. With
//! [`McpServer::with_store`](super::McpServer::with_store) (`serve --store URL`) every replica
//! that shares the store and the state key ([`super::state_key`]) refuses a state another one
//! already redeemed, counts its clients' outstanding rounds and running tasks against the same
//! quotas, and publishes its tasks, so that a task started through one replica is read, answered
//! and cancelled through any other ([`super::task_fleet`]).

use std::sync::Arc;

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::json;

use crate::reason::ReasonCode;
use crate::store::{MemoryStore, Store, StoreError};

/// The `error.data` key of the reason code (the server's `REASON_CODE_KEY`).
const REASON_CODE_KEY: &str = "reason_code";

/// The longest replica name accepted.
pub const MAX_REPLICA_NAME: usize = 64;

/// The store and this replica's place among the others.
#[derive(Debug, Clone)]
pub(super) struct Fleet {
    pub(super) store: Arc<dyn Store>,
    /// This replica's name: in task leases, logs and the audit.
    pub(super) replica: String,
    /// `true` when the store was chosen (other replicas may share it): tasks are published.
    pub(super) shared: bool,
}

impl Default for Fleet {
    fn default() -> Self {
        Fleet {
            store: Arc::new(MemoryStore::new()),
            replica: default_replica_name(),
            shared: false,
        }
    }
}

impl Fleet {
    /// A fleet member on `store`.
    pub(super) fn shared(store: Arc<dyn Store>, replica: String) -> Fleet {
        Fleet {
            store,
            replica,
            shared: true,
        }
    }
}

/// A name for this replica when none is given: the process id and 32 random bits, so that two
/// replicas on one host (or in two containers with pid 1) never share one.
pub fn default_replica_name() -> String {
    let mut bytes = [0u8; 4];
    let suffix = match getrandom::fill(&mut bytes) {
        Ok(()) => hex::encode(bytes),
        Err(_) => "norandom".to_owned(),
    };
    format!("r{}-{suffix}", std::process::id())
}

/// Check a replica name: 1 to [`MAX_REPLICA_NAME`] of `A-Z a-z 0-9 . _ -`, so it can be part
/// of a store key, a file name and a log line as it is.
pub fn check_replica_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_REPLICA_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the replica name `{}` is not 1 to {MAX_REPLICA_NAME} of A-Z a-z 0-9 . _ -",
            name.escape_debug()
        ))
    }
}

/// The JSON-RPC error (`-32603`) of a request that needed the store when it failed.
pub(super) fn store_unavailable(e: &StoreError) -> ErrorData {
    store_refusal(format!(
        "the server's shared store failed ({e}); nothing ran; try again shortly"
    ))
}

/// The JSON-RPC error (`-32603`, reason `store_unavailable`) saying `why`.
pub(super) fn store_refusal(why: String) -> ErrorData {
    tracing::warn!(%why, "a request needed the shared store and was refused");
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("{}: {why}", ReasonCode::StoreUnavailable),
        Some(json!({REASON_CODE_KEY: ReasonCode::StoreUnavailable})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreErrorKind;

    #[test]
    fn replica_names_are_checked_and_defaults_differ() {
        for ok in ["a", "replica-1", "host.example_2"] {
            assert!(check_replica_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/b", "a b", "ü", &"x".repeat(65), "..\n"] {
            assert!(check_replica_name(bad).is_err(), "{bad:?}");
        }
        let (a, b) = (default_replica_name(), default_replica_name());
        assert_ne!(a, b);
        assert!(check_replica_name(&a).is_ok());
    }

    #[test]
    fn the_reason_code_key_is_the_servers() {
        assert_eq!(REASON_CODE_KEY, crate::mcp::REASON_CODE_KEY);
    }

    #[test]
    fn a_store_failure_is_a_stable_refusal() {
        let e = store_unavailable(&StoreError {
            kind: StoreErrorKind::Timeout,
            message: "op".into(),
        });
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        assert!(
            e.message.starts_with("store_unavailable: "),
            "{}",
            e.message
        );
        assert_eq!(e.data.expect("data")[REASON_CODE_KEY], "store_unavailable");
    }
}
