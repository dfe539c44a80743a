//! Approval by risk: read-only tools run unasked, mutations ask (and may be granted for the
//! session), destructive tools ask every time, no approver means deny, and edited arguments go
//! through every check again.

use crate::exec_support;

use std::sync::Arc;

use exec_support::{call, file_tools, registry, Runs, ScriptedApprover};
use serde_json::json;
use tool_core::approval::{ApprovalDecision, ApprovalReason, ApprovalStatus, Approver};

use tool_core::{CallOptions, CallResult, Session};
use tool_core::{CallStatus, Executor, ExecutorConfig, ReasonCode, Risk};

fn setup(approver: Option<Arc<dyn Approver>>) -> (Executor, tempfile::TempDir, Runs) {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("a.txt"), "A").expect("write");
    let runs = Runs::default();
    let mut config = ExecutorConfig::new(ws.path()).error_budget(0);
    if let Some(a) = approver {
        config = config.approver(a);
    }
    let exec = Executor::new(registry(file_tools(&runs)), config).expect("executor");
    (exec, ws, runs)
}

/// `write_file` of `b.txt` (a mutation: it asks).
async fn write_b(exec: &Executor, s: &Session) -> CallResult {
    exec.execute(
        s,
        call("write_file", json!({"path": "b.txt", "content": "x"})),
        CallOptions::default(),
    )
    .await
}

#[tokio::test]
async fn without_an_approver_only_read_only_tools_run() {
    let (exec, ws, runs) = setup(None);
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("read_file", json!({"path": "a.txt"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.status, r.approval),
        (CallStatus::Ok, ApprovalStatus::NotRequired)
    );
    let r = write_b(&exec, &s).await;
    assert_eq!(
        (r.code, r.approval),
        (Some(ReasonCode::ApprovalDenied), ApprovalStatus::NoApprover)
    );
    let r = exec
        .execute(
            &s,
            call("delete_file", json!({"path": "a.txt"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::ApprovalDenied));
    assert_eq!(runs.count(), 1);
    assert!(!ws.path().join("b.txt").exists() && ws.path().join("a.txt").exists());
}

#[tokio::test]
async fn a_session_grant_covers_later_mutations_of_that_session_only() {
    let approver = ScriptedApprover::new([
        ApprovalDecision::ApproveForSession,
        ApprovalDecision::Deny {
            reason: "no".into(),
        },
    ]);
    let (exec, _ws, _runs) = setup(Some(approver.clone()));
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("write_file", json!({"path": "b.txt", "content": "1"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.approval, ApprovalStatus::ApprovedForSession);
    let r = exec
        .execute(
            &s,
            call("write_file", json!({"path": "c.txt", "content": "2"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.status, r.approval),
        (CallStatus::Ok, ApprovalStatus::SessionGrant)
    );
    assert_eq!(
        approver.seen().len(),
        1,
        "the grant must be reused without asking"
    );
    assert!(approver.seen()[0].session_grant_allowed);
    // The grant is for that tool in that session.
    let other = exec.new_session();
    let r = exec
        .execute(
            &other,
            call("write_file", json!({"path": "d.txt", "content": "3"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::ApprovalDenied));
    assert_eq!(approver.seen().len(), 2);
    s.revoke_grants();
    assert!(!s.has_grant("write_file"));
}

#[tokio::test]
async fn destructive_tools_ask_every_time_even_after_a_session_answer() {
    let approver = ScriptedApprover::always(ApprovalDecision::ApproveForSession);
    let (exec, ws, _runs) = setup(Some(approver.clone()));
    std::fs::write(ws.path().join("b.txt"), "B").expect("write");
    let s = exec.new_session();
    for f in ["a.txt", "b.txt"] {
        let r = exec
            .execute(
                &s,
                call("delete_file", json!({"path": f})),
                CallOptions::default(),
            )
            .await;
        assert_eq!(
            (r.status, r.approval),
            (CallStatus::Ok, ApprovalStatus::Approved)
        );
    }
    let seen = approver.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen
        .iter()
        .all(|r| !r.session_grant_allowed && r.risk == Risk::Destructive));
    assert!(matches!(
        seen[0].reason,
        ApprovalReason::Risk {
            risk: Risk::Destructive
        }
    ));
    assert!(!s.has_grant("delete_file"));
}

#[tokio::test]
async fn a_denial_carries_the_reason_and_the_handler_never_runs() {
    let approver = ScriptedApprover::new([ApprovalDecision::Deny {
        reason: "not today".into(),
    }]);
    let (exec, _ws, runs) = setup(Some(approver));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Refused, Some(ReasonCode::ApprovalDenied))
    );
    assert!(r
        .message
        .as_deref()
        .unwrap_or_default()
        .contains("not today"));
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn a_pending_answer_stops_the_call_unrun_as_input_required() {
    let approver = ScriptedApprover::new([ApprovalDecision::Pending]);
    let (exec, ws, runs) = setup(Some(approver));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(
        (r.status, r.code, r.approval),
        (
            CallStatus::Refused,
            Some(ReasonCode::InputRequired),
            ApprovalStatus::Pending
        )
    );
    assert_eq!(runs.count(), 0);
    assert!(!ws.path().join("b.txt").exists());
    assert!(!s.has_grant("write_file"));
}

#[tokio::test]
async fn the_approver_sees_the_final_normalized_arguments() {
    let approver = ScriptedApprover::new([ApprovalDecision::Approve]);
    let (exec, ws, _runs) = setup(Some(approver.clone()));
    let s = exec.new_session();
    exec.execute(
        &s,
        call(
            "write_file",
            json!({"path": "./x/../b.txt", "content": "x"}),
        ),
        CallOptions::default(),
    )
    .await;
    let root = std::fs::canonicalize(ws.path()).expect("canon");
    assert_eq!(
        approver.seen()[0].args["path"],
        json!(root.join("b.txt").to_string_lossy())
    );
}

#[tokio::test]
async fn edited_arguments_are_validated_guarded_and_asked_about_again() {
    // Edit to something invalid: refused by the schema.
    let approver = ScriptedApprover::new([ApprovalDecision::Edit {
        args: json!({"path": "b.txt", "content": 5}),
    }]);
    let (exec, ws, runs) = setup(Some(approver));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(r.code, Some(ReasonCode::InvalidArguments));

    // Edit to a path outside: refused by the guard.
    let approver = ScriptedApprover::new([
        ApprovalDecision::Edit {
            args: json!({"path": "../evil.txt", "content": "x"}),
        },
        ApprovalDecision::Approve,
    ]);
    let (exec, ws2, _) = setup(Some(approver));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(r.code, Some(ReasonCode::PathOutsideWorkspace));
    assert!(!ws2
        .path()
        .parent()
        .expect("parent")
        .join("evil.txt")
        .exists());

    // A valid edit is asked about again, then runs with the edited arguments.
    let approver = ScriptedApprover::new([
        ApprovalDecision::Edit {
            args: json!({"path": "c.txt", "content": "edited"}),
        },
        ApprovalDecision::Approve,
    ]);
    let (exec, ws3, _) = setup(Some(approver.clone()));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(ws3.path().join("c.txt")).expect("c"),
        "edited"
    );
    assert!(!ws3.path().join("b.txt").exists());
    let rounds: Vec<u32> = approver.seen().iter().map(|r| r.round).collect();
    assert_eq!(rounds, vec![0, 1]);
    assert_eq!(runs.count(), 0);
    drop(ws);
}

#[tokio::test]
async fn endless_edits_are_refused() {
    let approver = ScriptedApprover::always(ApprovalDecision::Edit {
        args: json!({"path": "b.txt", "content": "again"}),
    });
    let (exec, _ws, runs) = setup(Some(approver.clone()));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(
        (r.code, r.approval),
        (Some(ReasonCode::ApprovalDenied), ApprovalStatus::EditLimit)
    );
    assert_eq!(
        approver.seen().len(),
        4,
        "first question plus three edit rounds"
    );
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn a_closure_is_an_approver() {
    let approver = tool_core::approval::from_fn(|req| {
        if req.tool == "write_file" {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Deny {
                reason: format!("`{}` is not allowed here", req.tool),
            }
        }
    });
    let (exec, ws, runs) = setup(Some(Arc::new(approver)));
    let s = exec.new_session();
    let r = write_b(&exec, &s).await;
    assert_eq!(
        (r.status, r.approval),
        (CallStatus::Ok, ApprovalStatus::Approved)
    );
    assert!(ws.path().join("b.txt").exists());
    let r = exec
        .execute(
            &s,
            call("delete_file", json!({"path": "a.txt"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.code, r.approval),
        (Some(ReasonCode::ApprovalDenied), ApprovalStatus::Denied)
    );
    assert!(ws.path().join("a.txt").exists());
    assert_eq!(runs.count(), 1);
}
