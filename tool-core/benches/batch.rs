//! Batches: 32 calls that each wait 20 ms (an async sleep) run as one batch, declared
//! concurrency-safe (bound 32, and the default bound of 10) against the same calls declared unsafe
//! (one at a time). Expected: about one call's time (20 ms) with bound 32, about four calls' time
//! with the default bound (a sliding window of 10 over 32 calls), about 32 × 20 ms unsafe.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Map};
use tool_core::call::ToolCall;
use tool_core::executor::BatchOptions;
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk, ToolOutcome};

const CALLS: usize = 32;
const NAP: Duration = Duration::from_millis(20);

fn nap(name: &str, concurrency_safe: bool) -> ToolDef {
    ToolDef::builder(name)
        .description("Sleep 20 ms")
        .risk(Risk::Safe)
        .concurrency_safe(concurrency_safe)
        .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        .handler(|_ctx, _args| async {
            tokio::time::sleep(NAP).await;
            ToolOutcome::ok("rested")
        })
        .build()
        .expect("nap tool")
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    let registry = Arc::new(
        Registry::builder()
            .tool(nap("nap_safe", true))
            .tool(nap("nap_unsafe", false))
            .build()
            .expect("registry"),
    );
    let executor = |bound: Option<usize>| {
        let mut config = ExecutorConfig::new(ws.path());
        if let Some(n) = bound {
            config = config.max_concurrency(n);
        }
        Executor::new(registry.clone(), config).expect("executor")
    };
    let calls = |name: &str| -> Vec<ToolCall> {
        (0..CALLS)
            .map(|_| ToolCall::new(name, Map::new()))
            .collect()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let mut group = c.benchmark_group("batch_32x20ms");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for (label, exec, name) in [
        ("safe_bound_32", executor(Some(CALLS)), "nap_safe"),
        ("safe_default_bound_10", executor(None), "nap_safe"),
        ("unsafe", executor(None), "nap_unsafe"),
    ] {
        let session = exec.new_session();
        let batch = calls(name);
        group.bench_function(label, |b| {
            b.to_async(&rt).iter(|| async {
                let results = exec
                    .run_batch(&session, batch.clone(), BatchOptions::default())
                    .await;
                assert!(results.iter().all(|r| r.is_ok()));
                results
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
