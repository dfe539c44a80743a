//! Fair serving: quotas per client on running tasks and on outstanding input-required rounds,
//! below the server-wide bounds, so that one client cannot take what every client shares.
//!
//! A client is told apart by the SHA-256 of its `Authorization` header; without one, by its
//! 2025-11-25 session (the hash of the `Mcp-Session-Id` the transport found among its sessions);
//! stateless requests with neither share one anonymous quota, since nothing tells them apart.
//! Over stdio there is one client, held to the server-wide bounds alone. Header text never
//! becomes a key, only its hash does.
//!
//! A task counts from its creation until it ends: completed, failed, cancelled, expired, or
//! forgotten as no task (a tool asking first whose call ended waiting for its answers). A task
//! waiting for `tasks/update` is still running: its questions count as its task. A round is a
//! `requestState` issued with an input-required result (a tool call's or a prompt's); it is
//! outstanding until the retry that echoes it verifies, or until it expires, so an abandoned round
//! holds its slot for the state's lifetime. A task's slot is a value whose drop gives it back, so
//! no path that drops the task can keep it.
//!
//! The server does not check tokens: a client that sends a new `Authorization` value with each
//! request gets a quota for each. Fairness between tokens holds where something in front of the
//! server checks them; the server-wide bounds hold either way.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::fleet::store_unavailable;
use crate::reason::ReasonCode;
use crate::store::Store;

/// The `error.data` key of the reason code (the server's `REASON_CODE_KEY`).
const REASON_CODE_KEY: &str = "reason_code";

/// Most tasks one server keeps at a time, by default ([`ClientQuotas`]).
pub const MAX_TASKS: usize = 256;

/// Default most running tasks of one client: an eighth of [`MAX_TASKS`], so that at least eight
/// clients at their quota fit in the store.
pub const DEFAULT_MAX_TASKS_PER_CLIENT: usize = MAX_TASKS / 8;

/// Most input-required rounds outstanding at a time, over all clients.
pub const MAX_PENDING_ROUNDS: usize = 1024;

/// Default most outstanding input-required rounds of one client: a sixteenth of
/// [`MAX_PENDING_ROUNDS`].
pub const DEFAULT_MAX_PENDING_PER_CLIENT: usize = MAX_PENDING_ROUNDS / 16;

/// The bounds of one MCP server: server-wide, and per client below them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientQuotas {
    max_tasks: usize,
    max_tasks_per_client: usize,
    max_pending: usize,
    max_pending_per_client: usize,
}

impl Default for ClientQuotas {
    fn default() -> Self {
        ClientQuotas {
            max_tasks: MAX_TASKS,
            max_tasks_per_client: DEFAULT_MAX_TASKS_PER_CLIENT,
            max_pending: MAX_PENDING_ROUNDS,
            max_pending_per_client: DEFAULT_MAX_PENDING_PER_CLIENT,
        }
    }
}

impl ClientQuotas {
    /// The defaults: [`MAX_TASKS`] tasks kept, [`DEFAULT_MAX_TASKS_PER_CLIENT`] running per
    /// client, [`MAX_PENDING_ROUNDS`] rounds outstanding, [`DEFAULT_MAX_PENDING_PER_CLIENT`] per
    /// client.
    pub fn new() -> Self {
        ClientQuotas::default()
    }

    /// Keep at most `n` tasks (running or finished and not yet expired) over all clients.
    pub fn with_max_tasks(mut self, n: usize) -> Self {
        self.max_tasks = n;
        self
    }

    /// Let one client run at most `n` tasks at a time.
    pub fn with_max_tasks_per_client(mut self, n: usize) -> Self {
        self.max_tasks_per_client = n;
        self
    }

    /// Keep at most `n` input-required rounds outstanding over all clients.
    pub fn with_max_pending(mut self, n: usize) -> Self {
        self.max_pending = n;
        self
    }

    /// Let one client have at most `n` input-required rounds outstanding at a time.
    pub fn with_max_pending_per_client(mut self, n: usize) -> Self {
        self.max_pending_per_client = n;
        self
    }

    /// Most tasks kept over all clients.
    pub fn max_tasks(&self) -> usize {
        self.max_tasks
    }

    /// Most running tasks of one client.
    pub fn max_tasks_per_client(&self) -> usize {
        self.max_tasks_per_client
    }

    /// Most outstanding input-required rounds over all clients.
    pub fn max_pending(&self) -> usize {
        self.max_pending
    }

    /// Most outstanding input-required rounds of one client.
    pub fn max_pending_per_client(&self) -> usize {
        self.max_pending_per_client
    }

    /// Refuse bounds that serve nobody (zero) or that are no quota (a client's above the
    /// server's).
    pub(super) fn check(&self) -> Result<(), String> {
        let pairs = [
            ("tasks", self.max_tasks, self.max_tasks_per_client),
            (
                "pending rounds",
                self.max_pending,
                self.max_pending_per_client,
            ),
        ];
        for (what, all, one) in pairs {
            if all == 0 || one == 0 {
                return Err(format!("the bound on {what} must be at least 1"));
            }
            if one > all {
                return Err(format!(
                    "a client's quota of {one} {what} is above the server's bound of {all}"
                ));
            }
        }
        Ok(())
    }
}

/// Whose quota a request counts against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Client {
    /// The one client of a stdio server: held to the server-wide bounds alone.
    Sole,
    /// A client of an HTTP server, by the hash of what tells it apart.
    Key(String),
}

/// Who a request comes from: `id` binds its states and owns its tasks (the SHA-256 of its
/// `Authorization` header, empty without one), `client` is whose quota it counts against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Caller {
    pub(super) id: String,
    pub(super) client: Client,
}

impl Caller {
    /// A caller of a stdio server with this id (tests, and the one stdio client).
    #[cfg(test)]
    pub(super) fn sole(id: &str) -> Caller {
        Caller {
            id: id.to_owned(),
            client: Client::Sole,
        }
    }

    /// A caller of an HTTP server whose id is also its quota key.
    #[cfg(test)]
    pub(super) fn keyed(id: &str) -> Caller {
        Caller {
            id: id.to_owned(),
            client: Client::Key(format!("authorization:{id}")),
        }
    }
}

/// `true` when the request speaks 2026-07-28 or later (stateless, per-request `_meta`).
pub(super) fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Who the request comes from (see the module's documentation).
pub(super) fn caller_of(context: &RequestContext<RoleServer>) -> Caller {
    let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
        return Caller {
            id: String::new(),
            client: Client::Sole,
        };
    };
    if let Some(auth) = parts.headers.get(axum::http::header::AUTHORIZATION) {
        let id = sha256_hex(auth.as_bytes());
        let client = Client::Key(format!("authorization:{id}"));
        return Caller { id, client };
    }
    // A session id is only trusted on a session's request: the transport refuses one it did
    // not issue there, and looks at none on a stateless request.
    let session = match is_stateless(context) {
        true => None,
        false => parts.headers.get("mcp-session-id"),
    };
    let client = match session {
        Some(s) => Client::Key(format!("session:{}", sha256_hex(s.as_bytes()))),
        None => Client::Key("anonymous".to_owned()),
    };
    Caller {
        id: String::new(),
        client,
    }
}

/// What a quota bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quota {
    Tasks,
    Rounds,
}

/// A client at its quota: the refusal it gets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: this client already has {limit} {}, its quota; {}", ReasonCode::ClientQuotaExceeded, what.noun(), what.advice())]
pub(super) struct QuotaExceeded {
    pub(super) what: Quota,
    pub(super) limit: usize,
}

impl Quota {
    fn noun(self) -> &'static str {
        match self {
            Quota::Tasks => "running tasks",
            Quota::Rounds => "outstanding input-required rounds",
        }
    }

    fn advice(self) -> &'static str {
        match self {
            Quota::Tasks => "try again when one of them has ended",
            Quota::Rounds => "answer one of them, or try again when one has expired",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Quota::Tasks => "tasks",
            Quota::Rounds => "input_rounds",
        }
    }
}

impl From<QuotaExceeded> for ErrorData {
    /// The JSON-RPC error of the server-wide task bound (`-32603`, HTTP 200 with the error),
    /// with its own reason code, the quota and its limit as data.
    fn from(q: QuotaExceeded) -> Self {
        ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            q.to_string(),
            Some(json!({
                REASON_CODE_KEY: ReasonCode::ClientQuotaExceeded,
                "quota": q.what.name(),
                "limit": q.limit,
            })),
        )
    }
}

/// The refusal when a server-wide bound is reached (every client is refused until room is made).
pub(super) fn server_full(what: &str, limit: usize) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "{}: {limit} {what}; try again when one has ended",
            ReasonCode::ErrorBudgetExhausted
        ),
        Some(json!({REASON_CODE_KEY: ReasonCode::ErrorBudgetExhausted})),
    )
}

/// Running tasks, counted per client.
#[derive(Debug)]
pub(super) struct Ledger {
    per_client: usize,
    held: Mutex<HashMap<String, usize>>,
}

/// One running task's place in its client's quota, given back when dropped.
#[derive(Debug)]
pub(super) struct Slot {
    ledger: Arc<Ledger>,
    /// `None` for the sole client of a stdio server, which is not counted.
    key: Option<String>,
}

impl Ledger {
    pub(super) fn new(per_client: usize) -> Arc<Ledger> {
        Arc::new(Ledger {
            per_client,
            held: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for `client`, or the refusal when it holds its quota already.
    pub(super) fn acquire(self: &Arc<Self>, client: &Client) -> Result<Slot, QuotaExceeded> {
        let key = match client {
            Client::Sole => None,
            Client::Key(k) => {
                let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
                let n = held.entry(k.clone()).or_insert(0);
                if *n >= self.per_client {
                    return Err(QuotaExceeded {
                        what: Quota::Tasks,
                        limit: self.per_client,
                    });
                }
                *n += 1;
                Some(k.clone())
            }
        };
        Ok(Slot {
            ledger: Arc::clone(self),
            key,
        })
    }

    /// How many slots `client` holds.
    #[cfg(test)]
    pub(super) fn held(&self, client: &Client) -> usize {
        match client {
            Client::Sole => 0,
            Client::Key(k) => {
                let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
                held.get(k).copied().unwrap_or(0)
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else { return };
        let mut held = self.ledger.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                // No entry for a client that holds nothing: the map stays as small as the tasks.
                held.remove(&key);
            }
        }
    }
}

/// Outstanding input-required rounds: the nonce of each issued, unused and unexpired state,
/// counted in the store (shared by a fleet's replicas) per client and over all clients.
#[derive(Debug)]
pub(super) struct Rounds {
    max: usize,
    per_client: usize,
    store: Arc<dyn Store>,
}

/// The store set of every outstanding round.
const ALL_ROUNDS: &str = "rounds";

impl Rounds {
    pub(super) fn new(quotas: &ClientQuotas, store: Arc<dyn Store>) -> Rounds {
        Rounds {
            max: quotas.max_pending,
            per_client: quotas.max_pending_per_client,
            store,
        }
    }

    /// The store set of `client`'s rounds; `None` for the sole client of a stdio server.
    fn set_of(client: &Client) -> Option<String> {
        match client {
            Client::Sole => None,
            Client::Key(k) => Some(format!("rounds:{k}")),
        }
    }

    /// Count the round whose state has `nonce` and lives for `ttl` against `client`, or refuse
    /// it: the client's quota first (its own doing), then the server's bound; a failing store
    /// refuses it too (`store_unavailable`).
    pub(super) async fn open(
        &self,
        client: &Client,
        nonce: &str,
        ttl: Duration,
    ) -> Result<(), ErrorData> {
        let mine = Self::set_of(client);
        if let Some(set) = &mine {
            match self.store.admit(set, nonce, self.per_client, ttl).await {
                Ok(true) => {}
                Ok(false) => {
                    return Err(QuotaExceeded {
                        what: Quota::Rounds,
                        limit: self.per_client,
                    }
                    .into())
                }
                Err(e) => return Err(store_unavailable(&e)),
            }
        }
        let refused = match self.store.admit(ALL_ROUNDS, nonce, self.max, ttl).await {
            Ok(true) => return Ok(()),
            Ok(false) => server_full("input-required rounds are outstanding", self.max),
            Err(e) => store_unavailable(&e),
        };
        if let Some(set) = &mine {
            self.forget(set, nonce).await;
        }
        Err(refused)
    }

    /// The round of `client` whose state has `nonce` was answered (its state verified once), or
    /// was never sent.
    pub(super) async fn close(&self, client: &Client, nonce: &str) {
        if let Some(set) = Self::set_of(client) {
            self.forget(&set, nonce).await;
        }
        self.forget(ALL_ROUNDS, nonce).await;
    }

    /// Take `nonce` out of `set`; a failing store leaves it to expire with its state.
    async fn forget(&self, set: &str, nonce: &str) {
        if let Err(e) = self.store.release(set, nonce).await {
            tracing::warn!(error = %e, "an answered round stays counted until its state expires");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn key(k: &str) -> Client {
        Client::Key(k.to_owned())
    }

    #[test]
    fn a_client_at_its_quota_is_refused_and_others_are_not() {
        let ledger = Ledger::new(2);
        let a: Vec<Slot> = (0..2)
            .map(|_| ledger.acquire(&key("a")).expect("slot"))
            .collect();
        let refused = ledger.acquire(&key("a")).expect_err("at quota");
        let e = ErrorData::from(refused);
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(
            e.data.as_ref().and_then(|d| d.get(REASON_CODE_KEY)),
            Some(&json!("client_quota_exceeded"))
        );
        assert!(
            e.message.starts_with("client_quota_exceeded: "),
            "{}",
            e.message
        );
        let b = ledger.acquire(&key("b")).expect("another client");
        drop(a);
        assert_eq!(ledger.held(&key("a")), 0);
        assert!(ledger.acquire(&key("a")).is_ok());
        drop(b);
        assert!(ledger.held.lock().expect("lock").is_empty());
        // The stdio client is not counted.
        let sole: Vec<Slot> = (0..5)
            .map(|_| ledger.acquire(&Client::Sole).expect("sole"))
            .collect();
        assert_eq!(sole.len(), 5);
    }

    #[tokio::test]
    async fn rounds_are_counted_until_answered_or_expired() {
        let quotas = ClientQuotas::new()
            .with_max_pending(3)
            .with_max_pending_per_client(2);
        let rounds = Rounds::new(&quotas, Arc::new(crate::store::MemoryStore::new()));
        let later = Duration::from_secs(60);
        rounds.open(&key("a"), "n1", later).await.expect("open");
        rounds.open(&key("a"), "n2", later).await.expect("open");
        let e = rounds
            .open(&key("a"), "n3", later)
            .await
            .expect_err("at quota");
        assert_eq!(
            e.data.expect("data")["reason_code"],
            "client_quota_exceeded"
        );
        rounds
            .open(&key("b"), "n4", later)
            .await
            .expect("another client");
        let e = rounds
            .open(&key("c"), "n5", later)
            .await
            .expect_err("server full");
        assert_eq!(
            e.data.expect("data")["reason_code"],
            "error_budget_exhausted"
        );
        // The refused round of `c` is not counted for `c` either.
        rounds.close(&key("b"), "n4").await;
        rounds.open(&key("c"), "n5", later).await.expect("room");
        rounds.close(&key("c"), "n5").await;
        rounds.close(&key("a"), "n1").await;
        rounds
            .open(&key("a"), "n6", later)
            .await
            .expect("answered: room again");
        // An expired round is no longer counted.
        rounds.close(&key("a"), "n2").await;
        rounds.close(&key("a"), "n6").await;
        rounds
            .open(&key("a"), "old", Duration::from_millis(1))
            .await
            .expect("open");
        tokio::time::sleep(Duration::from_millis(5)).await;
        rounds
            .open(&key("a"), "n7", later)
            .await
            .expect("the expired one made room");
        rounds
            .open(&key("a"), "n8", later)
            .await
            .expect("the expired one made room");
        rounds
            .open(&key("a"), "n9", later)
            .await
            .expect_err("two outstanding");
    }

    #[test]
    fn the_reason_code_key_is_the_servers() {
        assert_eq!(REASON_CODE_KEY, crate::mcp::REASON_CODE_KEY);
    }

    #[test]
    fn bounds_that_serve_nobody_or_are_no_quota_are_refused() {
        assert!(ClientQuotas::new().check().is_ok());
        for q in [
            ClientQuotas::new().with_max_tasks_per_client(0),
            ClientQuotas::new().with_max_pending(0),
            ClientQuotas::new().with_max_tasks_per_client(MAX_TASKS + 1),
            ClientQuotas::new().with_max_pending(1),
        ] {
            assert!(q.check().is_err(), "{q:?}");
        }
    }
}
