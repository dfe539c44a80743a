//! Resources that declare what they need from the sandbox: the `grants` example's SQLite
//! database outside the workspace and its HTTP service on a loopback port, reached by confined
//! handlers with their grants, refused with a message naming the fix without them, and never
//! beyond what a grant names.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::json;
use tool_core::approval::FixedApprover;
use tool_core::executor::ExecutorError;
use tool_core::sandbox::Grants;
use tool_core::{
    tool, CallResult, CallStatus, Executor, ExecutorConfig, Registry, State, ToolContext,
};

use crate::exec_support::call;

#[path = "../../tool-examples/examples/grants/app.rs"]
mod app;

/// Whether this kernel confines threads fully (Landlock ABI ≥ 4 for TCP); if not, says so loudly.
fn kernel_ready(test: &str) -> bool {
    crate::exec_support::kernel_ready(test, &["landlock-v7", "seccomp"])
}

/// A loopback HTTP server answering every request with `body`, on a thread of its own.
fn serve(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

const HELPER: &str = env!("CARGO_BIN_EXE_sandbox_helper");

/// A directory outside the workspace the application hands its tools.
#[derive(Clone)]
struct Shelf(std::path::PathBuf);

/// Copy `shelf/in.txt` to `shelf/out.txt` with a program.
#[tool(risk = "mutation")]
async fn shelf_copy(ctx: &ToolContext, State(shelf): State<Shelf>) -> Result<String, String> {
    let dir = shelf.0.display().to_string();
    let out = ctx
        .command("sh")
        .args([
            "-c",
            "cat \"$1/in.txt\" > \"$1/out.txt\" && cat \"$1/out.txt\"",
            "sh",
            &dir,
        ])
        .output()
        .await?;
    Ok(out.report())
}

fn executor(config: ExecutorConfig) -> Executor {
    let registry = Arc::new(app::registry().expect("the example's tools"));
    Executor::new(registry, config.approver(Arc::new(FixedApprover::allow())))
        .expect("the executor starts")
}

async fn run(exec: &Executor, tool: &str, args: serde_json::Value) -> CallResult {
    let session = exec.new_session();
    exec.execute(&session, call(tool, args), Default::default())
        .await
}

fn message(r: &CallResult) -> &str {
    r.message.as_deref().unwrap_or("")
}

#[tokio::test]
async fn a_database_outside_the_workspace_works_with_its_grant() {
    if !kernel_ready("a_database_outside_the_workspace_works_with_its_grant") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let db = app::Db::open(data.path()).expect("db");
    let api = app::Api::new("127.0.0.1", serve("ok")).expect("api");
    let exec = executor(app::config(ws.path(), db, api));
    let r = run(&exec, "db_add_note", json!({"text": "buy milk"})).await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert_eq!(r.output, Some(json!("noted (1 notes)")));
    let data_dir = data.path().canonicalize().expect("canonical");
    assert!(
        r.enforced.starts_with("landlock-v")
            && r.enforced
                .contains(&format!("grants: read_write {}", data_dir.display())),
        "the audit label shows the grant: {}",
        r.enforced
    );
    let r = run(&exec, "db_list_notes", json!({})).await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert_eq!(r.output, Some(json!(["buy milk"])));
    // The note is in the database file outside the workspace.
    let check = rusqlite::Connection::open(data.path().join("notes.db")).expect("open");
    let n: i64 = check
        .query_row("SELECT count(*) FROM notes", [], |row| row.get(0))
        .expect("count");
    assert_eq!(n, 1);
}

#[tokio::test]
async fn a_database_without_its_grant_is_refused_with_the_fix() {
    if !kernel_ready("a_database_without_its_grant_is_refused_with_the_fix") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let db = app::Db::open(data.path()).expect("db");
    let exec = executor(
        ExecutorConfig::new(ws.path())
            .resource(db)
            .resource(app::Api::new("127.0.0.1", 9).expect("api")),
    );
    let r = run(&exec, "db_add_note", json!({"text": "buy milk"})).await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    let m = message(&r);
    assert!(
        m.contains("attempt to write a readonly database")
            && m.contains("denied by the kernel sandbox")
            && m.contains("`db_add_note` is declared `risk = \"mutation\"`")
            && m.contains("runs confined as `read_write`")
            && m.contains("ExecutorConfig::resource_with_grants"),
        "{m}"
    );
    assert!(!data.path().join("notes.db-journal").exists());
}

#[tokio::test]
async fn an_http_service_works_with_its_port_granted() {
    if !kernel_ready("an_http_service_works_with_its_port_granted") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let port = serve("all good");
    let db = app::Db::open(data.path()).expect("db");
    let api = app::Api::new("127.0.0.1", port).expect("api");
    let exec = executor(app::config(ws.path(), db, api));
    let r = run(&exec, "api_get", json!({"route": "/status"})).await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert_eq!(r.output, Some(json!("all good")));
    assert!(
        r.enforced
            .contains(&format!("grants: tcp 127.0.0.1:{port}")),
        "{}",
        r.enforced
    );
}

#[tokio::test]
async fn an_http_service_without_its_grant_is_refused_with_the_fix() {
    if !kernel_ready("an_http_service_without_its_grant_is_refused_with_the_fix") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let port = serve("secret");
    let db = app::Db::open(data.path()).expect("db");
    let exec = executor(
        ExecutorConfig::new(ws.path())
            .resource(db)
            .resource(app::Api::new("127.0.0.1", port).expect("api")),
    );
    let r = run(&exec, "api_get", json!({"route": "/status"})).await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    let m = message(&r);
    assert!(
        m.contains("denied by the kernel sandbox")
            && m.contains(
                "`api_get` is declared `risk = \"safe\"`, so it runs confined as `read_only`"
            )
            && m.contains(".connect(host, port)"),
        "{m}"
    );
    assert!(!m.contains("secret"), "{m}");
}

#[tokio::test]
async fn a_port_grant_reaches_that_port_only() {
    if !kernel_ready("a_port_grant_reaches_that_port_only") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let granted = serve("granted");
    let other = serve("other");
    let db = app::Db::open(data.path()).expect("db");
    let exec = executor(
        ExecutorConfig::new(ws.path())
            .resource(db)
            .resource_with_grants(
                app::Api::new("127.0.0.1", other).expect("api"),
                Grants::new().connect("127.0.0.1", granted),
            ),
    );
    let r = run(&exec, "api_get", json!({"route": "/"})).await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    let m = message(&r);
    assert!(
        m.contains("Permission denied") && m.contains("denied by the kernel sandbox"),
        "{m}"
    );
    assert!(m.contains(&format!("tcp 127.0.0.1:{granted}")), "{m}");
}

#[test]
fn invalid_grants_refuse_the_start() {
    let ws = tempfile::tempdir().expect("ws");
    let data = tempfile::tempdir().expect("data");
    let db = app::Db::open(data.path()).expect("db");
    for (grants, why) in [
        (Grants::new().read_write("/"), "root directory"),
        (Grants::new().read_write("notes"), "not an absolute path"),
        (
            Grants::new().read_write(data.path().join("..").join("etc")),
            "contains `..`",
        ),
        (Grants::new().read(ws.path()), "overlaps the workspace"),
        (Grants::new().read("/nonexistent/notes"), "No such file"),
    ] {
        let registry = Arc::new(app::registry().expect("tools"));
        let config = ExecutorConfig::new(ws.path())
            .resource_with_grants(db.clone(), grants)
            .resource(app::Api::new("127.0.0.1", 9).expect("api"));
        match Executor::new(registry, config) {
            Err(ExecutorError::InvalidGrant { message, .. }) => {
                assert!(message.contains(why), "{message} / {why}")
            }
            other => panic!("{why}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn programs_see_the_granted_paths_in_their_root_and_nothing_else() {
    if !kernel_ready("programs_see_the_granted_paths_in_their_root_and_nothing_else") {
        return;
    }
    let ws = tempfile::tempdir().expect("ws");
    let shelf = tempfile::tempdir().expect("shelf");
    std::fs::write(shelf.path().join("in.txt"), "on the shelf").expect("write");
    let registry = Registry::builder()
        .with_inventory_where(|m| m == module_path!())
        .build()
        .expect("registry");
    let registry = Arc::new(registry);
    let start = |grants: Option<Grants>| {
        let value = Shelf(shelf.path().to_path_buf());
        let config = ExecutorConfig::new(ws.path())
            .sandbox_helper(HELPER)
            .approver(Arc::new(FixedApprover::allow()));
        let config = match grants {
            Some(g) => config.resource_with_grants(value, g),
            None => config.resource(value),
        };
        Executor::new(Arc::clone(&registry), config).expect("executor")
    };
    let exec = start(Some(Grants::new().read_write(shelf.path())));
    let r = run(&exec, "shelf_copy", json!({})).await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert!(
        r.output
            .as_ref()
            .and_then(|o| o.as_str())
            .unwrap_or("")
            .contains("on the shelf"),
        "{r:?}"
    );
    assert!(
        r.enforced.contains("process: ") && r.enforced.contains("grants: read_write"),
        "{}",
        r.enforced
    );
    assert_eq!(
        std::fs::read_to_string(shelf.path().join("out.txt")).expect("copied"),
        "on the shelf"
    );
    std::fs::remove_file(shelf.path().join("out.txt")).expect("rm");
    // Read only: the program reads the shelf, and may not write there.
    let exec = start(Some(Grants::new().read(shelf.path())));
    let r = run(&exec, "shelf_copy", json!({})).await;
    let text = format!("{:?} {:?}", r.output, r.message);
    assert!(
        text.contains("Read-only file system") || text.contains("Permission denied"),
        "{text}"
    );
    assert!(!shelf.path().join("out.txt").exists());
    // Without a grant the shelf is not in the program's root at all.
    let exec = start(None);
    let r = run(&exec, "shelf_copy", json!({})).await;
    let text = format!("{:?} {:?}", r.output, r.message);
    assert!(
        text.contains("No such file") || text.contains("Directory nonexistent"),
        "{text}"
    );
    assert!(!shelf.path().join("out.txt").exists());
}
