//! The shared store: Redis (or anything that speaks its protocol, such as Valkey), through the
//! `redis` crate's reconnecting connection manager on tokio.
//!
//! Each operation is one command or one server-side script, so it is atomic across replicas;
//! each is bounded by [`RedisOptions::op_timeout`]; keys carry a prefix so one Redis can serve
//! several fleets.

use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Cmd, FromRedisValue, RedisError, Script, ScriptInvocation};

use super::api::{check_request, Store, StoreError, StoreErrorKind, StoreResult};
use super::url::redact_url;

/// How a [`RedisStore`] connects and how long it waits.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// The bound on every store operation, connecting included: past it the operation fails
    /// with [`StoreErrorKind::Timeout`] and the call that needed it is refused.
    pub op_timeout: Duration,
    /// The prefix of every key (default `tool-core:`), so fleets can share one Redis.
    pub prefix: String,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            op_timeout: Duration::from_millis(500),
            prefix: "tool-core:".to_owned(),
        }
    }
}

/// A [`Store`] in Redis. Opening it does not connect: the first operation does, and after a
/// lost connection each later operation tries again, so the server recovers by itself when
/// Redis is back.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
    options: RedisOptions,
    shown: String,
    renew: Script,
    admit: Script,
    count: Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.shown)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Extend a key's life if it still holds the value.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Add a member to a bounded sorted set scored by expiry (ms since the epoch, by Redis's clock).
const ADMIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
local untilms = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], untilms, ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(last[2])) + 1)
return 1
";

/// Count an event in a window that starts with its first event.
const COUNT: &str = r"
local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
";

/// `ttl` in whole milliseconds, at least one.
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    /// A store at `url` (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://` for
    /// TLS). A malformed URL is an error that shows it redacted.
    ///
    /// It must be opened inside a tokio runtime (its connection is driven by a task of it);
    /// outside one it is an error, not a panic.
    pub fn open(url: &str, options: RedisOptions) -> StoreResult<Self> {
        let shown = redact_url(url);
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!("{shown}: a Redis store is opened inside a tokio runtime"),
            ));
        }
        let client = redis::Client::open(url).map_err(|e| {
            StoreError::new(
                StoreErrorKind::Invalid,
                format!("{shown} is not a store URL ({:?})", e.kind()),
            )
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.op_timeout))
            .set_response_timeout(Some(options.op_timeout))
            .set_number_of_retries(1)
            .set_max_delay(options.op_timeout);
        let conn = ConnectionManager::new_lazy_with_config(client, config).map_err(|e| {
            StoreError::new(StoreErrorKind::Invalid, format!("{shown}: {:?}", e.kind()))
        })?;
        Ok(RedisStore {
            conn,
            options,
            shown,
            renew: Script::new(RENEW),
            admit: Script::new(ADMIT),
            count: Script::new(COUNT),
        })
    }

    /// Whether the store answers now (a `PING` within the operation timeout).
    pub async fn ping(&self) -> StoreResult<()> {
        self.query::<String>(&redis::cmd("PING")).await.map(drop)
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.options.prefix)
    }

    /// Run one command within the timeout.
    async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> StoreResult<T> {
        let mut conn = self.conn.clone();
        self.bounded(cmd.query_async(&mut conn)).await
    }

    /// Run one script within the timeout.
    async fn invoke<T: FromRedisValue>(&self, call: &ScriptInvocation<'_>) -> StoreResult<T> {
        let mut conn = self.conn.clone();
        self.bounded(call.invoke_async(&mut conn)).await
    }

    /// Run one operation within the timeout, mapping its failure.
    async fn bounded<T>(
        &self,
        op: impl std::future::Future<Output = Result<T, RedisError>>,
    ) -> StoreResult<T> {
        match tokio::time::timeout(self.options.op_timeout, op).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.error(&e)),
            Err(_) => Err(StoreError::new(
                StoreErrorKind::Timeout,
                format!(
                    "{} did not answer within {:?}",
                    self.shown, self.options.op_timeout
                ),
            )),
        }
    }

    fn error(&self, e: &RedisError) -> StoreError {
        let kind = if e.is_timeout() {
            StoreErrorKind::Timeout
        } else if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
            StoreErrorKind::Unavailable
        } else {
            StoreErrorKind::Protocol
        };
        // The error's own text names no URL; the store is named redacted.
        StoreError::new(kind, format!("{}: {e}", self.shown))
    }
}

impl Store for RedisStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        async move {
            check_request(key, value.len(), ttl)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key))
                .arg(value)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl));
            let set: Option<String> = self.query(&cmd).await?;
            Ok(set.is_some())
        }
        .boxed()
    }

    fn renew<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        async move {
            check_request(key, value.len(), ttl)?;
            let mut call = self.renew.key(self.key(key));
            call.arg(value).arg(millis(ttl));
            let n: i64 = self.invoke(&call).await?;
            Ok(n == 1)
        }
        .boxed()
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        async move {
            check_request(key, value.len(), ttl)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key)).arg(value).arg("PX").arg(millis(ttl));
            self.query::<()>(&cmd).await
        }
        .boxed()
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>> {
        async move { self.query(redis::cmd("GET").arg(self.key(key))).await }.boxed()
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        async move {
            let n: i64 = self.query(redis::cmd("DEL").arg(self.key(key))).await?;
            Ok(n > 0)
        }
        .boxed()
    }

    fn admit<'a>(
        &'a self,
        set: &'a str,
        member: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        async move {
            check_request(set, member.len(), ttl)?;
            let mut call = self.admit.key(self.key(set));
            call.arg(member).arg(limit).arg(millis(ttl));
            let n: i64 = self.invoke(&call).await?;
            Ok(n == 1)
        }
        .boxed()
    }

    fn release<'a>(&'a self, set: &'a str, member: &'a str) -> BoxFuture<'a, StoreResult<()>> {
        async move {
            self.query::<()>(redis::cmd("ZREM").arg(self.key(set)).arg(member))
                .await
        }
        .boxed()
    }

    fn count<'a>(&'a self, key: &'a str, window: Duration) -> BoxFuture<'a, StoreResult<u64>> {
        async move {
            check_request(key, 0, window)?;
            let mut call = self.count.key(self.key(key));
            call.arg(millis(window));
            self.invoke(&call).await
        }
        .boxed()
    }

    fn describe(&self) -> String {
        format!("redis at {}", self.shown)
    }
}
