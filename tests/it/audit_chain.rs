//! The audit log's hash chain: each line carries `seq` and the SHA-256 of the line before it, a
//! reopened log continues its chain, sinks of one process on one file share it, and
//! `verify_chain` / `verify-audit` name the first line that was edited, deleted, reordered,
//! inserted, cut or is not JSON.

use crate::exec_support;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use exec_support::{call, file_tools, registry, Runs};
use serde_json::{json, Value};
use tool_core::audit::{
    line_sha256, verify_chain, ChainBreak, ChainError, JsonlAuditSink, GENESIS_SHA256,
};
use tool_core::{CallOptions, Executor, ExecutorConfig};

/// Write `n` audited calls to `log` through a fresh sink (appending when it exists).
async fn write_calls(log: &Path, n: usize, tag: &str) {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("a.txt"), "A").expect("write");
    let runs = Runs::default();
    let sink = JsonlAuditSink::open(log).expect("open the log");
    let exec = Executor::new(
        registry(file_tools(&runs)),
        ExecutorConfig::new(ws.path()).audit(Arc::new(sink)),
    )
    .expect("executor");
    let s = exec.new_session();
    for i in 0..n {
        let c =
            call("read_file", json!({"path": "a.txt"})).with_id(format!("call_{tag}{i}0000000"));
        exec.execute(&s, c, CallOptions::default()).await;
    }
}

/// A clean log of six events, as lines (without `\n`).
async fn clean_log(dir: &Path) -> Vec<String> {
    let log = dir.join("audit.jsonl");
    write_calls(&log, 6, "c").await;
    let text = std::fs::read_to_string(&log).expect("log");
    text.lines().map(str::to_owned).collect()
}

fn verify_lines(lines: &[String]) -> Result<usize, ChainError> {
    let mut text = lines.join("\n");
    text.push('\n');
    verify_chain(text.as_bytes())
}

fn broken_at(result: Result<usize, ChainError>) -> (u64, ChainBreak) {
    match result {
        Err(ChainError::Broken { line, reason }) => (line, reason),
        other => panic!("expected a broken chain, got {other:?}"),
    }
}

#[tokio::test]
async fn a_clean_log_verifies_and_each_line_links_to_the_one_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = clean_log(dir.path()).await;
    assert_eq!(verify_lines(&lines).expect("a clean log verifies"), 6);
    let mut prev = GENESIS_SHA256.to_owned();
    for (i, line) in lines.iter().enumerate() {
        let v: Value = serde_json::from_str(line).expect("json");
        assert_eq!(v["seq"], json!(i + 1), "{line}");
        assert_eq!(v["prev_sha256"], json!(prev), "{line}");
        assert_eq!(v["scan"], "on", "{line}");
        prev = line_sha256(line.as_bytes());
    }
    assert_eq!(verify_chain(&b""[..]).expect("an empty log verifies"), 0);
}

#[tokio::test]
async fn an_edited_field_is_detected_at_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = clean_log(dir.path()).await;
    assert!(lines[2].contains(r#""status":"ok""#));
    lines[2] = lines[2].replace(
        r#""call_id":"call_c20000000""#,
        r#""call_id":"call_cX0000000""#,
    );
    assert_eq!(broken_at(verify_lines(&lines)), (3, ChainBreak::Edited));
}

#[tokio::test]
async fn a_deleted_line_is_detected_where_it_is_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = clean_log(dir.path()).await;
    lines.remove(2);
    assert_eq!(
        broken_at(verify_lines(&lines)),
        (3, ChainBreak::Deleted { count: 1 })
    );
    let mut lines = clean_log(dir.path()).await;
    lines.remove(0);
    assert_eq!(
        broken_at(verify_lines(&lines)),
        (1, ChainBreak::Deleted { count: 1 })
    );
}

#[tokio::test]
async fn two_swapped_lines_are_detected_as_reordered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut lines = clean_log(dir.path()).await;
    lines.swap(2, 3);
    assert_eq!(broken_at(verify_lines(&lines)), (3, ChainBreak::Reordered));
}

#[tokio::test]
async fn a_truncated_last_line_is_detected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = clean_log(dir.path()).await;
    let mut text = lines.join("\n");
    text.push('\n');
    let cut = text.len() - lines[5].len() / 2;
    assert_eq!(
        broken_at(verify_chain(&text.as_bytes()[..cut])),
        (6, ChainBreak::Truncated)
    );
    // Only the final newline gone: still a cut line.
    assert_eq!(
        broken_at(verify_chain(&text.as_bytes()[..text.len() - 1])),
        (6, ChainBreak::Truncated)
    );
}

#[tokio::test]
async fn an_inserted_forged_line_is_detected_at_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = clean_log(dir.path()).await;
    // A forger who links the new line correctly onto line 2 and gives it the right `seq`.
    let mut forged: Value = serde_json::from_str(&lines[1]).expect("json");
    forged["call_id"] = json!("forged");
    forged["seq"] = json!(3);
    forged["prev_sha256"] = json!(line_sha256(lines[1].as_bytes()));
    let mut tampered = lines.clone();
    tampered.insert(2, forged.to_string());
    assert_eq!(
        broken_at(verify_lines(&tampered)),
        (3, ChainBreak::Inserted)
    );
    // A verbatim copy of line 2 inserted after it.
    let mut tampered = lines.clone();
    tampered.insert(2, lines[1].clone());
    assert_eq!(
        broken_at(verify_lines(&tampered)),
        (3, ChainBreak::Inserted)
    );
}

#[tokio::test]
async fn a_line_that_is_not_json_or_not_chained_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = clean_log(dir.path()).await;
    let mut tampered = lines.clone();
    tampered.insert(4, "{not json".to_owned());
    assert_eq!(broken_at(verify_lines(&tampered)), (5, ChainBreak::NotJson));
    let mut tampered = lines.clone();
    tampered.insert(1, r#"{"status":"ok"}"#.to_owned());
    assert_eq!(
        broken_at(verify_lines(&tampered)),
        (2, ChainBreak::NotChained)
    );
}

#[tokio::test]
async fn a_reopened_log_continues_its_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    write_calls(&log, 3, "a").await;
    write_calls(&log, 3, "b").await;
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(verify_chain(text.as_bytes()).expect("one chain"), 6);
    let fourth: Value = serde_json::from_str(text.lines().nth(3).expect("line 4")).expect("json");
    assert_eq!(
        (fourth["seq"].clone(), fourth["call_id"].clone()),
        (json!(4), json!("call_b00000000"))
    );
}

#[tokio::test]
async fn a_log_ending_in_a_torn_line_is_not_reopened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    write_calls(&log, 2, "a").await;
    let mut text = std::fs::read_to_string(&log).expect("log");
    text.truncate(text.len() - 10);
    std::fs::write(&log, &text).expect("cut");
    let err = JsonlAuditSink::open(&log).expect_err("a torn log is refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
    std::fs::write(&log, "{\"legacy\":true}\n").expect("unchained");
    assert!(
        JsonlAuditSink::open(&log).is_err(),
        "an unchained log is refused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sinks_of_one_process_on_one_file_share_one_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let log = log.clone();
            tokio::spawn(async move { write_calls(&log, 10, &format!("w{w}-")).await })
        })
        .collect();
    for w in writers {
        w.await.expect("join");
    }
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(verify_chain(text.as_bytes()).expect("one chain"), 40);
}

#[tokio::test]
async fn verify_audit_exits_zero_on_a_clean_log_and_one_on_a_broken_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = clean_log(dir.path()).await;
    let empty = tool_core::Registry::builder().build().expect("registry");
    let log = dir.path().join("audit.jsonl");
    let path = log.to_str().expect("utf8 path");
    assert_eq!(
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", path]),
        ExitCode::SUCCESS
    );
    let head = line_sha256(lines[5].as_bytes());
    assert_eq!(
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", path, "--head", &head]),
        ExitCode::SUCCESS
    );
    let old_head = line_sha256(lines[4].as_bytes());
    assert_eq!(
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", path, "--head", &old_head]),
        ExitCode::from(1),
        "a head that is not the last line's"
    );
    let mut tampered = lines.clone();
    tampered.swap(1, 2);
    std::fs::write(&log, tampered.join("\n") + "\n").expect("tamper");
    assert_eq!(
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", path]),
        ExitCode::from(1)
    );
}
