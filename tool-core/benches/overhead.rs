//! Per-call overhead against peers, measured side by side in one run, on the same 3-argument call
//! text and the same function body:
//!
//! - `floor`: deserialize the call text into a typed struct, call the function directly;
//! - `floor_lstat`: the floor plus one `lstat` per component of the call's path (`docs`,
//!   `docs/notes.txt`), the walk the path guard made before its `openat2` check;
//! - `floor_beneath`: the floor plus the check the path guard makes now, one `openat2` of the
//!   path as `O_PATH` beneath the workspace's directory handle with no symlink allowed: the
//!   floor of any pipeline that checks a path on disk per call;
//! - `floor_hop`: the floor run on a plain thread of its own, handed over and back through two
//!   `std::sync::mpsc` channels per call (the caller blocks on the reply): what any design that
//!   runs a handler on another thread than its caller's pays at least, for comparison with the
//!   confined variants, quiet and loaded;
//! - `floor_spin_hop` (quiet groups only): the floor run on a thread of its own that both sides
//!   hand over to by polling one atomic, no sleep and no system call: the least a hop to another
//!   thread costs while the machine has a core to spare;
//! - `floor_confined_hop` (quiet groups only): the same, with that thread first confined as the
//!   executor confines a `read_only` tool's threads (Landlock + seccomp, `tool_sandbox`): beside
//!   `floor_spin_hop`, what the kernel's checks of a confined handler's own system calls cost;
//! - `naive`: parse the text, validate the arguments with a compiled `jsonschema` validator,
//!   deserialize them into the typed struct, call the function;
//! - `rmcp`: deserialize the text into rmcp's `CallToolRequestParams` and dispatch through
//!   rmcp's in-process `ToolRouter` (`#[tool_router]` / `#[tool]`), which deserializes into
//!   `Parameters<T>` but does not validate against the schema;
//! - `pipeline`: the executor on the same text (parse → lookup → validate → path guard →
//!   dispatch → outcome, no approver needed for read-only tools, no-op audit), calling an async
//!   `#[tool]` function unconfined (`sandbox_async(false)`);
//! - `pipeline_sync`: the same with a sync `#[tool]` function, run on a worker of the executor's
//!   confined pool for its class (Landlock + seccomp; see `tool_core::sandbox`);
//! - `pipeline_sync_spawn_blocking`: the same sync function with the sandbox off
//!   (`Mode::Off`), so on tokio's blocking pool (`spawn_blocking`), as before confinement;
//! - `pipeline_async_confined`: the async function on its class's confined runtime (the
//!   default, `ExecutorConfig::sandbox_async`);
//! - `pipeline_dyn`: the same with a dynamic tool (`ToolDef::builder`, a closure over the
//!   validated JSON arguments, no typed deserialize).
//!
//! Two groups: `read_file` reads a small real file (the usual case), `noop` returns a constant
//! (pure overhead). Both run twice: quiet, then as `read_file_loaded` and `noop_loaded` while as
//! many busy-loop processes as the machine has cores compete for them (`OVERHEAD_LOAD=N` for N
//! processes, `0` to leave the loaded groups out), so that one run shows what contention costs
//! each variant.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{criterion_group, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, NumberOrString};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{tool, tool_router, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::registry::ToolDef;
use tool_core::{Executor, ExecutorConfig, Registry, Risk, ToolOutcome, WorkspacePath};

#[path = "common/load.rs"]
mod load;

const READ_CALL: &str =
    r#"{"tool": "read_part", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const READ_CALL_SYNC: &str =
    r#"{"tool": "read_part_sync", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const NOOP_CALL: &str =
    r#"{"tool": "noop", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const NOOP_CALL_SYNC: &str =
    r#"{"tool": "noop_sync", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const READ_CALL_DYN: &str =
    r#"{"tool": "read_part_dyn", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const NOOP_CALL_DYN: &str =
    r#"{"tool": "noop_dyn", "args": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const MCP_READ_CALL: &str =
    r#"{"name": "read_part", "arguments": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;
const MCP_NOOP_CALL: &str =
    r#"{"name": "noop", "arguments": {"path": "docs/notes.txt", "offset": 2, "limit": 64}}"#;

/// The function body every variant runs.
fn read_slice(path: &Path, offset: u32, limit: u32) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    Ok(text
        .chars()
        .skip(offset as usize)
        .take(limit as usize)
        .collect())
}

/// Read part of a text file.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `offset` - characters to skip
/// * `limit` - most characters to return
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
async fn read_part(
    path: WorkspacePath,
    offset: Option<u32>,
    limit: Option<u32>,
) -> Result<String, String> {
    read_slice(&path, offset.unwrap_or(0), limit.unwrap_or(u32::MAX))
}

/// Read part of a text file (sync).
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `offset` - characters to skip
/// * `limit` - most characters to return
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
fn read_part_sync(
    path: WorkspacePath,
    offset: Option<u32>,
    limit: Option<u32>,
) -> Result<String, String> {
    read_slice(&path, offset.unwrap_or(0), limit.unwrap_or(u32::MAX))
}

/// Return a constant.
///
/// # Arguments
/// * `path` - a file, relative to the workspace
/// * `offset` - unused
/// * `limit` - unused
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
async fn noop(path: WorkspacePath, offset: Option<u32>, limit: Option<u32>) -> String {
    let _ = (path, offset, limit);
    "done".to_owned()
}

/// Return a constant (sync).
///
/// # Arguments
/// * `path` - a file, relative to the workspace
/// * `offset` - unused
/// * `limit` - unused
#[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
fn noop_sync(path: WorkspacePath, offset: Option<u32>, limit: Option<u32>) -> String {
    let _ = (path, offset, limit);
    "done".to_owned()
}

/// The schema of the dynamic tools: what the `#[tool]` ones get, written by hand.
fn dyn_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "offset": {"type": ["integer", "null"], "minimum": 0},
            "limit": {"type": ["integer", "null"], "minimum": 0}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

/// The two tools again, as dynamic tools whose handlers read the validated JSON arguments.
fn dyn_tools() -> [ToolDef; 2] {
    let read = ToolDef::builder("read_part_dyn")
        .description("Read part of a text file")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .concurrency_safe(true)
        .input_schema(dyn_schema())
        .handler(|_ctx, args| async move {
            let offset = args["offset"].as_u64().unwrap_or(0) as u32;
            let limit = args["limit"].as_u64().map_or(u32::MAX, |l| l as u32);
            read_slice(
                Path::new(args["path"].as_str().unwrap_or_default()),
                offset,
                limit,
            )
        })
        .build()
        .expect("tool");
    let noop = ToolDef::builder("noop_dyn")
        .description("Return a constant")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .concurrency_safe(true)
        .input_schema(dyn_schema())
        .handler(|_ctx, _args| async { ToolOutcome::ok("done") })
        .build()
        .expect("tool");
    [read, noop]
}

/// The arguments, as a hand-written program (and rmcp) declares them.
#[derive(Deserialize, rmcp::schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// the file, relative to the workspace
    path: String,
    /// characters to skip
    offset: Option<u32>,
    /// most characters to return
    limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    #[allow(dead_code)]
    tool: String,
    args: ReadArgs,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UntypedCall {
    #[allow(dead_code)]
    tool: String,
    args: Value,
}

/// The same two tools served by rmcp's router.
#[derive(Clone)]
struct RmcpServer {
    root: PathBuf,
    tool_router: ToolRouter<Self>,
}

#[tool_router(server_handler)]
impl RmcpServer {
    #[tool(description = "Read part of a text file")]
    fn read_part(&self, Parameters(a): Parameters<ReadArgs>) -> Result<String, String> {
        read_slice(
            &self.root.join(&a.path),
            a.offset.unwrap_or(0),
            a.limit.unwrap_or(u32::MAX),
        )
    }

    #[tool(description = "Return a constant")]
    fn noop(&self, Parameters(a): Parameters<ReadArgs>) -> String {
        let _ = (a.path, a.offset, a.limit);
        "done".to_owned()
    }
}

/// An rmcp server connected to a client over an in-memory pipe, so a real `Peer` exists for the
/// request context; the benchmark then calls the router directly, without JSON-RPC framing.
async fn rmcp_peer(server: RmcpServer) -> (rmcp::Peer<RoleServer>, Box<dyn std::any::Any>) {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server_task = tokio::spawn(async move { server.serve(server_io).await });
    let client = ().serve(client_io).await.expect("rmcp client");
    let running = server_task
        .await
        .expect("server task")
        .expect("rmcp server");
    let peer = running.peer().clone();
    (peer, Box::new((running, client)))
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(ws.path().join("docs")).expect("dir");
    std::fs::write(ws.path().join("docs/notes.txt"), "x".repeat(512)).expect("file");
    let [read_dyn, noop_dyn] = dyn_tools();
    let registry = Arc::new(
        Registry::builder()
            .with_inventory()
            .tool(read_dyn)
            .tool(noop_dyn)
            .build()
            .expect("registry"),
    );
    // `pipeline` is the async tool unconfined (the reference the others are compared with);
    // `pipeline_async_confined` the default, on its class's confined runtime.
    let exec = Executor::new(
        Arc::clone(&registry),
        ExecutorConfig::new(ws.path())
            .error_budget(0)
            .sandbox_async(false),
    )
    .expect("executor");
    let exec_async = Executor::new(
        Arc::clone(&registry),
        ExecutorConfig::new(ws.path()).error_budget(0),
    )
    .expect("executor");
    let exec_off = Executor::new(
        registry,
        ExecutorConfig::new(ws.path())
            .error_budget(0)
            .sandbox(tool_core::sandbox::Mode::Off),
    )
    .expect("executor");
    let session = exec.new_session();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let root = exec.workspace().to_path_buf();

    let schema = serde_json::to_value(rmcp::schemars::schema_for!(ReadArgs)).expect("schema");
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .expect("validator");

    let server = RmcpServer {
        root: root.clone(),
        tool_router: RmcpServer::tool_router(),
    };
    let (peer, _keep) = rt.block_on(rmcp_peer(server.clone()));
    let router = &server.tool_router;
    let rmcp_call = |text: &str| {
        let params: CallToolRequestParams =
            serde_json::from_str(std::hint::black_box(text)).expect("mcp params");
        let ctx = RequestContext::new(NumberOrString::Number(1), peer.clone());
        router.call(ToolCallContext::new(&server, params, ctx))
    };

    for calls in [
        [READ_CALL, READ_CALL_SYNC, READ_CALL_DYN],
        [NOOP_CALL, NOOP_CALL_SYNC, NOOP_CALL_DYN],
    ] {
        for t in calls {
            let check = rt.block_on(exec.execute_text(&session, t));
            assert!(check.is_ok(), "{check:?}");
        }
    }
    // The sync tools really run confined (where the kernel can), and unconfined with `Off`.
    let confined = rt.block_on(exec.execute_text(&session, READ_CALL_SYNC));
    let plain = rt.block_on(exec_off.execute_text(&session, READ_CALL_SYNC));
    let in_async = rt.block_on(exec_async.execute_text(&session, READ_CALL));
    assert!(in_async.is_ok(), "{in_async:?}");
    eprintln!(
        "pipeline_sync runs under `{}`, pipeline_sync_spawn_blocking under `{}`, \
         pipeline_async_confined under `{}`",
        confined.enforced, plain.enforced, in_async.enforced
    );
    for t in [MCP_READ_CALL, MCP_NOOP_CALL] {
        let r = rt.block_on(rmcp_call(t)).expect("rmcp call");
        assert!(
            format!("{r:?}").contains("xxxx") || t == MCP_NOOP_CALL,
            "{r:?}"
        );
    }

    // What the path guard's former walk looked at for `docs/notes.txt` (`floor_lstat`): each
    // component below the root.
    let guard_dir = root.join("docs");
    let guard_file = root.join("docs/notes.txt");
    // The guard's handle on the workspace, for `floor_beneath`.
    let root_dir = rustix::fs::open(
        &root,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .expect("workspace handle");
    let floor_read = || {
        let call: Call = serde_json::from_str(std::hint::black_box(READ_CALL)).expect("parse");
        let a = call.args;
        read_slice(
            &root.join(&a.path),
            a.offset.unwrap_or(0),
            a.limit.unwrap_or(u32::MAX),
        )
    };
    let naive_read = || {
        let call: UntypedCall =
            serde_json::from_str(std::hint::black_box(READ_CALL)).expect("parse");
        assert!(validator.is_valid(&call.args));
        let a: ReadArgs = serde_json::from_value(call.args).expect("args");
        read_slice(
            &root.join(&a.path),
            a.offset.unwrap_or(0),
            a.limit.unwrap_or(u32::MAX),
        )
    };
    let floor_noop = || {
        let call: Call = serde_json::from_str(std::hint::black_box(NOOP_CALL)).expect("parse");
        let _ = std::hint::black_box(call.args);
        "done".to_owned()
    };
    let naive_noop = || {
        let call: UntypedCall =
            serde_json::from_str(std::hint::black_box(NOOP_CALL)).expect("parse");
        assert!(validator.is_valid(&call.args));
        let a: ReadArgs = serde_json::from_value(call.args).expect("args");
        let _ = std::hint::black_box(a);
        "done".to_owned()
    };

    // What the executor confines a `read_only` tool's threads to, for `floor_confined_hop`.
    let policy = tool_sandbox::SandboxPolicy::new(&root, tool_sandbox::FsAccess::ReadOnly, false)
        .expect("policy");

    // Quiet, then (unless `OVERHEAD_LOAD=0`) again while busy loops keep every core busy.
    let loaded = load_processes();
    for busy in std::iter::once(0).chain((loaded > 0).then_some(loaded)) {
        let suffix = if busy == 0 { "" } else { "_loaded" };
        for (group, floor, naive, mcp, [text, text_sync, text_dyn]) in [
            (
                "read_file",
                &floor_read as &(dyn Fn() -> Result<String, String> + Sync),
                &naive_read as &dyn Fn() -> Result<String, String>,
                MCP_READ_CALL,
                [READ_CALL, READ_CALL_SYNC, READ_CALL_DYN],
            ),
            (
                "noop",
                &|| Ok(floor_noop()),
                &|| Ok(naive_noop()),
                MCP_NOOP_CALL,
                [NOOP_CALL, NOOP_CALL_SYNC, NOOP_CALL_DYN],
            ),
        ] {
            let _load = load::Load::start(busy);
            let mut g = c.benchmark_group(format!("{group}{suffix}"));
            g.bench_function("floor", |b| b.iter(floor));
            g.bench_function("floor_lstat", |b| {
                b.iter(|| {
                    for p in [&guard_dir, &guard_file] {
                        let md = std::fs::symlink_metadata(std::hint::black_box(p));
                        assert!(md.is_ok_and(|m| !m.file_type().is_symlink()));
                    }
                    floor()
                })
            });
            g.bench_function("floor_beneath", |b| {
                b.iter(|| {
                    let opened = rustix::fs::openat2(
                        &root_dir,
                        std::hint::black_box("docs/notes.txt"),
                        rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                        rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_SYMLINKS,
                    );
                    assert!(opened.is_ok());
                    floor()
                })
            });
            std::thread::scope(|s| {
                let (to_worker, jobs) = std::sync::mpsc::channel::<()>();
                let (done, results) = std::sync::mpsc::channel();
                s.spawn(move || {
                    for () in jobs {
                        if done.send(floor()).is_err() {
                            break;
                        }
                    }
                });
                g.bench_function("floor_hop", |b| {
                    b.iter(|| {
                        to_worker.send(()).expect("the hop's thread");
                        results.recv().expect("the hop's thread")
                    })
                });
            });
            if busy == 0 {
                spin_hop(&mut g, "floor_spin_hop", floor, None);
                spin_hop(&mut g, "floor_confined_hop", floor, Some(&policy));
            }
            g.bench_function("naive", |b| b.iter(naive));
            g.bench_function("rmcp", |b| b.to_async(&rt).iter(|| rmcp_call(mcp)));
            for (name, text) in [
                ("pipeline", text),
                ("pipeline_sync", text_sync),
                ("pipeline_dyn", text_dyn),
            ] {
                g.bench_function(name, |b| {
                    b.to_async(&rt)
                        .iter(|| exec.execute_text(&session, std::hint::black_box(text)))
                });
            }
            g.bench_function("pipeline_sync_spawn_blocking", |b| {
                b.to_async(&rt)
                    .iter(|| exec_off.execute_text(&session, std::hint::black_box(text_sync)))
            });
            g.bench_function("pipeline_async_confined", |b| {
                b.to_async(&rt)
                    .iter(|| exec_async.execute_text(&session, std::hint::black_box(text)))
            });
            g.finish();
        }
    }
}

/// Benches `floor` run on a thread of its own, confined to `policy` first if given, which
/// polls one atomic for each call while the caller polls it for the result.
fn spin_hop(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    floor: &(dyn Fn() -> Result<String, String> + Sync),
    policy: Option<&tool_sandbox::SandboxPolicy>,
) {
    use std::sync::atomic::{AtomicU8, Ordering};
    const IDLE: u8 = 0;
    const POSTED: u8 = 1;
    const DONE: u8 = 2;
    const STOP: u8 = 3;
    let state = AtomicU8::new(IDLE);
    let result = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        s.spawn(|| {
            if let Some(policy) = policy {
                if let Err(e) =
                    tool_sandbox::confine_current_thread(policy, tool_sandbox::Mode::Required)
                {
                    *result.lock().expect("result") = Some(Err(format!("not confined: {e}")));
                    state.store(STOP, Ordering::Release);
                    return;
                }
            }
            loop {
                match state.load(Ordering::Acquire) {
                    POSTED => {
                        *result.lock().expect("result") = Some(floor());
                        state.store(DONE, Ordering::Release);
                    }
                    STOP => return,
                    _ => std::hint::spin_loop(),
                }
            }
        });
        g.bench_function(name, |b| {
            b.iter(|| {
                if state
                    .compare_exchange(IDLE, POSTED, Ordering::Release, Ordering::Relaxed)
                    .is_err()
                {
                    panic!("{:?}", result.lock().expect("result").take());
                }
                loop {
                    match state.load(Ordering::Acquire) {
                        DONE => break,
                        STOP => panic!("{:?}", result.lock().expect("result").take()),
                        _ => std::hint::spin_loop(),
                    }
                }
                state.store(IDLE, Ordering::Relaxed);
                let out = result.lock().expect("result").take();
                out.expect("the hop's result").expect("the floor's call")
            })
        });
        state.store(STOP, Ordering::Release);
    });
}

/// How many busy processes the `_loaded` groups run beside the bench: `OVERHEAD_LOAD`, else one
/// per core this process may use; `0` leaves the `_loaded` groups out.
fn load_processes() -> usize {
    match std::env::var("OVERHEAD_LOAD") {
        Ok(n) => n.parse().expect("OVERHEAD_LOAD: a number of processes"),
        Err(_) => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

criterion_group!(benches, bench);

fn main() {
    if load::burn_if_asked() {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
