//! Batches: concurrency-safe calls overlap (observed, not timed), anything else splits the groups,
//! results and modifier merges follow call order, conflicting modifiers are reported and never
//! applied, approval finishes before a group starts, cancellation stops a running batch and
//! progress arrives in order.
//!
//! Waits that prove overlap have a generous timeout so a broken executor fails the test instead
//! of hanging it; no assertion depends on how long anything took.

use crate::exec_support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use exec_support::{call, registry, Runs, ScriptedApprover};
use serde_json::{json, Value};
use tokio::sync::{Barrier, Notify};
use tool_core::approval::{ApprovalDecision, FixedApprover};
use tool_core::audit::MemoryAuditSink;
use tool_core::call::ToolCall;
use tool_core::context::{progress_channel, CancellationToken};
use tool_core::executor::BatchOptions;
use tool_core::registry::ToolDef;
use tool_core::{
    CallResult, CallStatus, ContextModifier, Executor, ExecutorConfig, ReasonCode, Risk,
    ToolOutcome,
};

/// Longest a proof of overlap may wait before it gives up and fails the call.
const PATIENCE: Duration = Duration::from_secs(20);

fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

/// What the probe tools observe, shared between them and the test.
#[derive(Default)]
struct Probe {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    log: Mutex<Vec<String>>,
    barriers: Mutex<HashMap<String, Arc<Barrier>>>,
    done: Mutex<Vec<String>>,
    done_changed: Notify,
}

impl Probe {
    fn enter(&self, id: &str) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        self.log.lock().expect("log").push(format!("start {id}"));
    }

    fn leave(&self, id: &str) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.log.lock().expect("log").push(format!("end {id}"));
        self.done.lock().expect("done").push(id.to_owned());
        self.done_changed.notify_waiters();
    }

    fn barrier(&self, name: &str, size: usize) -> Arc<Barrier> {
        self.barriers
            .lock()
            .expect("barriers")
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(Barrier::new(size)))
            .clone()
    }

    async fn wait_done(&self, id: &str) -> bool {
        let wait = async {
            loop {
                let notified = self.done_changed.notified();
                if self.done.lock().expect("done").iter().any(|d| d == id) {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(PATIENCE, wait).await.is_ok()
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    fn position(&self, entry: &str) -> usize {
        self.log()
            .iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("`{entry}` not in the log {:?}", self.log()))
    }
}

/// `meet(id, group, size)`: concurrency-safe and read-only; waits until `size` calls of `group`
/// are inside at once (an error after [`PATIENCE`]), then returns the state entry `mark` it saw.
fn meet(probe: &Arc<Probe>) -> ToolDef {
    let p = probe.clone();
    ToolDef::builder("meet")
        .description("Wait for the rest of a group")
        .risk(Risk::ReadOnly)
        .concurrency_safe(true)
        .input_schema(schema(json!({
            "id": {"type": "string"},
            "group": {"type": "string"},
            "size": {"type": "integer", "minimum": 1}
        })))
        .handler(move |ctx, args| {
            let p = p.clone();
            async move {
                let id = args["id"].as_str().unwrap_or_default().to_owned();
                let group = args["group"].as_str().unwrap_or_default();
                let size = args["size"].as_u64().unwrap_or(1) as usize;
                p.enter(&id);
                let barrier = p.barrier(group, size);
                let met = tokio::time::timeout(PATIENCE, barrier.wait()).await.is_ok();
                let saw = ctx.state().get_value("mark").cloned();
                p.leave(&id);
                if met {
                    ToolOutcome::ok(json!({"id": id, "saw": saw}))
                } else {
                    ToolOutcome::error(format!("`{id}` never met the rest of `{group}`"))
                }
            }
        })
        .build()
        .expect("meet")
}

/// `mark(id, value)`: a mutation (not concurrency-safe) that records how many probes were in
/// flight when it started and sets `mark`.
fn mark(probe: &Arc<Probe>) -> ToolDef {
    let p = probe.clone();
    ToolDef::builder("mark")
        .description("Set the mark")
        .risk(Risk::Mutation)
        .input_schema(schema(json!({"id": {"type": "string"}, "value": {}})))
        .handler(move |_ctx, args| {
            let p = p.clone();
            async move {
                let id = args["id"].as_str().unwrap_or_default().to_owned();
                let busy = p.in_flight.load(Ordering::SeqCst);
                p.enter(&id);
                p.leave(&id);
                ToolOutcome::ok(json!({"busy": busy}))
                    .with_modifier(ContextModifier::new().with("mark", args["value"].clone()))
            }
        })
        .build()
        .expect("mark")
}

/// `after(id, wait_for?)`: concurrency-safe; finishes only once the call `wait_for` has finished,
/// so completion order can be forced against call order.
fn after(probe: &Arc<Probe>) -> ToolDef {
    let p = probe.clone();
    ToolDef::builder("after")
        .description("Finish after another call")
        .risk(Risk::Safe)
        .concurrency_safe(true)
        .input_schema(schema(
            json!({"id": {"type": "string"}, "wait_for": {"type": "string"}}),
        ))
        .handler(move |_ctx, args| {
            let p = p.clone();
            async move {
                let id = args["id"].as_str().unwrap_or_default().to_owned();
                p.enter(&id);
                let ok = match args["wait_for"].as_str() {
                    Some(other) => p.wait_done(other).await,
                    None => true,
                };
                p.leave(&id);
                if ok {
                    ToolOutcome::ok(json!(id))
                } else {
                    ToolOutcome::error("the awaited call never finished")
                }
            }
        })
        .build()
        .expect("after")
}

/// `set(id, key, value, wait_for?)`: a concurrency-safe mutation that sets `key`; with
/// `wait_for`, finishes after that call.
fn set(probe: &Arc<Probe>, runs: &Runs) -> ToolDef {
    let p = probe.clone();
    let r = runs.clone();
    ToolDef::builder("set")
        .description("Set a key")
        .risk(Risk::Mutation)
        .concurrency_safe(true)
        .input_schema(schema(json!({
            "id": {"type": "string"},
            "key": {"type": "string"},
            "value": {},
            "wait_for": {"type": "string"}
        })))
        .handler(move |_ctx, args| {
            let p = p.clone();
            r.hit();
            async move {
                let id = args["id"].as_str().unwrap_or_default().to_owned();
                p.enter(&id);
                let ok = match args["wait_for"].as_str() {
                    Some(other) => p.wait_done(other).await,
                    None => true,
                };
                p.leave(&id);
                if !ok {
                    return ToolOutcome::error("the awaited call never finished");
                }
                let key = args["key"].as_str().unwrap_or_default();
                ToolOutcome::ok(json!(id))
                    .with_modifier(ContextModifier::new().with(key, args["value"].clone()))
            }
        })
        .build()
        .expect("set")
}

/// `hold(id)`: concurrency-safe; tells the test it started, then runs until cancelled (an error
/// after [`PATIENCE`]).
/// Wait (at most [`PATIENCE`]) until `n` `hold` calls have started.
async fn wait_started(started: &Arc<(AtomicUsize, Notify)>, n: usize, what: &str) {
    let reached = async {
        loop {
            let notified = started.1.notified();
            if started.0.load(Ordering::SeqCst) == n {
                return;
            }
            notified.await;
        }
    };
    tokio::time::timeout(PATIENCE, reached).await.expect(what);
}

fn hold(started: &Arc<(AtomicUsize, Notify)>, runs: &Runs) -> ToolDef {
    let s = started.clone();
    let r = runs.clone();
    ToolDef::builder("hold")
        .description("Run until cancelled")
        .risk(Risk::Safe)
        .concurrency_safe(true)
        .input_schema(schema(json!({"id": {"type": "string"}})))
        .handler(move |ctx, _args| {
            let s = s.clone();
            r.hit();
            async move {
                s.0.fetch_add(1, Ordering::SeqCst);
                s.1.notify_waiters();
                if tokio::time::timeout(PATIENCE, ctx.cancellation().cancelled())
                    .await
                    .is_ok()
                {
                    ToolOutcome::ok("cancelled, but returned anyway")
                } else {
                    ToolOutcome::error("never cancelled")
                }
            }
        })
        .build()
        .expect("hold")
}

/// `count(id, n)`: concurrency-safe; reports progress 1..=n, yielding between reports.
fn count() -> ToolDef {
    ToolDef::builder("count")
        .description("Count with progress")
        .risk(Risk::Safe)
        .concurrency_safe(true)
        .input_schema(schema(
            json!({"id": {"type": "string"}, "n": {"type": "integer"}}),
        ))
        .handler(move |ctx, args| async move {
            let n = args["n"].as_u64().unwrap_or(0);
            for i in 1..=n {
                ctx.report_progress(i as f64, Some(n as f64), Some("counting"));
                tokio::task::yield_now().await;
            }
            ToolOutcome::ok(n)
        })
        .build()
        .expect("count")
}

fn c(name: &str, id: &str, args: Value) -> ToolCall {
    let mut args = args;
    args["id"] = json!(id);
    call(name, args).with_id(id)
}

fn executor(defs: Vec<ToolDef>, config: impl FnOnce(ExecutorConfig) -> ExecutorConfig) -> Executor {
    let dir = std::env::temp_dir();
    let config = config(ExecutorConfig::new(dir).approver(Arc::new(FixedApprover::allow())));
    Executor::new(registry(defs), config).expect("executor")
}

fn ids(results: &[CallResult]) -> Vec<&str> {
    results.iter().map(|r| r.call_id.as_str()).collect()
}

fn assert_all_ok(results: &[CallResult]) {
    for r in results {
        assert!(r.is_ok(), "{} did not succeed: {:?}", r.call_id, r.message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_safe_calls_overlap() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![meet(&probe)], |c| c);
    let s = exec.new_session();
    // Four calls that can only finish once all four are inside at the same time.
    let calls = (0..4)
        .map(|i| c("meet", &format!("m{i}"), json!({"group": "all", "size": 4})))
        .collect();
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    assert_eq!(probe.max_in_flight.load(Ordering::SeqCst), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_not_declared_concurrency_safe_run_one_at_a_time() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![mark(&probe)], |c| c);
    let s = exec.new_session();
    let calls = (0..4)
        .map(|i| c("mark", &format!("k{i}"), json!({"value": i})))
        .collect();
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    assert_eq!(probe.max_in_flight.load(Ordering::SeqCst), 1);
    for r in &results {
        assert_eq!(
            r.output.as_ref().expect("output")["busy"],
            0,
            "{}",
            r.call_id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_between_read_only_calls_splits_the_groups() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![meet(&probe), mark(&probe)], |c| c);
    let s = exec.new_session();
    let calls = vec![
        c("meet", "a1", json!({"group": "a", "size": 2})),
        c("meet", "a2", json!({"group": "a", "size": 2})),
        c("mark", "w", json!({"value": "written"})),
        c("meet", "b1", json!({"group": "b", "size": 2})),
        c("meet", "b2", json!({"group": "b", "size": 2})),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    // Each pair overlapped, the mutation ran alone between the pairs ...
    assert_eq!(results[2].output.as_ref().expect("out")["busy"], 0);
    let w = probe.position("start w");
    assert!(probe.position("end a1") < w && probe.position("end a2") < w);
    assert!(probe.position("start b1") > w && probe.position("start b2") > w);
    // ... and the calls after it saw its change; the calls before it did not.
    let saw = |i: usize| results[i].output.as_ref().expect("out")["saw"].clone();
    assert_eq!(saw(0), Value::Null);
    assert_eq!(saw(1), Value::Null);
    assert_eq!(saw(3), json!("written"));
    assert_eq!(saw(4), json!("written"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_come_back_in_call_order_whatever_the_completion_order() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![after(&probe)], |c| c);
    let s = exec.new_session();
    // x0 and x1 can only finish after x2: completion order is x2 first.
    let calls = vec![
        c("after", "x0", json!({"wait_for": "x1"})),
        c("after", "x1", json!({"wait_for": "x2"})),
        c("after", "x2", json!({})),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    assert!(probe.position("end x2") < probe.position("end x1"));
    assert!(probe.position("end x1") < probe.position("end x0"));
    assert_eq!(ids(&results), ["x0", "x1", "x2"]);
    let outputs: Vec<Value> = results
        .iter()
        .map(|r| r.output.clone().expect("out"))
        .collect();
    assert_eq!(outputs, [json!("x0"), json!("x1"), json!("x2")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modifiers_merge_in_call_order() {
    let probe = Arc::new(Probe::default());
    let runs = Runs::default();
    let audit = Arc::new(MemoryAuditSink::new());
    let a = audit.clone();
    let exec = executor(vec![set(&probe, &runs), mark(&probe)], |c| c.audit(a));
    let s = exec.new_session();
    // One concurrent group finishing in reverse order, then two sequential writes of one key.
    let calls = vec![
        c(
            "set",
            "s0",
            json!({"key": "k0", "value": 0, "wait_for": "s1"}),
        ),
        c("set", "s1", json!({"key": "k1", "value": 1})),
        c("mark", "m0", json!({"value": "first"})),
        c("mark", "m1", json!({"value": "second"})),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    assert!(probe.position("end s1") < probe.position("end s0"));
    assert!(results.iter().all(|r| r.modifier_applied));
    // Merging happens where the audit event is written: in call order.
    let order: Vec<String> = audit.events().into_iter().map(|e| e.call_id).collect();
    let ids = ["s0", "s1", "m0", "m1"].map(tool_core::audit::audit_call_id);
    assert_eq!(order, ids);
    let state = s.state();
    assert_eq!(state.get_value("k0"), Some(&json!(0)));
    assert_eq!(state.get_value("k1"), Some(&json!(1)));
    // The later call of the turn wins a key written by two sequential calls.
    assert_eq!(state.get_value("mark"), Some(&json!("second")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicting_modifiers_of_one_group_are_reported_and_neither_applied() {
    let probe = Arc::new(Probe::default());
    let runs = Runs::default();
    let exec = executor(vec![set(&probe, &runs), mark(&probe)], |c| c);
    let s = exec.new_session();
    let before = exec
        .run_batch(
            &s,
            vec![c("set", "seed", json!({"key": "shared", "value": "old"}))],
            BatchOptions::default(),
        )
        .await;
    assert_all_ok(&before);
    let calls = vec![
        c("set", "p", json!({"key": "shared", "value": "from p"})),
        c("set", "q", json!({"key": "own", "value": "from q"})),
        c("set", "r", json!({"key": "shared", "value": "from r"})),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_eq!(ids(&results), ["p", "q", "r"]);
    for r in [&results[0], &results[2]] {
        assert_eq!(r.status, CallStatus::Failed, "{}", r.call_id);
        assert_eq!(r.code, Some(ReasonCode::ModifierConflict));
        assert!(!r.modifier_applied);
        assert!(r.modifier.is_some(), "the held-back change is returned");
        let msg = r.message.as_deref().expect("message");
        assert!(msg.contains("`shared`"), "{msg}");
    }
    assert!(results[0].message.as_deref().expect("m").contains("`r`"));
    assert!(results[2].message.as_deref().expect("m").contains("`p`"));
    assert!(results[1].is_ok() && results[1].modifier_applied);
    let state = s.state();
    assert_eq!(
        state.get_value("shared"),
        Some(&json!("old")),
        "not overwritten"
    );
    assert_eq!(state.get_value("own"), Some(&json!("from q")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_is_fully_approved_before_any_of_it_runs_and_a_refusal_stops_nothing_else() {
    let probe = Arc::new(Probe::default());
    let runs = Runs::default();
    let approver = ScriptedApprover::new([
        ApprovalDecision::Approve,
        ApprovalDecision::Deny {
            reason: "not this one".into(),
        },
        ApprovalDecision::Approve,
    ]);
    // Record, at each approval, how many handlers had started.
    let seen_runs = Arc::new(Mutex::new(Vec::new()));
    let (sr, rr) = (seen_runs.clone(), runs.clone());
    let exec = executor(vec![set(&probe, &runs)], |c| {
        c.approver(approver.clone())
            .argument_filter(move |_decl, _args| {
                sr.lock().expect("lock").push(rr.count());
                Ok(())
            })
    });
    let s = exec.new_session();
    let calls = vec![
        c("set", "a", json!({"key": "a", "value": 1})),
        c("set", "b", json!({"key": "b", "value": 2})),
        call("set", json!({"id": "bad", "key": 7})).with_id("bad"),
        c("set", "d", json!({"key": "d", "value": 4})),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_eq!(
        approver.seen().len(),
        3,
        "the invalid call never reaches approval"
    );
    assert_eq!(*seen_runs.lock().expect("lock"), [0, 0, 0, 0]);
    assert!(results[0].is_ok());
    assert_eq!(results[1].code, Some(ReasonCode::ApprovalDenied));
    assert_eq!(results[2].code, Some(ReasonCode::InvalidArguments));
    assert!(results[3].is_ok());
    assert_eq!(runs.count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_running_batch_stops_it() {
    let started = Arc::new((AtomicUsize::new(0), Notify::new()));
    let probe = Arc::new(Probe::default());
    let runs = Runs::default();
    let exec = executor(vec![hold(&started, &runs), mark(&probe)], |c| c);
    let s = exec.new_session();
    let token = CancellationToken::new();
    let calls = vec![
        c("hold", "h0", json!({})),
        c("hold", "h1", json!({})),
        c("mark", "later", json!({"value": 1})),
        c("hold", "h2", json!({})),
    ];
    let batch = exec.run_batch(&s, calls, BatchOptions::new().cancellation(token.clone()));
    let cancel = async {
        wait_started(&started, 2, "both holds started").await;
        token.cancel();
    };
    let (results, ()) = tokio::join!(batch, cancel);
    assert_eq!(ids(&results), ["h0", "h1", "later", "h2"]);
    for r in &results[..2] {
        assert_eq!(
            (r.status, r.code),
            (CallStatus::Failed, Some(ReasonCode::Cancelled))
        );
    }
    for r in &results[2..] {
        assert_eq!(
            (r.status, r.code),
            (CallStatus::Refused, Some(ReasonCode::Cancelled))
        );
    }
    assert_eq!(runs.count(), 2, "nothing started after the cancellation");
    assert!(probe.log().is_empty());
    assert_eq!(s.state().get_value("mark"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_all_on_the_session_stops_a_running_batch() {
    let started = Arc::new((AtomicUsize::new(0), Notify::new()));
    let runs = Runs::default();
    let exec = executor(vec![hold(&started, &runs)], |c| c.max_concurrency(1));
    let s = exec.new_session();
    let calls = vec![c("hold", "h0", json!({})), c("hold", "h1", json!({}))];
    let batch = exec.run_batch(&s, calls, BatchOptions::default());
    let cancel = async {
        wait_started(&started, 1, "h0 started").await;
        s.cancel_all();
    };
    let (results, ()) = tokio::join!(batch, cancel);
    assert_eq!(results[0].code, Some(ReasonCode::Cancelled));
    assert_eq!(results[0].status, CallStatus::Failed);
    assert_eq!(results[1].code, Some(ReasonCode::Cancelled));
    assert_eq!(results[1].status, CallStatus::Refused);
    assert_eq!(runs.count(), 1);
    // The session itself is not stopped: the next batch runs.
    let again = exec.run_batch(
        &s,
        vec![call("hold", json!({"id": "x"}))],
        BatchOptions::default(),
    );
    let (res, ()) = tokio::join!(again, async {
        wait_started(&started, 2, "x started").await;
        s.cancel_all();
    });
    assert_eq!(res[0].status, CallStatus::Failed, "it started, so it ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_is_bounded_by_the_configured_limit() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![meet(&probe)], |c| c.max_concurrency(2));
    let s = exec.new_session();
    // Pairs must meet (so two run at once), and never more than two do.
    let calls = (0..6)
        .map(|i| {
            c(
                "meet",
                &format!("m{i}"),
                json!({"group": "pairs", "size": 2}),
            )
        })
        .collect();
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    assert_all_ok(&results);
    assert_eq!(probe.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_events_arrive_in_order_per_call() {
    let exec = executor(vec![count()], |c| c);
    let s = exec.new_session();
    let (sink, mut rx) = progress_channel();
    let calls = vec![
        c("count", "p0", json!({"n": 40})),
        c("count", "p1", json!({"n": 40})),
    ];
    let results = exec
        .run_batch(&s, calls, BatchOptions::new().progress(sink))
        .await;
    assert_all_ok(&results);
    let mut seen: HashMap<String, Vec<f64>> = HashMap::new();
    while let Ok(p) = rx.try_recv() {
        assert_eq!(p.total, Some(40.0));
        seen.entry(p.call_id).or_default().push(p.progress);
    }
    let expected: Vec<f64> = (1..=40).map(f64::from).collect();
    assert_eq!(seen.get("p0"), Some(&expected));
    assert_eq!(seen.get("p1"), Some(&expected));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unparsed_and_unknown_calls_are_refused_in_place() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![after(&probe)], |c| c);
    let s = exec.new_session();
    let parsed = vec![
        Ok(c("after", "x0", json!({}))),
        Err(tool_core::call::ParseError::new("not a call")),
        Ok(c("nope", "x2", json!({}))),
        Ok(c("after", "x3", json!({}))),
    ];
    let results = exec.run_batch(&s, parsed, BatchOptions::new()).await;
    assert_eq!(results.len(), 4);
    assert!(results[0].is_ok() && results[3].is_ok());
    assert_eq!(results[1].code, Some(ReasonCode::MalformedCall));
    assert_eq!(results[2].code, Some(ReasonCode::UnknownTool));
    assert_eq!(results[2].call_id, "x2");
}

#[test]
fn the_cli_answers_a_batch_line_with_one_array_line() {
    use tool_core::cli::call::{run_call, CallArgs};
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("a.txt"), "A").expect("a");
    let runs = Runs::default();
    let batch = json!([
        {"tool": "read_file", "args": {"path": "a.txt"}},
        {"tool": "list_dir", "args": {"path": "."}},
        {"tool": "read_file", "args": {"path": "a.txt"}, "extra": 1},
        {"tool": "read_file", "args": {"path": "../escape"}},
    ]);
    let input = format!(
        "{batch}\n{}\n[]\n[not json\n",
        json!({"tool": "read_file", "args": {"path": "a.txt"}})
    );
    let args = CallArgs {
        batch: true,
        ..exec_support::call_args(ws.path())
    };
    let mut out = Vec::new();
    run_call(
        registry(exec_support::file_tools(&runs)),
        input.as_bytes(),
        &mut out,
        &args,
    )
    .expect("call runs");
    let lines: Vec<Value> = exec_support::json_lines(out);
    assert_eq!(lines.len(), 4, "one answer line per input line");
    let turn = lines[0]
        .as_array()
        .expect("a batch line is answered with an array");
    assert_eq!(turn.len(), 4);
    for (i, r) in turn.iter().enumerate() {
        assert_eq!(r["line"], 1);
        assert_eq!(r["index"], i);
    }
    assert_eq!(turn[0]["output"], "A");
    assert_eq!(turn[1]["output"], json!(["a.txt"]));
    assert_eq!(turn[2]["code"], "malformed_call");
    assert_eq!(turn[3]["code"], "path_outside_workspace");
    assert_eq!(lines[1]["output"], "A", "a single call is served as before");
    assert_eq!(lines[2], json!([]));
    assert_eq!(lines[3]["code"], "malformed_call");
    assert_eq!(runs.count(), 3);
}
