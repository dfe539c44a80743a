//! The regression checklist every change to the executor must keep passing:
//! 1. a missing required field or a nested array type mismatch never reaches the handler;
//! 2. relative guarded paths resolve against the configured workspace, not the process cwd;
//! 3. one out-of-workspace path among several refuses the whole call;
//! 4. arguments edited by an approver are validated and guarded again;
//! 5. a tool without a declared risk is treated as a mutation.

use crate::exec_support;

use std::sync::Arc;

use exec_support::{call, file_tools, registry, Runs, ScriptedApprover};
use serde_json::json;
use tool_core::approval::ApprovalDecision;
use tool_core::registry::ToolDef;
use tool_core::CallOptions;
use tool_core::{CallStatus, Executor, ExecutorConfig, ReasonCode};

#[tokio::test]
async fn bad_arguments_never_reach_the_handler() {
    let runs = Runs::default();
    let r = runs.clone();
    let tool = ToolDef::builder("plot")
        .description("Plots series")
        .risk_name("safe")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "series": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"values": {"type": "array", "items": {"type": "number"}}},
                    "required": ["values"],
                    "additionalProperties": false
                }}
            },
            "required": ["title", "series"],
            "additionalProperties": false
        }))
        .handler(move |_ctx, _args| {
            r.hit();
            async { "plotted" }
        })
        .build()
        .expect("tool");
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = Executor::new(
        registry(vec![tool]),
        ExecutorConfig::new(ws.path()).error_budget(0),
    )
    .expect("executor");
    let s = exec.new_session();
    let cases = [
        json!({"series": []}),
        json!({"title": "t", "series": [{"values": [1, "2"]}]}),
        json!({"title": "t", "series": [{"values": 1}]}),
        json!({"title": "t", "series": [{}]}),
        json!({"title": "t", "series": {"values": [1]}}),
    ];
    for args in cases {
        let res = exec
            .execute(&s, call("plot", args.clone()), CallOptions::default())
            .await;
        assert_eq!(
            (res.status, res.code),
            (CallStatus::Refused, Some(ReasonCode::InvalidArguments)),
            "{args}"
        );
    }
    assert_eq!(runs.count(), 0);
    assert!(exec
        .execute(
            &s,
            call(
                "plot",
                json!({"title": "t", "series": [{"values": [1, 2.5]}]})
            ),
            CallOptions::default()
        )
        .await
        .is_ok());
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn relative_paths_resolve_against_the_workspace_not_the_process_cwd() {
    // The test runs with the crate directory as cwd, where `Cargo.toml` exists.
    assert!(std::path::Path::new("Cargo.toml").exists());
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("notes.txt"), "from the workspace").expect("write");
    let runs = Runs::default();
    let exec = Executor::new(registry(file_tools(&runs)), ExecutorConfig::new(ws.path()))
        .expect("executor");
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("read_file", json!({"path": "notes.txt"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.output, Some(json!("from the workspace")));
    // `Cargo.toml` is looked for in the workspace, where it does not exist.
    let r = exec
        .execute(
            &s,
            call("read_file", json!({"path": "Cargo.toml"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Failed, Some(ReasonCode::ToolError))
    );
}

#[tokio::test]
async fn one_bad_path_among_several_refuses_the_whole_call() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("keep.txt"), "data").expect("write");
    let runs = Runs::default();
    let exec = Executor::new(
        registry(file_tools(&runs)),
        ExecutorConfig::new(ws.path())
            .approver(Arc::new(tool_core::approval::FixedApprover::allow())),
    )
    .expect("executor");
    let s = exec.new_session();
    for (src, dst) in [
        ("keep.txt", "../stolen.txt"),
        ("../x.txt", "keep2.txt"),
        ("keep.txt", "/tmp/stolen.txt"),
    ] {
        let r = exec
            .execute(
                &s,
                call("move_file", json!({"source": src, "destination": dst})),
                CallOptions::default(),
            )
            .await;
        assert_eq!(
            (r.status, r.code),
            (CallStatus::Refused, Some(ReasonCode::PathOutsideWorkspace)),
            "{src} -> {dst}"
        );
    }
    assert_eq!(runs.count(), 0);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("keep.txt")).expect("kept"),
        "data"
    );
}

#[tokio::test]
async fn approver_edits_cannot_bypass_validation_or_the_path_guard() {
    let ws = tempfile::tempdir().expect("tempdir");
    let runs = Runs::default();
    for (edit, code) in [
        (
            json!({"path": "ok.txt", "content": ["not", "a", "string"]}),
            ReasonCode::InvalidArguments,
        ),
        (
            json!({"path": "../../escape.txt", "content": "x"}),
            ReasonCode::PathOutsideWorkspace,
        ),
        (
            json!({"path": "ok.txt", "content": "x", "extra": true}),
            ReasonCode::InvalidArguments,
        ),
        (json!("not an object"), ReasonCode::InvalidArguments),
    ] {
        let approver = ScriptedApprover::new([
            ApprovalDecision::Edit { args: edit.clone() },
            ApprovalDecision::Approve,
        ]);
        let exec = Executor::new(
            registry(file_tools(&runs)),
            ExecutorConfig::new(ws.path()).approver(approver),
        )
        .expect("executor");
        let s = exec.new_session();
        let r = exec
            .execute(
                &s,
                call("write_file", json!({"path": "ok.txt", "content": "fine"})),
                CallOptions::default(),
            )
            .await;
        assert_eq!(r.code, Some(code), "{edit}");
    }
    assert_eq!(runs.count(), 0);
    assert!(!ws.path().join("ok.txt").exists());
}

#[tokio::test]
async fn an_undeclared_risk_is_a_mutation_and_needs_approval() {
    let tool = ToolDef::builder("touch")
        .description("Does something")
        .handler(|_ctx, _args| async { "done" })
        .build()
        .expect("tool");
    let ws = tempfile::tempdir().expect("tempdir");
    let exec =
        Executor::new(registry(vec![tool]), ExecutorConfig::new(ws.path())).expect("executor");
    let s = exec.new_session();
    let r = exec
        .execute(&s, call("touch", json!({})), CallOptions::default())
        .await;
    assert_eq!(r.code, Some(ReasonCode::ApprovalDenied));
    assert!(ToolDef::builder("x")
        .description("d")
        .risk_name("harmless")
        .handler(|_c, _a| async { "" })
        .build()
        .is_err());
}
