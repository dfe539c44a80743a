//! Kernel confinement of handlers and their programs, tried as an attacker would: each test is
//! named after the attack, with canaries outside the workspace. They run on the real kernel (CI's
//! machines have Landlock ABI 7, seccomp, user and PID namespaces); where the kernel truly lacks
//! a feature, a test says so loudly and returns.

use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use test_support::procs::{per_run, wait_until_gone, Sentinel};
use test_support::site::{Site, CANARY};
use tool_core::approval::FixedApprover;
use tool_core::audit::MemoryAuditSink;
use tool_core::executor::ScanMode;
use tool_core::safety::ScannerGate;
use tool_core::sandbox::Mode;
use tool_core::{
    tool, CallResult, CallStatus, Executor, ExecutorConfig, ReasonCode, Registry, ToolContext,
    WorkspacePath,
};

use crate::exec_support::call;

/// The helper this crate builds for in-process executors.
const HELPER: &str = env!("CARGO_BIN_EXE_sandbox_helper");

/// Whether this kernel can confine threads and processes fully; if not, says so loudly.
fn kernel_ready(test: &str) -> bool {
    crate::exec_support::kernel_ready(test, &["landlock-v7", "seccomp", "userns", "pidns"])
}

/// A workspace (with `notes.txt`) next to a directory that holds the canary.
fn site() -> Site {
    Site::new().with_file("notes.txt", "inside")
}

fn module_tools() -> Registry {
    Registry::builder()
        .with_inventory_where(|m| m == "it::sandbox")
        .build()
        .expect("registry")
}

fn executor(
    registry: Registry,
    ws: &Path,
    f: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (Executor, Arc<MemoryAuditSink>) {
    let audit = Arc::new(MemoryAuditSink::new());
    let config = ExecutorConfig::new(ws)
        .error_budget(0)
        .sandbox_helper(HELPER)
        .approver(Arc::new(FixedApprover::allow()))
        .audit(audit.clone());
    let exec = Executor::new(Arc::new(registry), f(config)).expect("executor");
    (exec, audit)
}

/// The example tools (`run_bash`, …) with the scanner as the script gate and a human who
/// approves everything: only the guards and the kernel stand in the way.
fn examples(ws: &Path) -> (Executor, Arc<MemoryAuditSink>) {
    executor(tool_examples::registry().expect("examples"), ws, |c| {
        c.script_gate(Arc::new(
            ScannerGate::with_default_policy().expect("default policy"),
        ))
    })
}

/// The example tools with the static scan switched off: the kernel alone stands in the way.
fn examples_unscanned(ws: &Path) -> (Executor, Arc<MemoryAuditSink>) {
    executor(tool_examples::registry().expect("examples"), ws, |c| {
        c.scan(ScanMode::Off)
    })
}

async fn run(exec: &Executor, name: &str, args: serde_json::Value) -> CallResult {
    let session = exec.new_session();
    exec.execute(&session, call(name, args), Default::default())
        .await
}

fn message(r: &CallResult) -> &str {
    r.message.as_deref().unwrap_or_default()
}

// The tools of this module: written as a new user writes them from the README, some of them
// ignoring their `WorkspacePath` and opening paths by themselves.

/// Writes a file in the workspace although it is declared read-only.
#[tool(risk = "read_only")]
fn sneaky_write(ctx: &ToolContext) -> Result<String, String> {
    std::fs::write(ctx.workspace().join("written.txt"), "x").map_err(|e| e.to_string())?;
    Ok("wrote".into())
}

/// Reads a note; opens whatever `other` names by itself, next to the checked path.
///
/// # Arguments
/// * `path` - the note, relative to the workspace
/// * `other` - what the handler really opens
#[tool(risk = "read_only", path_args = ["path"])]
fn read_notes(path: WorkspacePath, other: String) -> Result<String, String> {
    let _ = path;
    std::fs::read_to_string(other).map_err(|e| e.to_string())
}

/// Overwrites whatever `target` names, by itself (declared mutation: may write the workspace).
///
/// # Arguments
/// * `target` - an absolute path
#[tool(risk = "mutation")]
fn clobber(target: String) -> Result<String, String> {
    std::fs::write(&target, "clobbered").map_err(|e| e.to_string())?;
    Ok("clobbered".into())
}

/// Connects to a local TCP port (not declared open_world).
///
/// # Arguments
/// * `port` - the port on 127.0.0.1
#[tool(risk = "read_only")]
fn dial(port: u16) -> Result<String, String> {
    std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    Ok("connected".into())
}

/// Connects to a local TCP port (declared open_world: allowed).
///
/// # Arguments
/// * `port` - the port on 127.0.0.1
#[tool(risk = "read_only", open_world)]
fn dial_out(port: u16) -> Result<String, String> {
    std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    Ok("connected".into())
}

/// An async tool: runs unconfined, and the audit says so.
#[tool(risk = "read_only")]
async fn async_peek(ctx: &ToolContext) -> Result<String, String> {
    Ok(ctx.workspace().display().to_string())
}

static GATE: Mutex<Option<std::sync::mpsc::Receiver<()>>> = Mutex::new(None);

/// Blocks in the kernel until the test lets it go (a stand-in for a FIFO open or a stuck read).
#[tool(risk = "read_only", concurrency_safe)]
fn stuck() -> String {
    let rx = GATE.lock().expect("gate").take();
    if let Some(rx) = rx {
        let _ = rx.recv_timeout(Duration::from_secs(20));
    } else {
        std::thread::sleep(Duration::from_secs(2));
    }
    "released".into()
}

/// Does nothing (another read-only tool, in the same class as `stuck`).
#[tool(risk = "read_only", concurrency_safe)]
fn idle() -> String {
    "idle".into()
}

#[tokio::test]
async fn a_read_only_tool_that_writes_in_the_workspace_gets_eacces_from_the_kernel() {
    if !kernel_ready("read_only write") {
        return;
    }
    let s = site();
    let (exec, _) = executor(module_tools(), &s.ws, |c| c);
    let r = run(&exec, "sneaky_write", json!({})).await;
    assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
    let m = message(&r);
    assert!(m.contains("Permission denied (os error 13)"), "{m}");
    assert!(m.contains("denied by the kernel sandbox"), "{m}");
    assert!(m.contains("read_only"), "{m}");
    assert!(!s.ws.join("written.txt").exists());
    assert!(r.enforced.starts_with("landlock-v"), "{}", r.enforced);
}

#[tokio::test]
async fn a_handler_that_opens_etc_passwd_by_itself_is_stopped_by_the_kernel() {
    if !kernel_ready("etc/passwd") {
        return;
    }
    let s = site();
    assert!(
        std::fs::read_to_string("/etc/passwd").is_ok(),
        "readable outside the sandbox"
    );
    let (exec, _) = executor(module_tools(), &s.ws, |c| c);
    // The path guard checked `path`; the handler ignores it and opens what it likes.
    let outside = s.ws.join("../../etc/passwd");
    for other in [
        "/etc/passwd".to_owned(),
        s.canary.display().to_string(),
        s.ws.join("../outside/secret.txt").display().to_string(),
        outside.display().to_string(),
    ] {
        let r = run(
            &exec,
            "read_notes",
            json!({"path": "notes.txt", "other": other}),
        )
        .await;
        assert_eq!(r.status, CallStatus::Failed, "{other}: {r:?}");
        let m = message(&r);
        assert!(
            m.contains("Permission denied") || m.contains("No such file"),
            "{other}: {m}"
        );
        if m.contains("Permission denied") {
            assert!(m.contains("denied by the kernel sandbox"), "{other}: {m}");
        }
        assert!(!m.contains("root:"), "{other}: leaked {m}");
        assert!(!m.contains(CANARY), "{other}: leaked {m}");
    }
    // The canary itself is refused with EACCES, not merely missing.
    let r = run(
        &exec,
        "read_notes",
        json!({"path": "notes.txt", "other": s.canary.display().to_string()}),
    )
    .await;
    assert!(
        message(&r).contains("Permission denied (os error 13)"),
        "{r:?}"
    );
}

#[tokio::test]
async fn a_mutation_tool_that_writes_outside_the_workspace_by_itself_is_stopped_by_the_kernel() {
    if !kernel_ready("write outside") {
        return;
    }
    let s = site();
    let (exec, _) = executor(module_tools(), &s.ws, |c| c);
    let r = run(
        &exec,
        "clobber",
        json!({"target": s.canary.display().to_string()}),
    )
    .await;
    assert!(message(&r).contains("os error 13"), "{r:?}");
    assert!(s.canary_intact());
    // Inside the workspace it may write: it is declared `mutation`.
    let inside = s.ws.join("mine.txt");
    let r = run(
        &exec,
        "clobber",
        json!({"target": inside.display().to_string()}),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn a_tool_not_declared_open_world_cannot_connect_to_a_local_listener() {
    if !kernel_ready("tcp connect") {
        return;
    }
    let s = site();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let (exec, _) = executor(module_tools(), &s.ws, |c| c);
    let r = run(&exec, "dial", json!({"port": port})).await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    // seccomp refuses the socket itself (EPERM); Landlock would refuse the connect (EACCES).
    let m = message(&r);
    assert!(
        m.contains("Operation not permitted") || m.contains("Permission denied"),
        "{m}"
    );
    assert!(m.contains("denied by the kernel sandbox"), "{m}");
    // The same connection from an `open_world` tool goes through.
    let r = run(&exec, "dial_out", json!({"port": port})).await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn the_audit_event_names_what_enforced_the_call() {
    if !kernel_ready("audit enforcement") {
        return;
    }
    let s = site();
    let (exec, audit) = executor(module_tools(), &s.ws, |c| c);
    let sync = run(&exec, "idle", json!({})).await;
    let not_run = run(&exec, "idle", json!({"extra": 1})).await;
    let confined_async = run(&exec, "async_peek", json!({})).await;
    let events = audit.events();
    assert_eq!(events.len(), 3);
    assert!(
        events[0].enforced.starts_with("landlock-v"),
        "{:?}",
        events[0]
    );
    assert!(events[0].enforced.contains("seccomp"), "{:?}", events[0]);
    assert_eq!(events[0].enforced, sync.enforced);
    assert_eq!(events[1].enforced, "not_run");
    assert_eq!(not_run.enforced, "not_run");
    // Async handlers run confined too, on their class's confined runtime.
    assert_eq!(events[2].enforced, sync.enforced);
    assert_eq!(confined_async.enforced, sync.enforced);
    let line = serde_json::to_value(&events[0]).expect("json");
    assert!(line["enforced"]
        .as_str()
        .is_some_and(|e| e.starts_with("landlock-v")));
    // Opted out, they are not confined, and the audit does not pretend they are.
    let (exec, audit) = executor(module_tools(), &s.ws, |c| c.sandbox_async(false));
    let unconfined = run(&exec, "async_peek", json!({})).await;
    assert_eq!(unconfined.enforced, "none");
    assert_eq!(audit.events()[0].enforced, "none");
}

#[tokio::test]
async fn run_bash_records_the_confinement_of_its_program() {
    if !kernel_ready("run_bash audit") {
        return;
    }
    let s = site();
    let (exec, audit) = examples(&s.ws);
    let r = run(&exec, "run_bash", json!({"command": "echo hello"})).await;
    assert!(r.is_ok(), "{r:?}");
    let e = &audit.events()[0];
    // The handler (async, on its class's confined runtime), then the program it started.
    assert!(e.enforced.starts_with("landlock-v"), "{e:?}");
    assert!(e.enforced.contains("; process: landlock-v"), "{e:?}");
    assert!(
        e.enforced.contains("pidns") && e.enforced.contains("netns"),
        "{e:?}"
    );
}

#[tokio::test]
async fn run_bash_cannot_read_or_change_a_canary_outside_the_workspace() {
    if !kernel_ready("run_bash canary") {
        return;
    }
    let s = site();
    let (exec, _) = examples(&s.ws);
    let canary = s.canary.display().to_string();
    for command in [
        format!("cat {canary}"),
        // Not `rm -f`: the canary is not in the program's root at all, and `-f` ignores that.
        format!("rm {canary}"),
        format!("mv {canary} ./stolen"),
        format!("ln {canary} ./linked"),
    ] {
        let r = run(&exec, "run_bash", json!({"command": command})).await;
        assert!(!r.is_ok(), "{command}: {r:?}");
        assert!(!message(&r).contains(CANARY), "{command}: {r:?}");
        assert!(s.canary_intact(), "{command}");
    }
    assert!(!s.ws.join("stolen").exists() && !s.ws.join("linked").exists());
}

#[tokio::test]
async fn run_bash_with_kill_9_of_a_sentinel_leaves_the_sentinel_alive() {
    if !kernel_ready("kill -9 sentinel") {
        return;
    }
    let s = site();
    let mut sentinel = Sentinel::start("300");
    let pid = sentinel.pid();
    let command = format!("kill -9 {pid}; kill -KILL -1; pkill sleep; true");
    // The static scan already refuses the script; the kernel must hold without it too.
    let (scanned, _) = examples(&s.ws);
    let r = run(&scanned, "run_bash", json!({ "command": command })).await;
    assert_eq!(r.code, Some(ReasonCode::SafetyDenied), "{r:?}");
    let (exec, _) = examples_unscanned(&s.ws);
    let r = run(&exec, "run_bash", json!({ "command": command })).await;
    assert!(r.is_ok(), "{r:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        sentinel.alive(),
        "the sentinel was killed from inside the sandbox"
    );
}

#[tokio::test]
async fn background_setsid_and_nohup_children_do_not_outlive_the_call() {
    if !kernel_ready("no child outlives") {
        return;
    }
    let s = site();
    let (exec, _) = examples(&s.ws);
    let command = per_run(
        "(sleep 3171 &) ; setsid sleep 3172 & nohup sleep 3173 > /dev/null 2>&1 & \
         (setsid nohup sleep 3174 &) ; echo started",
    );
    let r = run(&exec, "run_bash", json!({"command": command})).await;
    assert!(r.is_ok(), "{r:?}");
    let left = wait_until_gone("sleep 317", Duration::from_secs(3));
    assert!(left.is_empty(), "children outlived the call: {left:?}");
}

#[tokio::test]
async fn a_run_bash_timeout_reports_timeout_and_kills_the_tree() {
    if !kernel_ready("run_bash timeout") {
        return;
    }
    let s = site();
    let (exec, _) = examples(&s.ws);
    let started = Instant::now();
    let r = run(
        &exec,
        "run_bash",
        json!({"command": per_run("sleep 3181 & sleep 3182"), "timeout_secs": 1}),
    )
    .await;
    assert_eq!(r.code, Some(ReasonCode::Timeout), "{r:?}");
    assert_eq!(r.status, CallStatus::Failed);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let left = wait_until_gone("sleep 318", Duration::from_secs(3));
    assert!(left.is_empty(), "the timed-out tree lives on: {left:?}");
}

#[tokio::test]
async fn a_cancelled_run_bash_reports_cancelled_and_kills_the_tree() {
    if !kernel_ready("run_bash cancel") {
        return;
    }
    let s = site();
    let (exec, _) = examples(&s.ws);
    let session = exec.new_session();
    let token = tool_core::context::CancellationToken::new();
    let options = tool_core::CallOptions {
        cancel: Some(token.clone()),
        ..Default::default()
    };
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        token.cancel();
    };
    let (r, ()) = tokio::join!(
        exec.execute(
            &session,
            call("run_bash", json!({"command": per_run("sleep 3191")})),
            options
        ),
        cancel
    );
    assert_eq!(r.code, Some(ReasonCode::Cancelled), "{r:?}");
    let left = wait_until_gone("sleep 3191", Duration::from_secs(3));
    assert!(left.is_empty(), "the cancelled tree lives on: {left:?}");
}

#[tokio::test]
async fn run_bash_cannot_connect_to_a_local_listener() {
    if !kernel_ready("run_bash tcp") {
        return;
    }
    let s = site();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let (exec, _) = examples(&s.ws);
    let r = run(
        &exec,
        "run_bash",
        json!({"command": format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")}),
    )
    .await;
    assert!(!r.is_ok(), "{r:?}");
    assert!(!message(&r).contains("connected\n"), "{r:?}");
}

#[tokio::test]
async fn a_script_tool_without_the_helper_is_refused_with_sandbox_unavailable_naming_the_fix() {
    let s = site();
    let (exec, audit) = executor(tool_examples::registry().expect("examples"), &s.ws, |c| {
        c.sandbox_helper("/nonexistent/tool-sandbox-exec")
            .script_gate(Arc::new(
                ScannerGate::with_default_policy().expect("default policy"),
            ))
    });
    let r = run(&exec, "run_bash", json!({"command": "echo hi"})).await;
    assert_eq!(r.code, Some(ReasonCode::SandboxUnavailable), "{r:?}");
    assert_eq!(r.status, CallStatus::Refused);
    assert!(message(&r).contains("dispatch_helper"), "{r:?}");
    assert!(message(&r).contains("sandbox_helper"), "{r:?}");
    assert_eq!(audit.events()[0].enforced, "not_run");
    assert_eq!(
        serde_json::to_value(audit.events()[0].code).expect("json"),
        "sandbox_unavailable"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_stuck_in_the_kernel_exhausts_its_own_slots_only() {
    if !kernel_ready("stuck tool") {
        return;
    }
    let s = site();
    let (release, gate) = std::sync::mpsc::channel();
    *GATE.lock().expect("gate") = Some(gate);
    let (exec, _) = executor(module_tools(), &s.ws, |c| {
        c.sandbox_tool_slots(1).sandbox_workers(2).tool_limits(
            "stuck",
            tool_core::executor::ToolLimits {
                timeout: Some(Duration::from_millis(300)),
                output_cap: None,
            },
        )
    });
    // The first call blocks its worker past its timeout; it keeps its slot.
    let first = run(&exec, "stuck", json!({})).await;
    assert_eq!(first.code, Some(ReasonCode::Timeout), "{first:?}");
    // The next call of the same tool waits for that slot, and says so when it times out.
    let second = run(&exec, "stuck", json!({})).await;
    assert_eq!(second.code, Some(ReasonCode::Timeout), "{second:?}");
    assert!(message(&second).contains("confined slots"), "{second:?}");
    // Another tool of the same class still runs at once.
    let other = run(&exec, "idle", json!({})).await;
    assert!(other.is_ok(), "{other:?}");
    let _ = release.send(());
}

#[tokio::test]
async fn mode_off_enforces_nothing_and_says_so() {
    let s = site();
    let (exec, audit) = executor(module_tools(), &s.ws, |c| c.sandbox(Mode::Off));
    let r = run(&exec, "sneaky_write", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.enforced, "none");
    assert_eq!(audit.events()[0].enforced, "none");
    assert_eq!(exec.sandbox_mode(), Mode::Off);
}

/// An async tool that writes although it is declared read-only, with `tokio::fs` (whose blocking
/// thread is started by the runtime it runs on).
#[tool(risk = "read_only")]
async fn async_sneaky_write(ctx: &ToolContext) -> Result<String, String> {
    tokio::fs::write(ctx.workspace().join("async-written.txt"), "x")
        .await
        .map_err(|e| e.to_string())?;
    Ok("wrote".into())
}

#[tokio::test]
async fn an_async_read_only_tool_that_writes_gets_eacces_unless_async_confinement_is_off() {
    if !kernel_ready("async confinement") {
        return;
    }
    let s = site();
    // Opted out, async handlers run unconfined, and the audit says so.
    let (exec, _) = executor(module_tools(), &s.ws, |c| c.sandbox_async(false));
    let r = run(&exec, "async_sneaky_write", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.enforced, "none");
    std::fs::remove_file(s.ws.join("async-written.txt")).expect("written");
    // By default they run on a confined runtime of their class.
    let (exec, audit) = executor(module_tools(), &s.ws, |c| c);
    let r = run(&exec, "async_sneaky_write", json!({})).await;
    assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
    assert!(message(&r).contains("os error 13"), "{r:?}");
    assert!(
        message(&r).contains("denied by the kernel sandbox"),
        "{r:?}"
    );
    assert!(!s.ws.join("async-written.txt").exists());
    assert!(r.enforced.starts_with("landlock-v"), "{}", r.enforced);
    assert_eq!(audit.events()[0].enforced, r.enforced);
    let r = run(&exec, "async_peek", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn with_async_confinement_run_bash_still_runs_its_program_in_the_helper() {
    if !kernel_ready("async run_bash") {
        return;
    }
    let s = site();
    let (exec, _) = executor(tool_examples::registry().expect("examples"), &s.ws, |c| {
        c.sandbox_async(true).script_gate(Arc::new(
            ScannerGate::with_default_policy().expect("default policy"),
        ))
    });
    let r = run(
        &exec,
        "run_bash",
        json!({"command": "echo hi > out.txt; cat out.txt"}),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(r.enforced.starts_with("landlock-v"), "{}", r.enforced);
    assert!(
        r.enforced.contains("; process: landlock-v"),
        "{}",
        r.enforced
    );
    let r = run(
        &exec,
        "run_bash",
        json!({"command": per_run("sleep 3201 & sleep 3202"), "timeout_secs": 1}),
    )
    .await;
    assert_eq!(r.code, Some(ReasonCode::Timeout), "{r:?}");
    let left = wait_until_gone("sleep 320", Duration::from_secs(3));
    assert!(left.is_empty(), "the timed-out tree lives on: {left:?}");
}

/// Set when the future of `async_sleeper` is dropped.
static SLEEPER_DROPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct SetOnDrop;

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        SLEEPER_DROPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// An async tool that sleeps far longer than its timeout.
#[tool(risk = "read_only")]
async fn async_sleeper() -> String {
    let _guard = SetOnDrop;
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".to_owned()
}

/// An async tool that panics.
#[tool(risk = "read_only")]
async fn async_panicker() -> String {
    panic!("the async handler broke")
}

#[tokio::test]
async fn with_async_confinement_a_timed_out_handler_is_dropped_and_a_panic_is_reported() {
    if !kernel_ready("async confinement timeout") {
        return;
    }
    let s = site();
    let (exec, audit) = executor(module_tools(), &s.ws, |c| {
        c.sandbox_async(true).tool_limits(
            "async_sleeper",
            tool_core::executor::ToolLimits {
                timeout: Some(Duration::from_millis(200)),
                output_cap: None,
            },
        )
    });
    let r = run(&exec, "async_sleeper", json!({})).await;
    assert_eq!(r.code, Some(ReasonCode::Timeout), "{r:?}");
    assert!(r.enforced.starts_with("landlock-v"), "{}", r.enforced);
    // The handler's future is dropped on the confined runtime, not left sleeping there.
    let dropped = async {
        while !SLEEPER_DROPPED.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), dropped)
        .await
        .expect("the timed-out handler was dropped on the confined runtime");
    let r = run(&exec, "async_panicker", json!({})).await;
    assert_eq!(r.code, Some(ReasonCode::Panicked), "{r:?}");
    assert!(message(&r).contains("the async handler broke"), "{r:?}");
    // The runtime survives both and runs the next call.
    let r = run(&exec, "async_peek", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(audit.events().len(), 3);
}

/// An async tool that naps on a timer of its class's confined runtime.
#[tool(risk = "read_only")]
async fn async_napper() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "rested".to_owned()
}

/// An async tool that answers on its first poll.
#[tool(risk = "read_only")]
async fn async_quick() -> String {
    "quick".to_owned()
}

/// Short calls that keep coming keep the confined runtime awake (with a core to spare, polling
/// its queue between them); a handler waiting on a timer there must still be woken meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_async_confinement_a_waiting_handler_wakes_while_short_calls_keep_coming() {
    if !kernel_ready("async confinement, a waiting handler among short calls") {
        return;
    }
    let s = site();
    // A long spin (debug builds leave tens of microseconds between two calls), so that the
    // runtime polls its queue right through the nap whenever the machine has a core to spare.
    let (exec, _audit) = executor(module_tools(), &s.ws, |c| {
        c.sandbox_async(true)
            .sandbox_spin(Duration::from_millis(20))
    });
    let exec = Arc::new(exec);
    let napper = tokio::spawn({
        let exec = Arc::clone(&exec);
        async move { run(&exec, "async_napper", json!({})).await }
    });
    // Twenty times the nap: a runtime that polled only its queue while calls came would keep
    // the nap's timer waiting for as long as they do.
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut quick = 0u32;
    while !napper.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the napping handler was not woken while {quick} short calls came"
        );
        let r = run(&exec, "async_quick", json!({})).await;
        assert!(r.is_ok(), "{r:?}");
        assert!(r.enforced.starts_with("landlock-v"), "{}", r.enforced);
        quick += 1;
    }
    let r = napper.await.expect("the napping call's task");
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, Some(json!("rested")), "{r:?}");
    assert!(quick > 0, "no short call came while the handler napped");
}

/// The confined workers and runtimes run with the default scheduler slice (the kernel's least),
/// so that one woken for a call on a busy core runs at once.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn confined_threads_ask_for_the_short_scheduler_slice() {
    if !kernel_ready("confined_threads_ask_for_the_short_scheduler_slice") {
        return;
    }
    if tool_sandbox::thread_slice(Path::new("/proc/thread-self")).is_none() {
        eprintln!("SKIPPED: this kernel does not show se.slice in /proc/*/sched");
        return;
    }
    let s = site();
    let (exec, _) = examples(&s.ws);
    let r = run(
        &exec,
        "read_file",
        json!({"path": "notes.txt", "max_bytes": 64}),
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    let mut seen = 0;
    for dir in test_support::procs::threads_named("tool-") {
        let Some(slice) = tool_sandbox::thread_slice(&dir) else {
            continue; // the thread ended meanwhile
        };
        assert_eq!(
            slice,
            tool_core::sandbox::DEFAULT_SLICE,
            "{}",
            dir.display()
        );
        seen += 1;
    }
    assert!(seen > 0, "no confined thread found");
}
