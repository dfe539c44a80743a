//! Tests of states: issued, redeemed once, bound to their call; approvers of the rounds.

use super::*;
use crate::approval::ApprovalReason;
use crate::decl::Risk;

fn req(args: Value) -> ApprovalRequest {
    ApprovalRequest {
        session_id: "s".into(),
        call_id: "1".into(),
        tool: "write".into(),
        risk: Risk::Mutation,
        args,
        reason: ApprovalReason::Risk {
            risk: Risk::Mutation,
        },
        session_grant_allowed: true,
        round: 0,
        effects: Vec::new(),
    }
}

fn who(id: &str) -> Caller {
    Caller::keyed(id)
}

#[tokio::test]
async fn an_issued_state_is_outstanding_until_used() {
    let quotas = ClientQuotas::new().with_max_pending_per_client(1);
    let states = ApprovalStates::generated(&quotas);
    let args = obj(json!({"path": "a"}));
    let progress = asked(&json!({"path": "a"}));
    let first = states
        .issue("write", &args, &who("alice"), &progress)
        .await
        .expect("quota")
        .expect("sealed");
    let e = states
        .issue("write", &args, &who("alice"), &progress)
        .await
        .expect_err("at quota");
    assert_eq!(
        e.data.expect("data")["reason_code"],
        "client_quota_exceeded"
    );
    let bob = states
        .issue("write", &args, &who("bob"), &progress)
        .await
        .expect("another client");
    assert!(bob.is_ok());
    // A refused retry (another caller) does not answer the round; the right one does.
    assert!(states
        .redeem(&first, "write", &args, &who("bob"))
        .await
        .is_err());
    assert!(states
        .issue("write", &args, &who("alice"), &progress)
        .await
        .is_err());
    states
        .redeem(&first, "write", &args, &who("alice"))
        .await
        .expect("verifies");
    // Bob's round is still outstanding: he is at his quota.
    assert!(states
        .issue("write", &args, &who("bob"), &progress)
        .await
        .is_err());
    assert!(states
        .issue("write", &args, &who("alice"), &progress)
        .await
        .is_ok());
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn asked(args: &Value) -> Progress {
    Progress {
        round: 1,
        approval: Some(ApprovalMark::Asked {
            args: args_hash(args),
        }),
        ..Progress::default()
    }
}

#[tokio::test]
async fn a_state_verifies_once_for_its_tool_arguments_and_caller() {
    let states = ApprovalStates::generated(&ClientQuotas::default());
    let args = obj(json!({"path": "a", "text": "x"}));
    let progress = asked(&json!({"path": "a", "text": "x"}));
    let state = states
        .issue("write", &args, &who(""), &progress)
        .await
        .expect("quota")
        .expect("sealed");
    // Key order does not change the canonical arguments.
    let reordered = obj(json!({"text": "x", "path": "a"}));
    let back = states
        .redeem(&state, "write", &reordered, &who(""))
        .await
        .expect("verifies");
    assert_eq!(back, progress);
    assert_eq!(back.ticket("write").map(|t| t.tool), Some("write".into()));
    let again = states
        .redeem(&state, "write", &args, &who(""))
        .await
        .expect_err("replay");
    assert_eq!(again.code, ReasonCode::ApprovalStateReplayed);
}

#[tokio::test]
async fn other_arguments_tools_callers_or_bytes_do_not_verify() {
    let states = ApprovalStates::generated(&ClientQuotas::default());
    let args = obj(json!({"path": "a"}));
    let state = states
        .issue("write", &args, &who("alice"), &asked(&json!({"path": "a"})))
        .await
        .expect("quota")
        .expect("sealed");
    let other = obj(json!({"path": "b"}));
    for (s, tool, a, caller) in [
        (state.clone(), "write", &other, "alice"),
        (state.clone(), "delete", &args, "alice"),
        (state.clone(), "write", &args, "bob"),
        (format!("{state}x"), "write", &args, "alice"),
    ] {
        let e = states
            .redeem(&s, tool, a, &who(caller))
            .await
            .expect_err("refused");
        assert_eq!(e.code, ReasonCode::ApprovalStateInvalid);
    }
    // Another process's key does not verify it either.
    let e = ApprovalStates::generated(&ClientQuotas::default())
        .redeem(&state, "write", &args, &who("alice"))
        .await
        .expect_err("other key");
    assert_eq!(e.code, ReasonCode::ApprovalStateInvalid);
    // Nor for a prompt of the same name.
    let e = states
        .redeem_for(&state, PROMPTS_GET, "write", &args, &who("alice"))
        .await
        .expect_err("other method");
    assert_eq!(e.code, ReasonCode::ApprovalStateInvalid);
    // The refusals did not use it up.
    assert!(states
        .redeem(&state, "write", &args, &who("alice"))
        .await
        .is_ok());
}

#[tokio::test]
async fn a_state_carries_at_most_so_many_answer_bytes() {
    let states = ApprovalStates::generated(&ClientQuotas::default());
    let mut progress = Progress::default();
    for i in 0..5 {
        progress.answers.insert(
            format!("q{i}"),
            StoredAnswer {
                request: String::new(),
                value: json!("x".repeat(MAX_STATE_ANSWER_BYTES / 4)),
            },
        );
    }
    assert!(states
        .issue("t", &Map::new(), &who(""), &progress)
        .await
        .expect("quota")
        .is_err());
}

#[tokio::test]
async fn an_answer_approves_only_the_arguments_asked_about() {
    let states = ApprovalStates::generated(&ClientQuotas::default());
    let asked_req = req(json!({"path": "a"}));
    let args = obj(json!({"path": "a"}));
    let state = states
        .issue("write", &args, &who(""), &asked(&json!({"path": "a"})))
        .await
        .expect("quota")
        .expect("sealed");
    let ticket = states
        .redeem(&state, "write", &args, &who(""))
        .await
        .expect("verifies")
        .ticket("write")
        .expect("ticket");
    let answer: ElicitResult =
        serde_json::from_value(json!({"action": "accept", "content": {"approve": true}}))
            .expect("answer");
    let approver = AnsweredApprover::new(ticket.clone(), answer.clone());
    assert!(matches!(
        approver.decide(&req(json!({"path": "b"}))).await,
        ApprovalDecision::Deny { .. }
    ));
    let approver = AnsweredApprover::new(ticket.clone(), answer);
    // A session grant is never honoured over a stateless request.
    assert_eq!(approver.decide(&asked_req).await, ApprovalDecision::Approve);
    assert!(matches!(
        approver.decide(&asked_req).await,
        ApprovalDecision::Deny { .. }
    ));
    let granted = GrantedApprover::new(ticket);
    assert!(matches!(
        granted.decide(&req(json!({"path": "b"}))).await,
        ApprovalDecision::Deny { .. }
    ));
    let granted = RecordingApprover::new(GrantedApprover::new(Ticket {
        tool: "write".into(),
        approval_args: args_hash(&json!({"path": "a"})),
    }));
    assert_eq!(granted.decide(&asked_req).await, ApprovalDecision::Approve);
    assert_eq!(granted.approved(), Some(args_hash(&json!({"path": "a"}))));
}

#[test]
fn the_question_is_an_elicitation_input_request() {
    let q = approval_question(&req(json!({})), "s".into()).expect("question");
    let v = serde_json::to_value(&q).expect("json");
    assert_eq!(v["resultType"], "input_required");
    assert_eq!(v["requestState"], "s");
    assert_eq!(
        v["inputRequests"][APPROVAL_INPUT_KEY]["method"],
        "elicitation/create"
    );
    let props = &v["inputRequests"][APPROVAL_INPUT_KEY]["params"]["requestedSchema"]["properties"];
    assert!(props.get("approve").is_some());
    assert!(props.get("for_session").is_none());
}
