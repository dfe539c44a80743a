//! The Redis store against a real `redis-server` (Debian's `redis-server`, installed by
//! `scripts/install-test-deps.sh`), started on a free loopback port without persistence.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::api::{Store, StoreErrorKind};
use super::contract;
use super::redis::{RedisOptions, RedisStore};

/// A `redis-server` of this test, stopped when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Start one, or `None` (with a loud message) when `redis-server` is not installed.
    fn start() -> Option<Self> {
        let port = free_port();
        let child = match Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                eprintln!(
                    "SKIPPED: redis-server cannot be started ({e}); install it with \
                     scripts/install-test-deps.sh"
                );
                return None;
            }
        };
        let server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn store(url: &str) -> RedisStore {
    RedisStore::open(url, RedisOptions::default()).expect("open")
}

#[tokio::test]
async fn the_redis_store_keeps_the_contract() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let s = store(&server.url());
    s.ping().await.expect("ping");
    contract::check(&s).await;
    contract::check_concurrent_claims(Arc::new(s)).await;
}

#[tokio::test]
async fn two_replicas_see_one_store() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let (a, b) = (store(&server.url()), store(&server.url()));
    assert!(a
        .claim("state:n1", b"a", Duration::from_secs(5))
        .await
        .expect("a"));
    assert!(!b
        .claim("state:n1", b"b", Duration::from_secs(5))
        .await
        .expect("b"));
    b.put("task:t1", b"{}", Duration::from_secs(5))
        .await
        .expect("put");
    assert_eq!(a.get("task:t1").await.expect("get"), Some(b"{}".to_vec()));
}

#[tokio::test]
async fn prefixes_keep_fleets_apart() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let other = RedisOptions {
        prefix: "other-fleet:".to_owned(),
        ..RedisOptions::default()
    };
    let a = store(&server.url());
    let b = RedisStore::open(&server.url(), other).expect("open");
    assert!(a.claim("k", b"a", Duration::from_secs(5)).await.expect("a"));
    assert!(b.claim("k", b"b", Duration::from_secs(5)).await.expect("b"));
}

#[tokio::test]
async fn a_dead_store_refuses_in_bounded_time_and_recovers() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let port = server.port;
    let s = store(&server.url());
    s.put("k", b"v", Duration::from_secs(30))
        .await
        .expect("put");
    server.stop();
    let started = Instant::now();
    let e = s
        .claim("state:n2", b"x", Duration::from_secs(5))
        .await
        .expect_err("no store, no claim");
    assert!(
        matches!(
            e.kind,
            StoreErrorKind::Unavailable | StoreErrorKind::Timeout
        ),
        "{e}"
    );
    // Bounded: a few operation timeouts at most, never a hang (not a timing assertion on
    // speed, a bound on waiting forever).
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // Back on the same port: the same store answers again without being reopened.
    let child = Command::new("redis-server")
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("restart redis-server");
    let _back = RedisServer { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match s.claim("state:n3", b"x", Duration::from_secs(5)).await {
            Ok(claimed) => {
                assert!(claimed);
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "never recovered: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test]
async fn a_bad_url_is_refused_without_its_password() {
    let e = RedisStore::open("redis://:hunter2@host:notaport/0", RedisOptions::default())
        .expect_err("bad url");
    assert_eq!(e.kind, StoreErrorKind::Invalid);
    assert!(!e.to_string().contains("hunter2"), "{e}");
    let s = RedisStore::open("redis://:hunter2@127.0.0.1:1/0", RedisOptions::default())
        .expect("lazy open");
    assert!(!s.describe().contains("hunter2"));
    assert!(!format!("{s:?}").contains("hunter2"));
}
