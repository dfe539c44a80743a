//! A fleet as an operator runs it: three replicas (`fleet_replica`, separate processes) behind
//! nginx round-robin, sharing one Redis and one state key. Approval round trips succeed
//! wherever their rounds land, a used state is refused at every replica, a state outlives the
//! replica that issued it, tasks are read, answered and cancelled through any replica and end
//! `failed` when their replica dies, and with Redis down the fleet answers what needs no shared
//! state, refuses the rest with `store_unavailable`, and recovers without a restart.
//!
//! Redis and nginx are Debian's `redis-server` and `nginx` (`scripts/install-test-deps.sh`);
//! each test starts its own on free loopback ports, with its config in a temp directory.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp_wire::{post, Reply};

/// Three replicas behind nginx sharing one Redis, or `None` (skipped loudly).
fn start_fleet() -> Option<tests::fleet::Fleet> {
    tests::fleet::Fleet::start(Path::new(env!("CARGO_BIN_EXE_fleet_replica")))
}

fn caps() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

fn plain_caps() -> Value {
    json!({"elicitation": {"form": {}}})
}

async fn call(addr: SocketAddr, caps: Value, name: &str, params: Value) -> Reply {
    post(addr, "tools/call", Some(name), caps, params).await
}

/// Round 1 of `write`: the approval question's state.
async fn ask(addr: SocketAddr, text: &str) -> String {
    let r = call(
        addr,
        plain_caps(),
        "write",
        json!({"name": "write", "arguments": {"text": text}}),
    )
    .await;
    let res = r.result();
    assert_eq!(res["resultType"], "input_required", "{res}");
    res["requestState"].as_str().expect("a state").to_owned()
}

/// Round 2 of `write`: the approval, with `state`.
async fn answer(addr: SocketAddr, text: &str, state: &str) -> Reply {
    call(
        addr,
        plain_caps(),
        "write",
        json!({
            "name": "write",
            "arguments": {"text": text},
            "requestState": state,
            "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}
        }),
    )
    .await
}

fn text_of(r: &Reply) -> String {
    r.result()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn reason(r: &Reply) -> String {
    r.message["error"]["data"]["reason_code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn task(addr: SocketAddr, method: &str, id: &str) -> Reply {
    post(addr, method, Some(id), caps(), json!({"taskId": id})).await
}

async fn start_slow(addr: SocketAddr, ms: u64) -> String {
    let r = call(
        addr,
        caps(),
        "slow",
        json!({"name": "slow", "arguments": {"ms": ms}}),
    )
    .await;
    assert_eq!(r.result()["resultType"], "task", "{}", r.message);
    r.result()["taskId"].as_str().expect("taskId").to_owned()
}

async fn status_until(addr: SocketAddr, id: &str, until: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let r = task(addr, "tasks/get", id).await;
        let v = r.result().clone();
        if v["status"] == until {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "task {id} at {addr} is {v}, not {until}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_round_trips_succeed_wherever_their_rounds_land_and_a_used_state_is_refused_everywhere(
) {
    let Some(fleet) = start_fleet() else {
        return;
    };
    let lb = fleet.nginx_addr;
    let mut landed = std::collections::BTreeSet::new();
    for i in 0..30 {
        let text = format!("t{i}");
        let state = ask(lb, &text).await;
        let done = answer(lb, &text, &state).await;
        let out = text_of(&done);
        assert!(
            out.starts_with(&format!("wrote {text} at r")),
            "{}",
            done.message
        );
        landed.insert(out.rsplit(' ').next().unwrap_or_default().to_owned());
    }
    assert_eq!(
        landed.len(),
        3,
        "round-robin reached every replica: {landed:?}"
    );
    // A used state is refused at every replica, and nothing runs.
    let state = ask(fleet.replica_addr(0), "once").await;
    let done = answer(fleet.replica_addr(1), "once", &state).await;
    assert_eq!(text_of(&done), "wrote once at r1");
    for i in 0..3 {
        let again = answer(fleet.replica_addr(i), "once", &state).await;
        assert_eq!(
            reason(&again),
            "approval_state_replayed",
            "{}",
            again.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_issued_by_a_replica_that_died_is_redeemed_by_another() {
    let Some(mut fleet) = start_fleet() else {
        return;
    };
    let state = ask(fleet.replica_addr(0), "orphan").await;
    fleet.kill_replica(0);
    let done = answer(fleet.replica_addr(2), "orphan", &state).await;
    assert_eq!(text_of(&done), "wrote orphan at r2", "{}", done.message);
    // Through the load balancer, which routes around the dead replica.
    for i in 0..6 {
        let text = format!("after{i}");
        let state = ask(fleet.nginx_addr, &text).await;
        let done = answer(fleet.nginx_addr, &text, &state).await;
        assert!(
            text_of(&done).starts_with(&format!("wrote {text}")),
            "{}",
            done.message
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_is_read_and_cancelled_through_any_replica() {
    let Some(fleet) = start_fleet() else {
        return;
    };
    let (r0, r1, r2) = (
        fleet.replica_addr(0),
        fleet.replica_addr(1),
        fleet.replica_addr(2),
    );
    let id = start_slow(r0, 700).await;
    let seen = task(r1, "tasks/get", &id).await;
    assert_eq!(seen.result()["status"], "working", "{}", seen.message);
    let done = status_until(r2, &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "slept 700 at r0",
        "{done}"
    );
    let again = status_until(r1, &id, "completed", Duration::from_secs(1)).await;
    assert_eq!(again, done);
    // Cancelled through another replica: cancelled everywhere, whatever the call returns.
    let id = start_slow(r0, 30_000).await;
    let ack = task(r1, "tasks/cancel", &id).await;
    assert!(ack.message.get("result").is_some(), "{}", ack.message);
    status_until(r2, &id, "cancelled", Duration::from_secs(1)).await;
    status_until(r0, &id, "cancelled", Duration::from_secs(5)).await;
    // Another caller's task is no task of this one.
    let other = crate::mcp_wire::post_with(
        r1,
        "tasks/get",
        Some(&id),
        caps(),
        json!({"taskId": id}),
        &[("Authorization", "Bearer someone-else")],
    )
    .await;
    assert_eq!(other.error_code(), -32602, "{}", other.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_mid_task_leaves_the_task_failed_not_working() {
    let Some(mut fleet) = start_fleet() else {
        return;
    };
    let id = start_slow(fleet.replica_addr(0), 60_000).await;
    status_until(
        fleet.replica_addr(1),
        &id,
        "working",
        Duration::from_secs(1),
    )
    .await;
    fleet.kill_replica(0);
    let failed = status_until(
        fleet.replica_addr(1),
        &id,
        "failed",
        Duration::from_secs(10),
    )
    .await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("replica running this task (r0) stopped"),
        "{failed}"
    );
    // Every replica agrees.
    let same = status_until(fleet.replica_addr(2), &id, "failed", Duration::from_secs(1)).await;
    assert_eq!(same, failed);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_redis_down_what_needs_no_shared_state_answers_the_rest_fails_closed_and_all_recovers()
{
    let Some(mut fleet) = start_fleet() else {
        return;
    };
    let lb = fleet.nginx_addr;
    let pending = ask(lb, "pending").await;
    fleet.kill_redis();
    for i in 0..3 {
        let echo = call(
            lb,
            plain_caps(),
            "echo",
            json!({"name": "echo", "arguments": {"text": format!("e{i}")}}),
        )
        .await;
        assert_eq!(text_of(&echo), format!("e{i}"), "{}", echo.message);
        let asked = call(
            lb,
            plain_caps(),
            "write",
            json!({"name": "write", "arguments": {"text": "x"}}),
        )
        .await;
        assert_eq!(reason(&asked), "store_unavailable", "{}", asked.message);
        let task = call(
            lb,
            caps(),
            "slow",
            json!({"name": "slow", "arguments": {"ms": 1}}),
        )
        .await;
        assert_eq!(reason(&task), "store_unavailable", "{}", task.message);
    }
    // A state cannot be checked against the used ones: refused, never taken as unused.
    let refused = answer(lb, "pending", &pending).await;
    assert_eq!(reason(&refused), "store_unavailable", "{}", refused.message);
    fleet.restart_redis();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = call(
            lb,
            plain_caps(),
            "write",
            json!({"name": "write", "arguments": {"text": "back"}}),
        )
        .await;
        if r.message["result"]["resultType"] == "input_required" {
            break;
        }
        assert!(Instant::now() < deadline, "no recovery: {}", r.message);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let state = ask(lb, "back").await;
    let done = answer(lb, "back", &state).await;
    assert!(
        text_of(&done).starts_with("wrote back at r"),
        "{}",
        done.message
    );
    // The state issued before Redis went away was refused, not used: it still verifies, once.
    let late = answer(lb, "pending", &pending).await;
    assert!(
        text_of(&late).starts_with("wrote pending at r"),
        "{}",
        late.message
    );
    let again = answer(lb, "pending", &pending).await;
    assert_eq!(
        reason(&again),
        "approval_state_replayed",
        "{}",
        again.message
    );
}

/// The builder refuses a shared store without the fleet's key, and a fleet key without the
/// shared record of used states, saying why; with both, it serves.
#[test]
fn a_store_needs_the_fleets_key_and_a_key_needs_the_store() {
    use std::sync::Arc;
    use tool_core::mcp::state_key::StateKeys;
    use tool_core::mcp::{ExecutorBackend, McpServer};
    use tool_core::store::MemoryStore;
    use tool_core::{Executor, ExecutorConfig, Registry};

    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Registry::builder().build().expect("registry");
    let exec = Executor::new(Arc::new(registry), ExecutorConfig::new(dir.path())).expect("exec");
    let server = McpServer::new(ExecutorBackend::new(Arc::new(exec)));
    let store = Arc::new(MemoryStore::new());
    let keys = StateKeys::generate().expect("key");
    let e = server
        .clone()
        .with_store(store.clone())
        .check()
        .expect_err("a store without the key");
    assert!(e.to_string().contains("--state-key-file"), "{e}");
    let e = server
        .clone()
        .with_state_keys(keys.clone())
        .check()
        .expect_err("a key without the store");
    assert!(e.to_string().contains("used again"), "{e}");
    let e = server
        .clone()
        .with_replica_name("a/b")
        .check()
        .expect_err("a bad name");
    assert!(e.to_string().contains("replica name"), "{e}");
    let fleet = server
        .with_replica_name("r7")
        .with_state_keys(keys)
        .with_store(store);
    fleet.check().expect("a replica of a fleet");
    assert_eq!(fleet.replica_name(), "r7");
}

/// A mixed load through the fleet: every call checked, none lost or mixed up.
#[tokio::test(flavor = "multi_thread")]
async fn a_mixed_load_through_the_fleet_loses_or_mixes_up_nothing() {
    use tests::fleet_load::{run, Kind};
    let Some(fleet) = start_fleet() else {
        return;
    };
    let mix = [Kind::Echo, Kind::Approval, Kind::Task];
    let report = run(fleet.nginx_addr, 300, 8, &mix)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.calls.iter().map(|(_, n)| n).sum::<usize>(), 300);
}
