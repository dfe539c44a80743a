//! The in-process store: one replica, nothing to install, lost on restart.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::{self, BoxFuture, FutureExt};

use super::api::{check_request, Store, StoreError, StoreErrorKind, StoreResult};

/// What one key holds.
#[derive(Debug)]
enum Entry {
    Value(Vec<u8>),
    /// A bounded set: member → when it expires.
    Set(HashMap<String, Instant>),
    /// A rate window's count.
    Count(u64),
}

/// The default [`Store`]: a map in this process, with expiry. Expired keys are dropped as
/// they are met and in a sweep every 1024 writes, so memory stays bounded by
/// what is live.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<String, (Entry, Instant)>,
    writes: u64,
}

/// How many writes between two sweeps of expired keys.
const SWEEP_EVERY: u64 = 1024;

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// How many keys are live (for tests and `doctor`).
    pub fn len(&self) -> usize {
        let now = Instant::now();
        self.lock().keys.values().filter(|(_, t)| *t > now).count()
    }

    /// Whether no key is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` on the live entry of `key` (expired ones are removed first), counting a write.
    fn with<T>(&self, key: &str, f: impl FnOnce(&mut Inner, Instant) -> T) -> T {
        let now = Instant::now();
        let mut inner = self.lock();
        if inner.keys.get(key).is_some_and(|(_, until)| *until <= now) {
            inner.keys.remove(key);
        }
        inner.writes += 1;
        if inner.writes % SWEEP_EVERY == 0 {
            inner.keys.retain(|_, (_, until)| *until > now);
        }
        f(&mut inner, now)
    }
}

/// A key used as another kind than it holds: an error, as Redis's `WRONGTYPE` is.
fn wrong_kind(key: &str) -> StoreError {
    StoreError::new(
        StoreErrorKind::Protocol,
        format!("key `{key}` holds another kind of value"),
    )
}

fn ready<'a, T: Send + 'a>(value: StoreResult<T>) -> BoxFuture<'a, StoreResult<T>> {
    future::ready(value).boxed()
}

impl Store for MemoryStore {
    fn claim<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(check_request(key, value.len(), ttl).map(|()| {
            self.with(key, |inner, now| {
                if inner.keys.contains_key(key) {
                    return false;
                }
                inner
                    .keys
                    .insert(key.to_owned(), (Entry::Value(value.to_vec()), now + ttl));
                true
            })
        }))
    }

    fn renew<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(check_request(key, value.len(), ttl).map(|()| {
            self.with(key, |inner, now| match inner.keys.get_mut(key) {
                Some((Entry::Value(held), until)) if held.as_slice() == value => {
                    *until = now + ttl;
                    true
                }
                _ => false,
            })
        }))
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<()>> {
        ready(check_request(key, value.len(), ttl).map(|()| {
            self.with(key, |inner, now| {
                inner
                    .keys
                    .insert(key.to_owned(), (Entry::Value(value.to_vec()), now + ttl));
            })
        }))
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>> {
        let now = Instant::now();
        let inner = self.lock();
        let value = match inner.keys.get(key) {
            Some((Entry::Value(v), until)) if *until > now => Some(v.clone()),
            _ => None,
        };
        ready(Ok(value))
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        ready(Ok(
            self.with(key, |inner, _| inner.keys.remove(key).is_some())
        ))
    }

    fn admit<'a>(
        &'a self,
        set: &'a str,
        member: &'a str,
        limit: usize,
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        ready(check_request(set, member.len(), ttl).and_then(|()| {
            self.with(set, |inner, now| {
                let entry = inner
                    .keys
                    .entry(set.to_owned())
                    .or_insert_with(|| (Entry::Set(HashMap::new()), now + ttl));
                let Entry::Set(members) = &mut entry.0 else {
                    return Err(wrong_kind(set));
                };
                members.retain(|_, until| *until > now);
                if !members.contains_key(member) && members.len() >= limit {
                    return Ok(false);
                }
                members.insert(member.to_owned(), now + ttl);
                // The set lives as long as its longest-lived member.
                entry.1 = members.values().copied().max().unwrap_or(now + ttl);
                Ok(true)
            })
        }))
    }

    fn release<'a>(&'a self, set: &'a str, member: &'a str) -> BoxFuture<'a, StoreResult<()>> {
        self.with(set, |inner, _| {
            if let Some((Entry::Set(members), _)) = inner.keys.get_mut(set) {
                members.remove(member);
                if members.is_empty() {
                    inner.keys.remove(set);
                }
            }
        });
        ready(Ok(()))
    }

    fn count<'a>(&'a self, key: &'a str, window: Duration) -> BoxFuture<'a, StoreResult<u64>> {
        ready(check_request(key, 0, window).and_then(|()| {
            self.with(key, |inner, now| {
                let entry = inner
                    .keys
                    .entry(key.to_owned())
                    .or_insert_with(|| (Entry::Count(0), now + window));
                match &mut entry.0 {
                    Entry::Count(n) => {
                        *n += 1;
                        Ok(*n)
                    }
                    _ => Err(wrong_kind(key)),
                }
            })
        }))
    }

    fn describe(&self) -> String {
        "memory (this process only)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_memory_store_keeps_the_contract() {
        crate::store::contract::check(&MemoryStore::new()).await;
        crate::store::contract::check_concurrent_claims(std::sync::Arc::new(MemoryStore::new()))
            .await;
    }

    #[tokio::test]
    async fn expired_keys_are_swept() {
        let store = MemoryStore::new();
        // Short-lived keys up to just before a sweep, then, once they have expired, writes of
        // one long-lived key until the next sweep has run: whatever the machine's speed, the
        // sweep sees every short-lived key expired.
        for i in 0..SWEEP_EVERY - 1 {
            let key = format!("k{i}");
            store
                .put(&key, b"v", Duration::from_millis(1))
                .await
                .expect("put");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        for _ in 0..SWEEP_EVERY {
            store
                .put("last", b"v", Duration::from_secs(5))
                .await
                .expect("put");
        }
        assert_eq!(store.len(), 1);
        assert_eq!(store.lock().keys.len(), 1, "the expired keys are gone");
    }
}
