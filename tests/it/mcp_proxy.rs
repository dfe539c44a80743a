//! The guarding proxy: a third-party MCP server's tools are served through the executor, so a
//! call that breaks the schema or leaves the workspace is refused before the child server sees
//! it, and the child's own annotations never lower the risk.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use tool_core::approval::FixedApprover;
use tool_core::mcp::proxy::{self, ProxyConfig};
use tool_core::mcp::{ExecutorBackend, McpBackend, McpCallContext, McpCallOutcome};
use tool_core::{Executor, ExecutorConfig, ReasonCode, Registry, Risk};

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!("test arguments are objects"),
    }
}

/// A call whose client approves everything, standing for a person who approves the call.
fn ctx(id: &str) -> McpCallContext {
    McpCallContext::new(id, Default::default()).with_approver(Arc::new(FixedApprover::allow()))
}

fn received(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("the recorder writes JSON lines"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_refuses_bad_calls_before_the_child_sees_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).expect("workspace");
    let log = dir.path().join("received.jsonl");
    let imported = proxy::import(
        env!("CARGO_BIN_EXE_mcp_recording_server"),
        &[log.display().to_string()],
        &ProxyConfig::default(),
    )
    .await
    .expect("the child server starts and lists its tools");
    assert!(imported.skipped.is_empty(), "{:?}", imported.skipped);
    let def = imported
        .tools
        .iter()
        .find(|t| t.decl().name == "write_file")
        .expect("write_file imported");
    // The child claims readOnlyHint: true; risk comes from our config, default mutation.
    assert_eq!(def.decl().risk, Risk::Mutation);
    assert!(def.guarded_path_args().contains(&"path".to_owned()));

    let mut b = Registry::builder();
    for t in imported.tools.iter().cloned() {
        b = b.tool(t);
    }
    let executor = Executor::new(
        Arc::new(b.build().expect("registry")),
        ExecutorConfig::new(&workspace),
    )
    .expect("executor");
    let backend = ExecutorBackend::new(Arc::new(executor));
    let listed = backend.list_tools();
    assert_eq!(listed[0]["annotations"]["readOnlyHint"], json!(false));

    let unknown_arg = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x", "mode": "0777"})),
            ctx("1"),
        )
        .await;
    assert!(
        matches!(
            unknown_arg,
            McpCallOutcome::Refused {
                code: ReasonCode::InvalidArguments,
                ..
            }
        ),
        "{unknown_arg:?}"
    );

    let escape = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "../outside.txt", "text": "x"})),
            ctx("2"),
        )
        .await;
    assert!(
        matches!(
            escape,
            McpCallOutcome::Refused {
                code: ReasonCode::PathOutsideWorkspace,
                ..
            }
        ),
        "{escape:?}"
    );

    // Only a guard that resolves symlinks sees this one leave the workspace.
    std::os::unix::fs::symlink(dir.path(), workspace.join("link")).expect("symlink");
    let via_symlink = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "link/outside.txt", "text": "x"})),
            ctx("2b"),
        )
        .await;
    assert!(
        matches!(
            via_symlink,
            McpCallOutcome::Refused {
                code: ReasonCode::PathOutsideWorkspace,
                ..
            }
        ),
        "{via_symlink:?}"
    );

    let unapproved = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x"})),
            McpCallContext::new("3", Default::default()),
        )
        .await;
    assert!(
        matches!(
            unapproved,
            McpCallOutcome::Refused {
                code: ReasonCode::ApprovalDenied,
                ..
            }
        ),
        "{unapproved:?}"
    );

    assert!(received(&log).is_empty(), "the child saw a refused call");

    let ok = backend
        .call_tool(
            "write_file".into(),
            args(json!({"path": "a.txt", "text": "x"})),
            ctx("4"),
        )
        .await;
    assert_eq!(ok, McpCallOutcome::ok(json!("received")));
    let seen = received(&log);
    assert_eq!(seen.len(), 1, "{seen:?}");
    // The child gets the path the guard checked: absolute, inside the canonical workspace.
    let checked = workspace
        .canonicalize()
        .expect("workspace exists")
        .join("a.txt");
    assert_eq!(
        seen[0]["arguments"],
        json!({"path": checked.display().to_string(), "text": "x"})
    );

    imported.shutdown().await;
}
