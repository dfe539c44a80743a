//! Audit: one complete JSON line per call, written before the call returns, safe under concurrent
//! calls, chained into one hash chain, and never containing argument values.

use crate::exec_support;

use std::sync::Arc;

use exec_support::{call, file_tools, registry, Runs};
use serde_json::json;
use tool_core::approval::{ApprovalStatus, FixedApprover};
use tool_core::audit::{AuditEvent, JsonlAuditSink, MemoryAuditSink};
use tool_core::CallOptions;
use tool_core::{CallStatus, Executor, ExecutorConfig, ReasonCode, Risk};

const SECRET: &str = "hunter2-SECRET-TOKEN-9f8e7d";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn jsonl_lines_are_complete_under_concurrency_and_hold_no_argument_values() {
    let ws = tempfile::tempdir().expect("tempdir");
    let log_dir = tempfile::tempdir().expect("tempdir");
    let log = log_dir.path().join("audit.jsonl");
    let runs = Runs::default();
    let reg = registry(file_tools(&runs));
    let config = ExecutorConfig::new(ws.path())
        .approver(Arc::new(FixedApprover::allow()))
        .audit(Arc::new(JsonlAuditSink::open(&log).expect("open")))
        .error_budget(0);
    let exec = Arc::new(Executor::new(reg.clone(), config).expect("executor"));
    let s = exec.new_session();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (exec, s) = (exec.clone(), s.clone());
        tasks.push(tokio::spawn(async move {
            let c = match i % 4 {
                0 => call(
                    "write_file",
                    json!({"path": format!("f{i}.txt"), "content": SECRET}),
                ),
                1 => call(
                    "write_file",
                    json!({"path": format!("../{SECRET}.txt"), "content": SECRET}),
                ),
                2 => call("read_file", json!({"path": format!("f{}.txt", i - 2)})),
                _ => call("write_file", json!({"path": SECRET})),
            };
            exec.execute(&s, c, CallOptions::default()).await
        }));
    }
    for t in tasks {
        t.await.expect("join");
    }
    // Flushed before each call returned: everything is on disk now.
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        !text.contains(SECRET),
        "an argument value leaked into the audit log"
    );
    let events: Vec<AuditEvent> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is one complete event"))
        .collect();
    assert_eq!(events.len(), 40);
    assert_eq!(
        tool_core::audit::verify_chain(text.as_bytes()).expect("concurrent lines form one chain"),
        40
    );
    for e in &events {
        assert_eq!(e.registry_fingerprint, reg.fingerprint());
        assert_eq!(e.session, s.id());
        let hash = e.args_sha256.as_deref().unwrap_or_default();
        assert!(
            hash.is_empty() || (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
    let escapes = events
        .iter()
        .filter(|e| e.code == Some(ReasonCode::PathOutsideWorkspace))
        .count();
    assert_eq!(escapes, 10);
    let ids: std::collections::HashSet<&str> = events.iter().map(|e| e.call_id.as_str()).collect();
    assert_eq!(ids.len(), 40, "every call has its own id");
}

#[tokio::test]
async fn every_call_is_audited_with_its_decision() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("a.txt"), "A").expect("write");
    let sink = Arc::new(MemoryAuditSink::new());
    let runs = Runs::default();
    let exec = Executor::new(
        registry(file_tools(&runs)),
        ExecutorConfig::new(ws.path()).audit(sink.clone()),
    )
    .expect("executor");
    let s = exec.new_session();
    exec.execute(
        &s,
        call("read_file", json!({"path": "a.txt"})).with_id("r1"),
        CallOptions::default(),
    )
    .await;
    exec.execute(
        &s,
        call("read_file", json!({"path": "./a.txt"})),
        CallOptions::default(),
    )
    .await;
    exec.execute(
        &s,
        call("delete_file", json!({"path": "a.txt"})),
        CallOptions::default(),
    )
    .await;
    exec.execute_text(&s, "not json").await;
    let events = sink.events();
    assert_eq!(events.len(), 4);

    let e = &events[0];
    // `r1` is no provider's id shape: the audit records its hash.
    assert_eq!(
        (e.call_id.clone(), e.tool.as_deref()),
        (tool_core::audit::audit_call_id("r1"), Some("read_file"))
    );
    assert!(e.call_id.starts_with("sha256:"));
    assert_eq!(
        (e.status, e.code, e.risk, e.approval),
        (
            CallStatus::Ok,
            None,
            Some(Risk::ReadOnly),
            ApprovalStatus::NotRequired
        )
    );
    // The hash is over the final (normalized) arguments: two spellings of one path agree.
    assert!(e.args_sha256.is_some());
    assert_eq!(e.args_sha256, events[1].args_sha256);

    let e = &events[2];
    assert_eq!(
        (e.status, e.code, e.approval),
        (
            CallStatus::Refused,
            Some(ReasonCode::ApprovalDenied),
            ApprovalStatus::NoApprover
        )
    );
    assert_eq!(e.risk, Some(Risk::Destructive));

    let e = &events[3];
    assert_eq!(
        (e.tool.as_deref(), e.code, e.args_sha256.as_deref()),
        (None, Some(ReasonCode::MalformedCall), None)
    );
}
