//! The operations a store offers, their bounds and their errors.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;

/// A store operation's result.
pub type StoreResult<T> = Result<T, StoreError>;

/// The longest a key may live: a day. Longer TTLs are refused ([`StoreErrorKind::Invalid`]):
/// everything the server keeps is short-lived, and a typo must not keep a key for a year.
pub const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 512;

/// The largest value accepted, in bytes (a task's record with its result).
pub const MAX_VALUE_BYTES: usize = 8 * 1024 * 1024;

/// What the server keeps across requests. Keys are opaque strings the server builds from its
/// own ids (never from model- or client-chosen text without validation); every key has a TTL.
///
/// Implementations must make each operation atomic with respect to the others on the same key,
/// across every replica that shares the store.
pub trait Store: Send + Sync + fmt::Debug {
    /// Set `key` to `value` for `ttl` unless it exists. `true` when this call set it (the state
    /// was unused, the lease is now ours); `false` when it was already there.
    fn claim<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Extend `key`'s life to `ttl` if it still holds `value` (a lease's holder renewing it).
    /// `false` when it expired or another holder has it.
    fn renew<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Set `key` to `value` for `ttl`, whatever it held.
    fn put<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// The value of `key`, `None` when it is absent or expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>>;

    /// Remove `key`; `true` when it was there.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Add `member` to the bounded set `set` until `ttl` from now, unless the set already has
    /// `limit` members that have not expired. `true` when it was added (or was already there).
    fn admit<'a>(
        &'a self,
        set: &'a str,
        member: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Remove `member` from the bounded set `set` (nothing when it is not there).
    fn release<'a>(&'a self, set: &'a str, member: &'a str) -> BoxFuture<'a, StoreResult<()>>;

    /// Count one more event in the window `key`, which starts with its first event and lasts
    /// `window`; the count including this one.
    fn count<'a>(&'a self, key: &'a str, window: Duration) -> BoxFuture<'a, StoreResult<u64>>;

    /// Where the store is, for logs and `doctor`: never with a password.
    fn describe(&self) -> String;
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct StoreError {
    /// What kind of failure.
    pub kind: StoreErrorKind,
    /// What happened, for the operator (no secrets: URLs are redacted).
    pub message: String,
}

/// The kinds of [`StoreError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The store cannot be reached, or refused the operation.
    Unavailable,
    /// The store did not answer within the operation's time bound.
    Timeout,
    /// A key, value or TTL out of bounds: a bug in the caller, never retried.
    Invalid,
    /// The store answered something this client does not understand.
    Protocol,
}

impl fmt::Display for StoreErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreErrorKind::Unavailable => "store unavailable",
            StoreErrorKind::Timeout => "store timed out",
            StoreErrorKind::Invalid => "invalid store request",
            StoreErrorKind::Protocol => "store protocol error",
        })
    }
}

impl StoreError {
    pub(crate) fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
        }
    }
}

/// Refuse a key, value or TTL out of bounds, the same way for every store.
pub(crate) fn check_request(key: &str, value_len: usize, ttl: Duration) -> StoreResult<()> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("a key of {} bytes (1 to {MAX_KEY_BYTES})", key.len()),
        ));
    }
    if key.chars().any(char::is_control) {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            "a key with a control character",
        ));
    }
    if value_len > MAX_VALUE_BYTES {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("a value of {value_len} bytes (at most {MAX_VALUE_BYTES})"),
        ));
    }
    if ttl.is_zero() || ttl > MAX_TTL {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("a TTL of {ttl:?} (more than zero, at most {MAX_TTL:?})"),
        ));
    }
    Ok(())
}
