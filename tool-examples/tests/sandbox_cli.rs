//! The example program's `call` as an attacker drives it: `--approve allow` (a human says yes to
//! everything), so only the guards and the kernel stand in the way. The program embeds the
//! sandbox helper (`tool_core::cli` dispatches to it first thing). Canaries lie outside the
//! workspace; each test is named after the attack.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use test_support::procs::{json_lines, per_run, wait_until_gone, Sentinel};

use common::{audit_log, intact, kernel_ready, site, Site, BIN, CANARY};

/// Runs `call --workspace WS --approve allow --audit FILE` on these lines; one result per line.
fn call(site: &Site, lines: &[String]) -> Vec<Value> {
    call_with(site, &[], lines)
}

fn call_with(site: &Site, extra: &[&str], lines: &[String]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .args(["call", "--workspace"])
        .arg(&site.ws)
        .args(["--approve", "allow", "--audit"])
        .arg(audit_log(site))
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("call starts");
    let mut input = child.stdin.take().expect("stdin");
    for l in lines {
        writeln!(input, "{l}").expect("write");
    }
    drop(input);
    json_lines(&child.wait_with_output().expect("call exits"))
}

fn bash(command: &str) -> String {
    serde_json::json!({"tool": "run_bash", "args": {"command": command}}).to_string()
}

fn audit(site: &Site) -> Vec<Value> {
    std::fs::read_to_string(audit_log(site))
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("audit line"))
        .collect()
}

#[test]
fn doctor_prints_what_the_kernel_offers() {
    let out = Command::new(BIN).arg("doctor").output().expect("doctor");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("kernel sandbox: "), "{text}");
    assert!(text.contains("this program (embedded)"), "{text}");
}

#[test]
fn run_bash_over_call_cannot_touch_a_canary_outside_the_workspace() {
    if !kernel_ready("call canary") {
        return;
    }
    let s = site();
    let c = s.canary.display();
    let results = call(
        &s,
        &[
            bash(&format!("cat {c}")),
            bash(&format!("echo gone > {c}")),
            // Not `rm -f`: the canary is not in the program's root at all, and `-f` ignores that.
            bash(&format!("rm {c}")),
            bash(&format!("cp {c} ./copy")),
            bash("echo inside > inside.txt && cat inside.txt"),
        ],
    );
    for r in &results[..4] {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(!r.to_string().contains(CANARY), "leaked: {r}");
    }
    assert!(intact(&s.canary));
    assert!(!s.ws.join("copy").exists());
    assert_eq!(results[4]["status"], "ok", "{}", results[4]);
    let events = audit(&s);
    let enforced = events[4]["enforced"].as_str().unwrap_or_default();
    assert!(enforced.contains("process: landlock-v"), "{}", events[4]);
}

#[test]
fn run_bash_over_call_with_kill_9_leaves_a_sentinel_alive() {
    if !kernel_ready("call kill -9") {
        return;
    }
    let s = site();
    let mut sentinel = Sentinel::start("300");
    let pid = sentinel.pid();
    let results = call(&s, &[bash(&format!("kill -9 {pid}; true"))]);
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    std::thread::sleep(Duration::from_millis(200));
    let alive = sentinel.alive();
    drop(sentinel);
    assert!(alive, "the sentinel was killed from inside the sandbox");
}

#[test]
fn run_bash_over_call_leaves_no_child_behind_and_times_out_as_timeout() {
    if !kernel_ready("call children") {
        return;
    }
    let s = site();
    let timeout = serde_json::json!({
        "tool": "run_bash",
        "args": {"command": per_run("sleep 3282"), "timeout_secs": 1}
    })
    .to_string();
    let results = call(
        &s,
        &[
            bash(&per_run(
                "(sleep 3281 &) ; setsid sleep 3281 & nohup sleep 3281 >/dev/null 2>&1 & echo ok",
            )),
            timeout,
        ],
    );
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    assert_eq!(results[1]["code"], "timeout", "{}", results[1]);
    let left = wait_until_gone("sleep 328", Duration::from_secs(3));
    assert!(
        left.is_empty(),
        "children outlived the `call` process: {left:?}"
    );
}

#[test]
fn call_with_sandbox_off_enforces_nothing_and_the_audit_says_so() {
    let s = site();
    let results = call_with(
        &s,
        &["--sandbox", "off"],
        &[
            bash("echo hi"),
            r#"{"tool": "read_file", "args": {"path": "missing.txt", "max_bytes": 8}}"#.into(),
        ],
    );
    assert_eq!(results[0]["status"], "ok", "{}", results[0]);
    let events = audit(&s);
    assert_eq!(
        events[0]["enforced"], "none; process: none",
        "{}",
        events[0]
    );
    assert_eq!(events[1]["enforced"], "none", "{}", events[1]);
}
