//! A short version of the MCP load test (`scripts/bench-mcp-load.sh` runs the long one): many
//! concurrent rmcp clients over streamable HTTP against the example tools served with every
//! guard, each call's answer checked against the tool's own answer to that call's arguments.
//! Correctness only: none lost, none failed, none mixed up. And the checker itself: a server
//! that answers a call with another call's result fails the run.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tests::mcp_load::{self, Lifecycle, LoadError};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tool_core::mcp::ExecutorBackend;
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk};

struct Server {
    url: String,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(registry: Registry) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let executor = Executor::new(Arc::new(registry), ExecutorConfig::new(dir.path()))
        .expect("executor over a temp dir");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("listener");
    let url = mcp_load::url_of(listener.local_addr().expect("address"));
    let stop = CancellationToken::new();
    tokio::spawn(tool_core::mcp::serve_http_on(
        listener,
        ExecutorBackend::new(Arc::new(executor)),
        stop.clone(),
    ));
    Server {
        url,
        stop,
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_guarded_calls_from_sixteen_stateless_clients_all_come_back_right() {
    let server = serve(tool_examples::registry().expect("example registry")).await;
    // The server runs in this process: the CPU time watched is this process's.
    let me = std::process::id();
    let report =
        mcp_load::run_watching(&server.url, Lifecycle::Stateless, 16, 1000, "it", Some(me))
            .await
            .expect("every call answered with its own result");
    assert_eq!(report.calls, 1000);
    assert_eq!(report.revision, "2026-07-28");
    let cpu = report.server_cpu.expect("the CPU time of this process");
    assert!(
        cpu > std::time::Duration::ZERO,
        "1000 calls took no CPU time"
    );
}

/// `cpu_time` counts CPU time: it grows while a thread computes, by no more than the time passed
/// on the cores this process has.
#[test]
fn cpu_time_grows_with_computing_and_not_faster_than_the_clock() {
    use std::time::{Duration, Instant};
    let me = std::process::id();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let started = Instant::now();
    let before = mcp_load::cpu_time(me).expect("the CPU time of this process");
    let mut x = 1u64;
    loop {
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        let grown = mcp_load::cpu_time(me).expect("read again") - before;
        if grown >= Duration::from_millis(100) {
            // One tick of 10 ms of slack on each reading.
            let wall = started.elapsed() * cores + Duration::from_millis(20);
            assert!(
                grown <= wall,
                "{grown:?} of CPU time in {:?} on {cores} cores",
                started.elapsed()
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the CPU time did not grow while computing: {grown:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn session_clients_get_their_own_answers_too() {
    let server = serve(tool_examples::registry().expect("example registry")).await;
    let report = mcp_load::run(&server.url, Lifecycle::Session, 8, 200, "it")
        .await
        .expect("every call answered with its own result");
    assert_eq!(report.calls, 200);
    assert_eq!(report.revision, "2025-11-25");
}

/// A `get_weather` that answers each call with the previous call's result.
fn swapping_registry() -> Registry {
    let previous = Arc::new(Mutex::new(String::from("nowhere")));
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city", "unit"],
        "additionalProperties": false
    });
    let tool = ToolDef::builder(mcp_load::TOOL)
        .description("Answers with the previous call's city.")
        .input_schema(schema)
        .risk(Risk::Safe)
        .handler(move |_ctx, args: Value| {
            let previous = Arc::clone(&previous);
            async move {
                let city = args["city"].as_str().unwrap_or_default().to_owned();
                let unit = serde_json::from_value(args["unit"].clone()).expect("a unit");
                let answer_for = std::mem::replace(&mut *previous.lock().expect("lock"), city);
                tool_examples::get_weather(answer_for, unit).unwrap_or_default()
            }
        })
        .build()
        .expect("valid tool");
    Registry::builder().tool(tool).build().expect("registry")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_to_another_call_fails_the_run() {
    let server = serve(swapping_registry()).await;
    let err = mcp_load::run(&server.url, Lifecycle::Stateless, 4, 50, "it")
        .await
        .expect_err("a mixed-up answer is caught");
    assert!(matches!(err, LoadError::Mismatch { .. }), "{err}");
}
