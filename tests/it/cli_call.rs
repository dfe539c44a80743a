//! `call` on the command line, as a new user would drive it: a hostile call stream with every
//! approval granted (`--approve allow`) changes and reveals nothing outside the workspace, and
//! every input line gets exactly one result line, in order.
#![cfg(unix)]

use crate::exec_support;

use std::os::unix::fs::symlink;

use exec_support::{file_tools, registry, Runs};
use serde_json::{json, Value};
use test_support::site::{snapshot, Site, CANARY};
use tool_core::audit::AuditEvent;
use tool_core::cli::call::{run_call, ApproveMode, CallArgs};

fn run(input: &str, args: &CallArgs) -> Vec<Value> {
    let runs = Runs::default();
    let mut out = Vec::new();
    run_call(
        registry(file_tools(&runs)),
        input.as_bytes(),
        &mut out,
        args,
    )
    .expect("call runs");
    exec_support::json_lines(out)
}

#[test]
fn a_hostile_stream_changes_nothing_outside_the_workspace() {
    let site = Site::new().with_file("mine.txt", "mine");
    let (ws, outside) = (site.ws.clone(), site.outside.clone());
    symlink(&outside, ws.join("door")).expect("link");
    symlink(outside.join("planted.txt"), ws.join("trap")).expect("link");
    symlink(outside.join("secret.txt"), ws.join("peek")).expect("link");
    let before = snapshot(&outside);
    let o = outside.display();

    let calls = [
        json!({"tool": "read_file", "args": {"path": "../outside/secret.txt"}}),
        json!({"tool": "read_file", "args": {"path": format!("{o}/secret.txt")}}),
        json!({"tool": "read_file", "args": {"path": "door/secret.txt"}}),
        json!({"tool": "read_file", "args": {"path": "peek"}}),
        json!({"tool": "list_dir", "args": {"path": "door"}}),
        json!({"tool": "list_dir", "args": {"path": ".."}}),
        json!({"tool": "write_file", "args": {"path": "../outside/pwned.txt", "content": "x"}}),
        json!({"tool": "write_file", "args": {"path": "trap", "content": "x"}}),
        json!({"tool": "write_file", "args": {"path": "door/pwned.txt", "content": "x"}}),
        json!({"tool": "write_file", "args": {"path": "peek", "content": "overwritten"}}),
        json!({"tool": "write_file", "args": {"path": "mine.txt\u{0}/../../outside/x", "content": "x"}}),
        json!({"tool": "move_file", "args": {"source": "mine.txt", "destination": "../outside/mine.txt"}}),
        json!({"tool": "move_file", "args": {"source": "door/secret.txt", "destination": "stolen.txt"}}),
        json!({"tool": "move_file", "args": {"source": "mine.txt", "destination": "door/mine.txt"}}),
        json!({"tool": "delete_file", "args": {"path": format!("{o}/secret.txt")}}),
        json!({"tool": "delete_file", "args": {"path": "door/secret.txt"}}),
        json!({"tool": "delete_file", "args": {"path": "sub/../../outside/secret.txt"}}),
        json!({"tool": "read_file", "args": {"path": "mine.txt", "offset": "0"}}),
        json!({"tool": "read_file", "args": {"path": "mine.txt", "extra": 1}}),
        json!({"tool": "exec", "args": {"cmd": "cat /etc/passwd"}}),
    ];
    let mut input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    // The legitimate work still happens, inside.
    input.push_str(&format!(
        "{}\n",
        json!({"tool": "write_file", "args": {"path": "new.txt", "content": "hello"}})
    ));
    input.push_str(&format!(
        "{}\n",
        json!({"tool": "read_file", "args": {"path": "new.txt"}})
    ));
    input.push('\n');
    input.push_str("read_file(path=\"x\") trailing garbage\n");

    let args = CallArgs {
        approve: ApproveMode::Allow,
        max_concurrency: 10,
        ..exec_support::call_args(&ws)
    };
    let out = run(&input, &args);

    assert_eq!(out.len(), calls.len() + 4, "one result line per input line");
    for (i, line) in out.iter().enumerate() {
        assert_eq!(line["line"], json!(i + 1));
        let keys: Vec<&str> = line
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["line", "tool", "status", "code", "message", "output"]
        );
    }
    for (i, line) in out.iter().take(calls.len()).enumerate() {
        assert_eq!(line["status"], json!("refused"), "line {}: {line}", i + 1);
    }
    let codes: Vec<&str> = out
        .iter()
        .map(|l| l["code"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        codes[..17]
            .iter()
            .filter(|c| **c == "path_outside_workspace")
            .count(),
        17,
        "{codes:?}"
    );
    assert_eq!(
        &codes[17..20],
        ["invalid_arguments", "invalid_arguments", "unknown_tool"]
    );
    assert_eq!(out[calls.len()]["status"], json!("ok"));
    assert_eq!(out[calls.len() + 1]["output"], json!("hello"));
    assert_eq!(
        (
            out[calls.len() + 2]["status"].as_str(),
            out[calls.len() + 2]["code"].as_str()
        ),
        (Some("refused"), Some("malformed_call"))
    );
    assert_eq!(out[calls.len() + 3]["code"], json!("malformed_call"));

    let all = serde_json::to_string(&out).expect("json");
    assert!(
        !all.contains(CANARY),
        "secret content leaked into the output"
    );
    assert_eq!(
        snapshot(&outside),
        before,
        "something changed outside the workspace"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("mine.txt")).expect("mine"),
        "mine"
    );
}

#[test]
fn deny_mode_refuses_mutations_and_audit_gets_one_line_per_call() {
    let ws = tempfile::tempdir().expect("tempdir");
    let logs = tempfile::tempdir().expect("tempdir");
    let audit = logs.path().join("audit.jsonl");
    std::fs::write(ws.path().join("a.txt"), "A").expect("write");
    let input = [
        json!({"tool": "read_file", "args": {"path": "a.txt"}}).to_string(),
        String::new(),
        json!({"tool": "write_file", "args": {"path": "b.txt", "content": "password=swordfish"}})
            .to_string(),
        "{broken".to_owned(),
    ]
    .join("\n");
    let args = CallArgs {
        audit: Some(audit.clone()),
        error_budget: 5,
        max_concurrency: 10,
        ..exec_support::call_args(ws.path())
    };
    let out = run(&input, &args);
    let statuses: Vec<&str> = out
        .iter()
        .map(|l| l["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["ok", "refused", "refused", "refused"]);
    assert_eq!(out[0]["output"], json!("A"));
    assert_eq!(out[2]["code"], json!("approval_denied"));
    assert!(!ws.path().join("b.txt").exists());
    // Blank lines are answered but not executed, so not audited.
    let text = std::fs::read_to_string(&audit).expect("audit");
    assert!(!text.contains("swordfish"));
    let events: Vec<AuditEvent> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("event"))
        .collect();
    assert_eq!(events.len(), 3);
}

#[test]
fn a_missing_workspace_is_an_error_not_a_fallback_to_the_cwd() {
    let runs = Runs::default();
    let args = CallArgs {
        approve: ApproveMode::Allow,
        error_budget: 5,
        max_concurrency: 10,
        ..exec_support::call_args(std::path::Path::new("/definitely/not/here"))
    };
    let mut out = Vec::new();
    assert!(run_call(registry(file_tools(&runs)), &b"{}\n"[..], &mut out, &args).is_err());
    assert!(out.is_empty());
}
