//! A sync `#[tool]` through the executor's confined workers, and an async `#[tool]` on its class's
//! confined runtime (the default, `ExecutorConfig::sandbox_async`), against the same async
//! `#[tool]` run unconfined, interleaved call by call so that load which comes and goes hits both alike; prints the median
//! and the mean of each and their ratios. `cargo bench -p tool-core --bench sync_ratio [-- CALLS]`;
//! `LOAD=N` runs N busy-loop processes beside the calls for the whole run.
//!
//! Criterion (`overhead`) reports means, which a few calls delayed by the machine (a thread that
//! was not scheduled for a while) move a lot on a small shared machine; the median says what a
//! call usually costs, the mean what the tail adds.

use std::sync::Arc;
use std::time::Instant;

#[path = "common/load.rs"]
mod load;

use tool_core::{Executor, ExecutorConfig, Registry, WorkspacePath};

/// Read a file.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
async fn read_async(path: WorkspacePath) -> Result<String, String> {
    std::fs::read_to_string(&path).map_err(|e| e.to_string())
}

/// Read a file (sync).
///
/// # Arguments
/// * `path` - the file, relative to the workspace
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
fn read_sync(path: WorkspacePath) -> Result<String, String> {
    std::fs::read_to_string(&path).map_err(|e| e.to_string())
}

/// Return a constant.
///
/// # Arguments
/// * `path` - a file, relative to the workspace
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
async fn noop_async(path: WorkspacePath) -> String {
    let _ = path;
    "done".to_owned()
}

/// Return a constant (sync).
///
/// # Arguments
/// * `path` - a file, relative to the workspace
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
fn noop_sync(path: WorkspacePath) -> String {
    let _ = path;
    "done".to_owned()
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v.iter().sum::<f64>() / v.len() as f64)
}

fn main() {
    if load::burn_if_asked() {
        return;
    }
    // `LOAD=N`: N busy-loop processes compete for the cores during the whole run.
    let _load = load::Load::start(
        std::env::var("LOAD").map_or(0, |n| n.parse().expect("LOAD: a number of processes")),
    );
    let calls: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let ws = tempfile::tempdir().expect("workspace");
    std::fs::write(ws.path().join("notes.txt"), "x".repeat(512)).expect("file");
    let registry = Arc::new(
        Registry::builder()
            .with_inventory()
            .build()
            .expect("registry"),
    );
    let mut config = ExecutorConfig::new(ws.path()).error_budget(0);
    // `SPIN_US=N` tries another `ExecutorConfig::sandbox_spin`.
    if let Ok(us) = std::env::var("SPIN_US") {
        let us = us.parse().expect("SPIN_US: microseconds");
        config = config.sandbox_spin(std::time::Duration::from_micros(us));
    }
    // The baseline: async tools unconfined, on the caller's runtime.
    let exec = Executor::new(Arc::clone(&registry), config.clone().sandbox_async(false))
        .expect("executor");
    // The default: async tools on their class's confined runtime (`ExecutorConfig::sandbox_async`).
    let exec_confined = Executor::new(registry, config).expect("executor");
    let session = exec.new_session();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "{calls} calls of each, interleaved with as many unconfined async calls (µs per call):"
    );
    for (name, async_call, sync_call) in [
        (
            "read_file",
            r#"{"tool":"read_async","args":{"path":"notes.txt"}}"#,
            r#"{"tool":"read_sync","args":{"path":"notes.txt"}}"#,
        ),
        (
            "noop",
            r#"{"tool":"noop_async","args":{"path":"notes.txt"}}"#,
            r#"{"tool":"noop_sync","args":{"path":"notes.txt"}}"#,
        ),
    ] {
        let check = rt.block_on(exec.execute_text(&session, sync_call));
        assert_eq!(
            check.enforced, "landlock-v7+seccomp",
            "the sync tool must run confined: {check:?}"
        );
        let check = rt.block_on(exec_confined.execute_text(&session, async_call));
        assert_eq!(check.enforced, "landlock-v7+seccomp", "{check:?}");
        let check = rt.block_on(exec.execute_text(&session, async_call));
        assert_eq!(
            check.enforced, "none",
            "the baseline runs unconfined: {check:?}"
        );
        // Two passes, each against the unconfined async call: the sync tool, then the async tool
        // on the confined runtime (mixing the two would have both kinds of idle thread compete
        // for the one core that may spin on a 2-core machine).
        for (label, other_exec, other_call) in [
            ("sync confined", &exec, sync_call),
            ("async confined", &exec_confined, async_call),
        ] {
            let (mut a, mut o) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
            rt.block_on(async {
                for _ in 0..calls {
                    let t = Instant::now();
                    let r = exec.execute_text(&session, async_call).await;
                    a.push(t.elapsed().as_secs_f64() * 1e6);
                    assert!(r.is_ok(), "{r:?}");
                    let t = Instant::now();
                    let r = other_exec.execute_text(&session, other_call).await;
                    o.push(t.elapsed().as_secs_f64() * 1e6);
                    assert!(r.is_ok(), "{r:?}");
                }
            });
            let ((a50, amean), (o50, omean)) = (stats(a), stats(o));
            println!(
                "{name:<10} {label:<15} median {o50:5.1} against async {a50:5.1} ({:.2}x); mean \
                 {omean:5.1} against {amean:5.1} ({:.2}x)",
                o50 / a50,
                omean / amean
            );
        }
    }
}
