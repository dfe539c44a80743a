//! The behaviour every [`Store`] must have, checked the same way for each implementation.

use std::sync::Arc;
use std::time::Duration;

use super::api::{Store, StoreErrorKind, MAX_KEY_BYTES, MAX_TTL};

const LONG: Duration = Duration::from_secs(30);
const SHORT: Duration = Duration::from_millis(150);

/// A key no earlier run of the same check used (stores may be shared between tests).
fn key(name: &str) -> String {
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).expect("random");
    format!("contract:{}:{name}", hex::encode(nonce))
}

async fn expire() {
    tokio::time::sleep(SHORT * 3).await;
}

/// Check `store` against the contract of [`Store`]; panics on the first difference.
pub(crate) async fn check(store: &dyn Store) {
    claims_are_single_use(store).await;
    leases_renew_only_for_their_holder(store).await;
    values_round_trip_and_expire(store).await;
    sets_are_bounded(store).await;
    windows_count_and_restart(store).await;
    requests_out_of_bounds_are_refused(store).await;
    a_key_of_another_kind_is_an_error(store).await;
    assert!(!store.describe().is_empty());
}

/// A set or window on a key that holds another kind fails (Redis's `WRONGTYPE`), the same in
/// every store, and leaves the key as it was.
async fn a_key_of_another_kind_is_an_error(store: &dyn Store) {
    let (value, set) = (key("kind-value"), key("kind-set"));
    store.put(&value, b"v", LONG).await.expect("put");
    let e = store
        .admit(&value, "m", 2, LONG)
        .await
        .expect_err("not a set");
    assert_eq!(e.kind, StoreErrorKind::Protocol, "{e}");
    let e = store.count(&value, LONG).await.expect_err("not a window");
    assert_eq!(e.kind, StoreErrorKind::Protocol, "{e}");
    assert_eq!(store.get(&value).await.expect("get"), Some(b"v".to_vec()));
    assert!(store.admit(&set, "m", 2, LONG).await.expect("admit"));
    let e = store.count(&set, LONG).await.expect_err("not a window");
    assert_eq!(e.kind, StoreErrorKind::Protocol, "{e}");
}

async fn claims_are_single_use(store: &dyn Store) {
    let k = key("claim");
    assert!(store.claim(&k, b"a", LONG).await.expect("claim"));
    assert!(!store.claim(&k, b"b", LONG).await.expect("claim again"));
    assert_eq!(store.get(&k).await.expect("get"), Some(b"a".to_vec()));
    let short = key("claim-short");
    assert!(store.claim(&short, b"a", SHORT).await.expect("claim"));
    expire().await;
    assert!(store
        .claim(&short, b"a", SHORT)
        .await
        .expect("after expiry"));
}

async fn leases_renew_only_for_their_holder(store: &dyn Store) {
    let k = key("lease");
    assert!(store.claim(&k, b"replica-1", SHORT).await.expect("lease"));
    assert!(!store.renew(&k, b"replica-2", LONG).await.expect("not ours"));
    assert!(store.renew(&k, b"replica-1", LONG).await.expect("ours"));
    expire().await;
    assert_eq!(
        store.get(&k).await.expect("get"),
        Some(b"replica-1".to_vec()),
        "the renewal extended the lease"
    );
    let lapsed = key("lapsed");
    assert!(store.claim(&lapsed, b"r", SHORT).await.expect("lease"));
    expire().await;
    assert!(!store.renew(&lapsed, b"r", LONG).await.expect("lapsed"));
}

async fn values_round_trip_and_expire(store: &dyn Store) {
    let k = key("value");
    assert_eq!(store.get(&k).await.expect("get"), None);
    let big: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    store.put(&k, &big, LONG).await.expect("put");
    assert_eq!(store.get(&k).await.expect("get"), Some(big));
    store.put(&k, b"", LONG).await.expect("overwrite");
    assert_eq!(store.get(&k).await.expect("get"), Some(Vec::new()));
    assert!(store.delete(&k).await.expect("delete"));
    assert!(!store.delete(&k).await.expect("delete again"));
    store.put(&k, b"x", SHORT).await.expect("put");
    expire().await;
    assert_eq!(store.get(&k).await.expect("get"), None);
}

async fn sets_are_bounded(store: &dyn Store) {
    let set = key("rounds");
    assert!(store.admit(&set, "a", 2, LONG).await.expect("a"));
    assert!(store.admit(&set, "b", 2, LONG).await.expect("b"));
    assert!(!store.admit(&set, "c", 2, LONG).await.expect("full"));
    assert!(store.admit(&set, "a", 2, LONG).await.expect("again"));
    store.release(&set, "a").await.expect("release");
    store.release(&set, "never").await.expect("release absent");
    assert!(store.admit(&set, "c", 2, LONG).await.expect("room again"));
    // Expired members make room by themselves.
    let short = key("rounds-short");
    assert!(store.admit(&short, "a", 1, SHORT).await.expect("a"));
    assert!(!store.admit(&short, "b", 1, SHORT).await.expect("full"));
    expire().await;
    assert!(store.admit(&short, "b", 1, SHORT).await.expect("expired"));
}

async fn windows_count_and_restart(store: &dyn Store) {
    let k = key("window");
    for n in 1..=3 {
        assert_eq!(store.count(&k, SHORT).await.expect("count"), n);
    }
    expire().await;
    assert_eq!(store.count(&k, SHORT).await.expect("new window"), 1);
}

async fn requests_out_of_bounds_are_refused(store: &dyn Store) {
    let too_long = "k".repeat(MAX_KEY_BYTES + 1);
    for (what, result) in [
        ("empty key", store.put("", b"v", LONG).await),
        ("long key", store.put(&too_long, b"v", LONG).await),
        ("control", store.put("a\nb", b"v", LONG).await),
        ("zero ttl", store.put(&key("z"), b"v", Duration::ZERO).await),
        (
            "long ttl",
            store
                .put(&key("y"), b"v", MAX_TTL + Duration::from_secs(1))
                .await,
        ),
    ] {
        let e = result.expect_err(what);
        assert_eq!(e.kind, StoreErrorKind::Invalid, "{what}: {e}");
    }
}

/// Many tasks claiming the same key at once: exactly one wins.
pub(crate) async fn check_concurrent_claims(store: Arc<dyn Store>) {
    let k = key("race");
    let mut handles = Vec::new();
    for i in 0..32u8 {
        let store = store.clone();
        let k = k.clone();
        handles.push(tokio::spawn(async move {
            store.claim(&k, &[i], LONG).await.expect("claim")
        }));
    }
    let mut won = 0;
    for h in handles {
        if h.await.expect("join") {
            won += 1;
        }
    }
    assert_eq!(won, 1, "exactly one claim wins");
}
