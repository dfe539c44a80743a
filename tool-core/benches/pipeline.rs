//! Per-call overhead of the executor pipeline (parse → lookup → validate → path guard →
//! dispatch → outcome, no-op audit) against the floor a bare program pays for the same work
//! (deserialize the call text into a typed struct, call the function directly), in the same run.
//!
//! Two pairs: `read_file` reads a small real file (the usual case), `constant` returns a constant
//! (pure overhead, no I/O).

use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk, ToolOutcome};

const READ_CALL: &str =
    r#"{"tool": "read_file", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const CONST_CALL: &str =
    r#"{"tool": "constant", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    #[allow(dead_code)]
    tool: String,
    args: ReadArgs,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

/// The tool body both sides run.
fn read_slice(path: &Path, offset: usize, limit: usize) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    Ok(text.chars().skip(offset).take(limit).collect())
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(ws.path().join("docs")).expect("dir");
    std::fs::write(ws.path().join("docs/notes.txt"), "x".repeat(512)).expect("file");
    let read = ToolDef::builder("read_file")
        .description("Read part of a text file")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .input_schema(schema())
        .handler(|_ctx, args| async move {
            let offset = args["offset"].as_u64().unwrap_or(0) as usize;
            let limit = args["limit"].as_u64().map_or(usize::MAX, |l| l as usize);
            read_slice(
                Path::new(args["path"].as_str().unwrap_or_default()),
                offset,
                limit,
            )
        })
        .build()
        .expect("tool");
    let constant = ToolDef::builder("constant")
        .description("Returns a constant")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .input_schema(schema())
        .handler(|_ctx, _args| async { ToolOutcome::ok("done") })
        .build()
        .expect("tool");
    let registry = Arc::new(
        Registry::builder()
            .tool(read)
            .tool(constant)
            .build()
            .expect("registry"),
    );
    let exec =
        Executor::new(registry, ExecutorConfig::new(ws.path()).error_budget(0)).expect("executor");
    let session = exec.new_session();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let root = exec.workspace().to_path_buf();

    let check = rt.block_on(exec.execute_text(&session, READ_CALL));
    assert!(check.is_ok(), "{check:?}");

    let mut g = c.benchmark_group("read_file");
    g.bench_function("floor", |b| {
        b.iter(|| {
            let call: Call = serde_json::from_str(std::hint::black_box(READ_CALL)).expect("parse");
            let a = call.args;
            read_slice(
                &root.join(&a.path),
                a.offset.unwrap_or(0),
                a.limit.unwrap_or(usize::MAX),
            )
        })
    });
    g.bench_function("pipeline", |b| {
        b.to_async(&rt)
            .iter(|| exec.execute_text(&session, std::hint::black_box(READ_CALL)))
    });
    g.finish();

    let mut g = c.benchmark_group("constant");
    g.bench_function("floor", |b| {
        b.iter(|| {
            let call: Call = serde_json::from_str(std::hint::black_box(CONST_CALL)).expect("parse");
            std::hint::black_box(call.args.path);
            "done"
        })
    });
    g.bench_function("pipeline", |b| {
        b.to_async(&rt)
            .iter(|| exec.execute_text(&session, std::hint::black_box(CONST_CALL)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
