//! What an MCP server keeps across requests, behind one narrow seam, so that replicas of a fleet
//! can share it.
//!
//! Everything a call needs beyond its own request — that an approval state was used, the rounds
//! a client has outstanding, a task's record and the lease of the replica running it, a client's
//! rate window — is a handful of operations on expiring keys. [`Store`] names exactly those:
//!
//! | operation | what it is for | Redis |
//! |---|---|---|
//! | [`claim`](Store::claim) | single use (an approval state), a lease taken | `SET NX PX` |
//! | [`renew`](Store::renew) | a lease's heartbeat, only by its holder | `GET` + `PEXPIRE` in one script |
//! | [`put`](Store::put), [`get`](Store::get), [`delete`](Store::delete) | a task's record, a cancellation flag | `SET PX`, `GET`, `DEL` |
//! | [`admit`](Store::admit), [`release`](Store::release) | a bounded set of outstanding rounds per client | a sorted set in one script |
//! | [`count`](Store::count) | a fixed rate window per client | `INCR` + `PEXPIRE NX` |
//!
//! [`MemoryStore`] is the default: one replica, nothing to install. [`RedisStore`] (feature
//! `redis`) is the shared one, chosen with `serve --http ADDR --store redis://HOST:PORT/DB`.
//! Another store (Postgres, a Valkey cluster) is a small module implementing the same trait.
//!
//! Every operation is bounded in time by the store itself; any failure is a [`StoreError`],
//! which the server turns into the reason code `store_unavailable`: nothing that needed the store
//! runs, and a state is never taken as unused because it could not be checked.

mod api;
mod memory;
mod open;
#[cfg(feature = "redis")]
mod redis;
mod url;

pub use api::{
    Store, StoreError, StoreErrorKind, StoreResult, MAX_KEY_BYTES, MAX_TTL, MAX_VALUE_BYTES,
};
pub use memory::MemoryStore;
pub use open::open_store;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::{RedisOptions, RedisStore};
pub use url::redact_url;

#[cfg(test)]
mod contract;
#[cfg(all(test, feature = "redis"))]
mod redis_tests;
