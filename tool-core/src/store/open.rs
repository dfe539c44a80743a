//! A store chosen by its URL's scheme.

use std::sync::Arc;

use super::api::{Store, StoreError, StoreErrorKind, StoreResult};
#[cfg(feature = "redis")]
use super::redis::{RedisOptions, RedisStore};
use super::url::redact_url;

/// The store at `url`: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` or `rediss://` for TLS
/// (feature `redis`), with the default `RedisOptions`. Any other
/// scheme, or a Redis URL in a build without the feature, is an error that shows the URL
/// redacted. Opening does not connect: the first operation does.
pub fn open_store(url: &str) -> StoreResult<Arc<dyn Store>> {
    let shown = redact_url(url);
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("{shown}: only redis:// and rediss:// stores are known"),
        ));
    }
    #[cfg(feature = "redis")]
    {
        let store = RedisStore::open(url, RedisOptions::default())?;
        Ok(Arc::new(store))
    }
    #[cfg(not(feature = "redis"))]
    {
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("{shown}: this program was built without tool-core's `redis` feature"),
        ))
    }
}
