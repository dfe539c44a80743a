//! The keyed audit chain end to end: `call --audit-key` writes a keyed log, `verify-audit --key`
//! detects what the unkeyed chain cannot (a middle edit with the hash chain recomputed, a cut
//! tail, an appended forgery, an emptied file), and `call` refuses to append to a log changed
//! since its last checkpoint (`audit_tampered`).
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::Value;
use tool_core::audit::{line_sha256, GENESIS_SHA256};
use tool_core::cli::call::{run_call, CallArgs, CallCommandError};
use tool_core::ReasonCode;

use crate::exec_support::{file_tools, registry, Runs};

struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    log: PathBuf,
    key: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("ws");
    std::fs::write(ws.join("a.txt"), "A").expect("write");
    let key = dir.path().join("audit.key");
    std::fs::write(&key, [0x42u8; 32]).expect("key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let log = dir.path().join("audit.jsonl");
    Setup {
        _dir: dir,
        ws,
        log,
        key,
    }
}

fn call(s: &Setup, n: usize) -> Result<(), CallCommandError> {
    let args = CallArgs {
        audit: Some(s.log.clone()),
        audit_key: Some(s.key.clone()),
        max_concurrency: 1,
        ..crate::exec_support::call_args(&s.ws)
    };
    let input = r#"{"tool": "read_file", "args": {"path": "a.txt"}}"#.to_owned() + "\n";
    let runs = Runs::default();
    let mut out = Vec::new();
    run_call(
        registry(file_tools(&runs)),
        input.repeat(n).as_bytes(),
        &mut out,
        &args,
    )
}

fn verify(s: &Setup, keyed: bool) -> ExitCode {
    let empty = tool_core::Registry::builder().build().expect("registry");
    let log = s.log.to_str().expect("utf8");
    let key = s.key.to_str().expect("utf8");
    if keyed {
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", log, "--key", key])
    } else {
        tool_core::cli::run_with(&empty, ["prog", "verify-audit", log])
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write(path: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("write");
}

/// Recompute the hash chain from line `from` on, keeping the MACs (no key).
fn rechain(lines: &mut [String], from: usize) {
    for i in from..lines.len() {
        let prev = if i == 0 {
            GENESIS_SHA256.to_owned()
        } else {
            line_sha256(lines[i - 1].as_bytes())
        };
        let mut v: Value = serde_json::from_str(&lines[i]).expect("json");
        v["seq"] = Value::from(i as u64 + 1);
        v["prev_sha256"] = Value::from(prev);
        lines[i] = v.to_string();
    }
}

fn refused_as_tampered(s: &Setup) {
    match call(s, 1) {
        Err(CallCommandError::AuditLog(e)) => {
            assert_eq!(e.reason_code(), Some(ReasonCode::AuditTampered), "{e}");
        }
        other => panic!("expected audit_tampered, got {other:?}"),
    }
}

#[test]
fn a_keyed_log_verifies_and_continues_across_runs() {
    let s = setup();
    call(&s, 3).expect("first run");
    call(&s, 2).expect("second run continues the log");
    assert_eq!(verify(&s, true), ExitCode::SUCCESS);
    let ls = lines(&s.log);
    // open, 3 events, close, 2 events, close.
    assert_eq!(ls.len(), 8);
    assert!(ls.iter().all(|l| l.contains("\"mac\":\"")));
}

#[test]
fn a_middle_edit_with_the_chain_recomputed_passes_unkeyed_and_fails_keyed() {
    let s = setup();
    call(&s, 4).expect("run");
    let mut ls = lines(&s.log);
    ls[2] = ls[2].replace("\"approval\":\"not_required\"", "\"approval\":\"approved\"");
    rechain(&mut ls, 2);
    write(&s.log, &ls);
    assert_eq!(
        verify(&s, false),
        ExitCode::SUCCESS,
        "the unkeyed chain cannot tell"
    );
    assert_eq!(verify(&s, true), ExitCode::from(1));
    refused_as_tampered(&s);
}

#[test]
fn a_cut_tail_an_appended_forgery_and_an_emptied_log_fail_keyed() {
    let s = setup();
    call(&s, 4).expect("run");
    let clean = lines(&s.log);
    let attacks: Vec<(&str, Vec<String>)> = vec![
        ("cut tail", clean[..clean.len() - 2].to_vec()),
        ("cut close", clean[..clean.len() - 1].to_vec()),
        ("appended forgery", {
            let mut ls = clean.clone();
            ls.push(clean[2].clone());
            let n = ls.len();
            rechain(&mut ls, n - 1);
            ls
        }),
        ("deletion", {
            let mut ls = clean.clone();
            ls.remove(2);
            rechain(&mut ls, 2);
            ls
        }),
        ("emptied", Vec::new()),
    ];
    for (what, ls) in attacks {
        write(&s.log, &ls);
        if what != "emptied" {
            let unkeyed = verify(&s, false);
            if what != "appended forgery" && what != "deletion" {
                assert_eq!(
                    unkeyed,
                    ExitCode::SUCCESS,
                    "{what}: the unkeyed chain cannot tell"
                );
            }
        }
        assert_eq!(verify(&s, true), ExitCode::from(1), "{what}");
        refused_as_tampered(&s);
    }
}

#[test]
fn a_key_file_readable_by_others_or_too_short_is_refused() {
    let s = setup();
    std::fs::set_permissions(&s.key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let err = call(&s, 1).expect_err("group-readable key");
    assert!(err.to_string().contains("chmod 600"), "{err}");
    assert_eq!(verify(&s, true), ExitCode::from(1));
    std::fs::set_permissions(&s.key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::write(&s.key, [1u8; 16]).expect("short key");
    let err = call(&s, 1).expect_err("short key");
    assert!(err.to_string().contains("16 bytes"), "{err}");
    assert!(!s.log.exists() || lines(&s.log).is_empty());
}
