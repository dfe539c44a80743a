//! Confinement with any `main`: `#[tool_core::main] async fn main` (the program is its own
//! helper, its runtime starts after the dispatch), a plain `#[tokio::main]` with a separate
//! helper binary (named, or beside the executable), and a `#[tokio::main]` that calls
//! `dispatch_helper()` too late with no helper beside it, which refuses at start-up with the fix
//! instead of failing at the first call.

use std::process::Command;

use serde_json::Value;

fn kernel_ready(test: &str) -> bool {
    crate::exec_support::kernel_ready(
        test,
        &["landlock-v7", "seccomp", "userns", "pidns", "mntns"],
    )
}

fn run(bin: &str, args: &[&str]) -> Value {
    let out = Command::new(bin).args(args).output().expect("start");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{bin}: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_tool_core_main_runs_scripts_confined_from_its_tokio_runtime() {
    if !kernel_ready("a_tool_core_main_runs_scripts_confined_from_its_tokio_runtime") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let ws = ws.path().to_str().expect("utf-8");
    let r = run(env!("CARGO_BIN_EXE_main_attr"), &[ws]);
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["tokio"], true, "{r}");
    assert!(r["output"].to_string().contains("confined from"), "{r}");
    let enforced = r["enforced"].as_str().unwrap_or("");
    assert!(enforced.contains("process: landlock-v"), "{r}");
}

#[test]
fn a_tokio_main_with_a_separate_helper_runs_scripts_confined() {
    if !kernel_ready("a_tokio_main_with_a_separate_helper_runs_scripts_confined") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let ws = ws.path().to_str().expect("utf-8");
    let r = run(
        env!("CARGO_BIN_EXE_tokio_main"),
        &["helper", ws, env!("CARGO_BIN_EXE_sandbox_helper")],
    );
    assert_eq!(r["start"], "ok", "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    assert!(
        r["enforced"]
            .as_str()
            .unwrap_or("")
            .contains("process: landlock-v"),
        "{r}"
    );
}

/// A copy of the `tokio_main` program in a directory of its own, with `tool-sandbox-exec` beside
/// it when `with_helper`.
fn tokio_main_alone(with_helper: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::copy(
        env!("CARGO_BIN_EXE_tokio_main"),
        dir.path().join("tokio_main"),
    )
    .expect("copy the program");
    if with_helper {
        std::fs::copy(
            env!("CARGO_BIN_EXE_sandbox_helper"),
            dir.path().join("tool-sandbox-exec"),
        )
        .expect("copy the helper");
    }
    dir
}

#[test]
fn a_tokio_main_that_dispatches_too_late_refuses_at_start_up_with_the_fix() {
    let ws = tempfile::tempdir().expect("ws");
    let ws = ws.path().to_str().expect("utf-8");
    // Alone: no `tool-sandbox-exec` beside it to fall back on.
    let alone = tokio_main_alone(false);
    let bin = alone.path().join("tokio_main");
    let r = run(bin.to_str().expect("utf-8"), &["late", ws]);
    assert_eq!(r["start"], "refused", "{r}");
    let m = r["message"].as_str().unwrap_or("");
    assert!(
        m.contains("run_bash")
            && m.contains("dispatch_helper()` ran after this program had started")
            && m.contains("#[tool_core::main]"),
        "{m}"
    );
}

#[test]
fn a_tokio_main_that_dispatches_too_late_uses_the_helper_beside_it() {
    // A `Cli` under `#[tokio::main]` dispatches late and cannot name a helper: the one beside the
    // executable confines its scripts.
    if !kernel_ready("a_tokio_main_that_dispatches_too_late_uses_the_helper_beside_it") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let ws = ws.path().to_str().expect("utf-8");
    let dir = tokio_main_alone(true);
    let bin = dir.path().join("tokio_main");
    let r = run(bin.to_str().expect("utf-8"), &["late", ws]);
    assert_eq!(r["start"], "ok", "{r}");
    assert_eq!(r["status"], "ok", "{r}");
    assert!(
        r["enforced"]
            .as_str()
            .unwrap_or("")
            .contains("process: landlock-v"),
        "{r}"
    );
}
