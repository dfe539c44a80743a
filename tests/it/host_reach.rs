//! What a tool call can reach of the host beyond reading and writing files, through the executor:
//! metadata of outside files, their extended attributes, UNIX sockets, memory. Scripts run with
//! the scan on and off (`--scan off`: only the kernel stands in the way), handlers sync and async.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tool_core::approval::FixedApprover;
use tool_core::executor::ScanMode;
use tool_core::process::ProcessLimits;
use tool_core::safety::ScannerGate;
use tool_core::{tool, CallResult, Executor, ExecutorConfig, ReasonCode, Registry, ToolContext};

use crate::exec_support::call;

const HELPER: &str = env!("CARGO_BIN_EXE_sandbox_helper");

/// Whether this kernel can confine threads and processes fully; if not, says so loudly.
fn kernel_ready(test: &str) -> bool {
    crate::exec_support::kernel_ready(
        test,
        &["landlock-v7", "seccomp", "userns", "pidns", "mntns"],
    )
}

/// A workspace, and next to it a file and a directory the calls must leave as they are.
struct Host {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    file: PathBuf,
    dir: PathBuf,
}

fn host() -> Host {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("workspace");
    let file = dir.path().join("outside.txt");
    std::fs::write(&file, "outside").expect("outside file");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("mode");
    let sub = dir.path().join("outside-dir");
    std::fs::create_dir(&sub).expect("outside dir");
    Host {
        ws: ws.canonicalize().expect("canonical"),
        file: file.canonicalize().expect("canonical"),
        dir: sub.canonicalize().expect("canonical"),
        _dir: dir,
    }
}

fn metadata(p: &Path) -> (u32, i64, u32) {
    let m = std::fs::metadata(p).expect("metadata");
    (m.mode(), m.mtime(), m.gid())
}

fn examples(ws: &Path, scan: bool, f: impl FnOnce(ExecutorConfig) -> ExecutorConfig) -> Executor {
    let config = ExecutorConfig::new(ws)
        .error_budget(0)
        .sandbox_helper(HELPER)
        .approver(Arc::new(FixedApprover::allow()));
    let config = if scan {
        config.script_gate(Arc::new(
            ScannerGate::with_default_policy().expect("default policy"),
        ))
    } else {
        config.scan(ScanMode::Off)
    };
    Executor::new(
        Arc::new(tool_examples::registry().expect("examples")),
        f(config),
    )
    .expect("executor")
}

async fn run(exec: &Executor, name: &str, args: serde_json::Value) -> CallResult {
    let session = exec.new_session();
    exec.execute(&session, call(name, args), Default::default())
        .await
}

#[tokio::test]
async fn scripts_cannot_change_the_metadata_of_host_files_scan_on_or_off() {
    if !kernel_ready("scripts metadata") {
        return;
    }
    for scan in [true, false] {
        let h = host();
        let exec = examples(&h.ws, scan, |c| c);
        let before = (metadata(&h.file), metadata(&h.dir));
        let (f, d) = (h.file.display(), h.dir.display());
        let bash = format!(
            "chmod 4777 {f}; chmod 777 {d}; chgrp 1 {f}; touch -d 2001-01-01 {f} {d}; \
             c=chmod; $c 0600 {f}; echo done"
        );
        let r = run(&exec, "run_bash", json!({ "command": bash })).await;
        assert_eq!(
            (metadata(&h.file), metadata(&h.dir)),
            before,
            "scan {scan}: {r:?}"
        );
        let python = format!(
            "import os\nfor c in (lambda: os.chmod({f:?}, 0o4777), lambda: os.utime({f:?}, (1, 1)), \
             lambda: getattr(os, 'ch' + 'mod')({d:?}, 0o777), lambda: os.setxattr({f:?}, 'user.x', b'1')):\n    \
             try: c()\n    except OSError as e: print(e.errno)\n",
            f = h.file.display().to_string(),
            d = h.dir.display().to_string(),
        );
        let r = run(&exec, "run_python", json!({ "code": python })).await;
        assert_eq!(
            (metadata(&h.file), metadata(&h.dir)),
            before,
            "scan {scan}: {r:?}"
        );
    }
}

#[tokio::test]
async fn scripts_cannot_reach_a_unix_socket_outside_scan_on_or_off() {
    if !kernel_ready("scripts unix socket") {
        return;
    }
    for scan in [true, false] {
        let h = host();
        let path = h.dir.join("service.sock");
        let listener = UnixListener::bind(&path).expect("listener");
        listener.set_nonblocking(true).expect("nonblocking");
        let exec = examples(&h.ws, scan, |c| c);
        let code = format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({p:?})\ns.send(b'hi')\nprint('reached')\n",
            p = path.display().to_string()
        );
        let r = run(&exec, "run_python", json!({ "code": code })).await;
        assert!(!r.is_ok(), "scan {scan}: {r:?}");
        assert!(
            listener.accept().is_err(),
            "scan {scan}: the socket was reached"
        );
    }
}

// Handlers that reach for the host by themselves.

/// Changes the mode of whatever `target` names (declared mutation: may write the workspace).
///
/// # Arguments
/// * `target` - an absolute path
#[tool(risk = "mutation")]
fn chmod_anything(target: String) -> Result<String, String> {
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o4777))
        .map_err(|e| e.to_string())?;
    Ok("changed".into())
}

/// The same, from an async handler.
///
/// # Arguments
/// * `target` - an absolute path
#[tool(risk = "mutation")]
async fn chmod_anything_async(target: String) -> Result<String, String> {
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o4777))
        .map_err(|e| e.to_string())?;
    Ok("changed".into())
}

/// Connects to a UNIX socket by itself (declares none).
///
/// # Arguments
/// * `socket` - an absolute path
#[tool(risk = "read_only")]
fn dial_unix(socket: String) -> Result<String, String> {
    std::os::unix::net::UnixStream::connect(&socket).map_err(|e| e.to_string())?;
    Ok("connected".into())
}

/// The socket `dial_declared` declares (the test binds it).
const DECLARED: &str = "/tmp/.tool-core-it-declared.sock";

/// Connects to the UNIX socket it declares.
#[tool(risk = "read_only", unix_sockets = ["/tmp/.tool-core-it-declared.sock"])]
fn dial_declared() -> Result<String, String> {
    std::os::unix::net::UnixStream::connect(DECLARED).map_err(|e| e.to_string())?;
    Ok("connected".into())
}

/// Connects from a program to the UNIX socket it declares.
#[tool(risk = "read_only", unix_sockets = ["/tmp/.tool-core-it-declared.sock"])]
async fn dial_declared_from_a_program(ctx: &ToolContext) -> Result<String, String> {
    let code = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({DECLARED:?})\nprint('connected')\n"
    );
    let out = ctx.command("python3").args(["-c", &code]).output().await?;
    Ok(out.report())
}

fn module_executor(ws: &Path) -> Executor {
    let registry = Registry::builder()
        .with_inventory_where(|m| m == "it::host_reach")
        .build()
        .expect("registry");
    Executor::new(
        Arc::new(registry),
        ExecutorConfig::new(ws)
            .error_budget(0)
            .sandbox_helper(HELPER)
            .approver(Arc::new(FixedApprover::allow())),
    )
    .expect("executor")
}

#[tokio::test]
async fn handlers_cannot_change_the_metadata_of_host_files() {
    if !kernel_ready("handler metadata") {
        return;
    }
    let h = host();
    let exec = module_executor(&h.ws);
    let before = metadata(&h.file);
    for tool in ["chmod_anything", "chmod_anything_async"] {
        let r = run(
            &exec,
            tool,
            json!({ "target": h.file.display().to_string() }),
        )
        .await;
        assert_eq!(r.code, Some(ReasonCode::ToolError), "{tool}: {r:?}");
        assert!(
            r.message
                .as_deref()
                .unwrap_or_default()
                .contains("not permitted"),
            "{tool}: {r:?}"
        );
        assert_eq!(metadata(&h.file), before, "{tool}");
    }
}

#[tokio::test]
async fn unix_sockets_are_reached_only_where_declared() {
    if !kernel_ready("declared unix sockets") {
        return;
    }
    let h = host();
    let outside = h.dir.join("other.sock");
    let other = UnixListener::bind(&outside).expect("other socket");
    let _ = std::fs::remove_file(DECLARED);
    let declared = UnixListener::bind(DECLARED).expect("declared socket");
    let exec = module_executor(&h.ws);
    let r = run(
        &exec,
        "dial_unix",
        json!({ "socket": outside.display().to_string() }),
    )
    .await;
    assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
    assert!(
        r.message
            .as_deref()
            .unwrap_or_default()
            .contains("not permitted"),
        "{r:?}"
    );
    let r = run(&exec, "dial_declared", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    let r = run(&exec, "dial_declared_from_a_program", json!({})).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, Some(json!("connected\n")), "{r:?}");
    drop((other, declared));
    let _ = std::fs::remove_file(DECLARED);
}

#[tokio::test]
async fn a_program_over_its_memory_limit_fails_with_resource_limit() {
    if !kernel_ready("memory limit") {
        return;
    }
    if !tool_core::sandbox::support().contains("+mem") {
        eprintln!("\n!!! SKIPPED memory limit: no writable memory cgroup hierarchy here !!!\n");
        return;
    }
    let h = host();
    let limits = ProcessLimits {
        memory_bytes: Some(128 << 20),
        ..ProcessLimits::default()
    };
    let exec = examples(&h.ws, false, |c| {
        c.sandbox_tool_limits("run_python", limits)
    });
    let code =
        "b = bytearray(400 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('kept')\n";
    let r = run(&exec, "run_python", json!({ "code": code })).await;
    assert_eq!(r.code, Some(ReasonCode::ResourceLimit), "{r:?}");
    assert!(
        r.message
            .as_deref()
            .unwrap_or_default()
            .contains("memory limit (128 MiB"),
        "{r:?}"
    );
    // Another tool keeps the default limit.
    let r = run(&exec, "run_bash", json!({ "command": "echo fine" })).await;
    assert!(r.is_ok(), "{r:?}");
}
