//! Regression tests for the file-system attacks on the example tools, through the `call` command
//! run as a process with every approval granted (`--approve allow`): only the guards and the
//! workspace handle stand in the way. Canaries live next to the workspace, never inside it.
#![cfg(unix)]

use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::site::{snapshot, Site, CANARY};

/// A running `call` process: its input, and a thread collecting its output.
struct CallProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: std::thread::JoinHandle<String>,
}

impl CallProcess {
    fn start(ws: &Path, approve: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tool-examples"))
            .args(["call", "--workspace"])
            .arg(ws)
            .args(["--approve", approve, "--error-budget", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take();
        let mut out = child.stdout.take().expect("stdout is piped");
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        CallProcess {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &Value) {
        let stdin = self.stdin.as_mut().expect("input still open");
        writeln!(stdin, "{line}").expect("the process takes input");
    }

    /// End the input and wait for the process to exit (killing it after `deadline`), then return
    /// its result lines.
    fn finish(mut self, deadline: Duration) -> Vec<Value> {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "call exited with {status}");
                break;
            }
            if started.elapsed() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("`call` did not exit within {deadline:?} after its input ended");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = self.stdout.join().expect("stdout reader");
        out.lines()
            .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
            .collect()
    }
}

/// Atomically point the symlink `link` at `target` (a new link renamed over the old one).
fn repoint(link: &Path, target: &Path) {
    let tmp = link.with_extension("next");
    let _ = std::fs::remove_file(&tmp);
    symlink(target, &tmp).expect("symlink");
    std::fs::rename(&tmp, link).expect("rename over the link");
}

/// A thread flipping `link` between `a` and `b` while `work` runs; returns the flips made.
fn while_flipping(link: &Path, a: &str, b: &str, work: impl FnOnce(&AtomicU64)) -> u64 {
    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicU64::new(0));
    let thread = {
        let (stop, flips) = (Arc::clone(&stop), Arc::clone(&flips));
        let (link, a, b) = (link.to_path_buf(), PathBuf::from(a), PathBuf::from(b));
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                repoint(&link, if n % 2 == 0 { &b } else { &a });
                n += 1;
                flips.store(n, Ordering::Relaxed);
            }
            repoint(&link, &a);
        })
    };
    work(&flips);
    stop.store(true, Ordering::Relaxed);
    thread.join().expect("flipper");
    flips.load(Ordering::Relaxed)
}

/// Send lines from `line(i)` until at least `calls` are sent and the link flipped `flips` times
/// (on a busy machine the flipper may start late), within a minute.
fn send_while(
    p: &mut CallProcess,
    calls: usize,
    flips: u64,
    seen: &AtomicU64,
    line: impl Fn(usize) -> Value,
) {
    let started = Instant::now();
    let mut i = 0;
    while (i < calls || seen.load(Ordering::Relaxed) < flips)
        && started.elapsed() < Duration::from_secs(60)
    {
        p.send(&line(i));
        i += 1;
        if i % 64 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn call_write_file_with_a_call_id_that_climbs_out_neither_moves_nor_deletes_the_outside_file() {
    let f = Site::new();
    let mut p = CallProcess::start(&f.ws, "allow");
    p.send(
        &json!({"type": "tool_use", "id": "prep", "name": "write_file",
        "input": {"path": ".t.txt.tmp-../keep", "content": "k"}}),
    );
    p.send(
        &json!({"type": "tool_use", "id": "../../../outside/secret.txt", "name": "write_file",
        "input": {"path": "t.txt", "content": "mine"}}),
    );
    let out = p.finish(Duration::from_secs(30));
    assert_eq!(out.len(), 2);
    for line in &out {
        assert_eq!(line["status"], "ok", "{line}");
    }
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).expect("the canary is still there"),
        CANARY
    );
    assert_eq!(std::fs::read_dir(&f.outside).expect("ls").count(), 1);
    assert_eq!(
        std::fs::read_to_string(f.ws.join("t.txt")).expect("written"),
        "mine"
    );
}

#[test]
fn call_read_file_refuses_a_hard_link_to_an_outside_file() {
    let f = Site::new();
    std::fs::hard_link(f.outside.join("secret.txt"), f.ws.join("notes.txt")).expect("hard link");
    // The default approver denies everything: read_only runs without approval.
    let mut p = CallProcess::start(&f.ws, "deny");
    p.send(&json!({"tool": "read_file", "args": {"path": "notes.txt", "max_bytes": 100}}));
    let out = p.finish(Duration::from_secs(30));
    let all = serde_json::to_string(&out).expect("json");
    assert!(!all.contains(CANARY), "{all}");
    assert_eq!(out[0]["status"], "failed", "{all}");
    assert!(
        out[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("hard link"),
        "{all}"
    );
}

#[test]
fn call_read_file_through_a_symlink_swapped_between_check_and_open_never_prints_the_canary() {
    let f = Site::new();
    std::fs::write(f.ws.join("inside.txt"), "inside").expect("inside");
    let link = f.ws.join("flip");
    symlink("inside.txt", &link).expect("link");
    let mut out = Vec::new();
    let flips = while_flipping(&link, "inside.txt", "../outside/secret.txt", |seen| {
        let mut p = CallProcess::start(&f.ws, "allow");
        send_while(
            &mut p,
            640,
            640,
            seen,
            |_| json!({"tool": "read_file", "args": {"path": "flip", "max_bytes": 100}}),
        );
        out = p.finish(Duration::from_secs(60));
    });
    assert!(
        out.len() >= 640 && flips >= 640,
        "{} reads, {flips} flips",
        out.len()
    );
    let leaked = out
        .iter()
        .filter(|l| l.to_string().contains(CANARY))
        .count();
    assert_eq!(
        leaked,
        0,
        "{leaked} of {} reads printed the canary",
        out.len()
    );
    assert!(
        out.iter().any(|l| l["output"] == "inside"),
        "some reads ran while the link pointed inside"
    );
}

#[test]
fn call_read_file_on_a_fifo_returns_at_once_and_the_process_exits_when_its_input_ends() {
    let f = Site::new();
    let status = Command::new("mkfifo")
        .arg(f.ws.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    std::fs::write(f.ws.join("plain.txt"), "plain").expect("plain");
    let mut p = CallProcess::start(&f.ws, "allow");
    // More FIFO reads than tokio's blocking pool has threads (512), then a plain read.
    for _ in 0..520 {
        p.send(&json!({"tool": "read_file", "args": {"path": "pipe", "max_bytes": 100}}));
    }
    p.send(&json!({"tool": "read_file", "args": {"path": "plain.txt", "max_bytes": 100}}));
    let out = p.finish(Duration::from_secs(60));
    assert_eq!(out.len(), 521);
    for line in &out[..520] {
        assert_eq!(line["status"], "failed", "{line}");
        let message = line["message"].as_str().unwrap_or("");
        assert!(
            message.contains("FIFO") && message.contains("not a regular file"),
            "{line}"
        );
    }
    assert_eq!(out[520]["output"], "plain", "{}", out[520]);
}

#[test]
fn call_list_write_and_delete_through_a_directory_link_swapped_to_outside_stay_inside() {
    let f = Site::new();
    std::fs::write(f.outside.join("victim.txt"), CANARY).expect("outside victim");
    let inside = f.ws.join("inside_dir");
    std::fs::create_dir_all(&inside).expect("inside dir");
    std::fs::write(inside.join("victim.txt"), "inside victim").expect("inside victim");
    let link = f.ws.join("d");
    symlink("inside_dir", &link).expect("link");
    let before = snapshot(&f.outside);
    let mut out = Vec::new();
    let flips = while_flipping(&link, "inside_dir", "../outside", |seen| {
        let mut p = CallProcess::start(&f.ws, "allow");
        send_while(&mut p, 600, 600, seen, |i| match i % 3 {
            0 => json!({"tool": "list_dir", "args": {"path": "d"}}),
            1 => {
                json!({"tool": "write_file", "args": {"path": format!("d/new-{i}.txt"), "content": "pwned"}})
            }
            _ => json!({"tool": "delete_file", "args": {"path": "d/victim.txt"}}),
        });
        out = p.finish(Duration::from_secs(60));
    });
    assert!(
        out.len() >= 600 && flips >= 600,
        "{} calls, {flips} flips",
        out.len()
    );
    let all = serde_json::to_string(&out).expect("json");
    assert!(
        !all.contains("secret.txt") && !all.contains(CANARY),
        "outside entries reached the model"
    );
    assert_eq!(
        snapshot(&f.outside),
        before,
        "nothing outside was created, changed or deleted"
    );
    assert!(
        out.iter()
            .any(|l| l["status"] == "ok" && l["output"].as_str().unwrap_or("").starts_with("wrote")),
        "some writes landed inside"
    );
}
