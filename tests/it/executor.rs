//! The executor pipeline: outcomes, refusals before the handler, panics, timeouts, cancellation,
//! the error budget, output caps, trusted argument rules, context modifiers and the script gate.

use crate::exec_support;

use std::sync::Arc;
use std::time::Duration;

use exec_support::{call, registry, Runs, ScriptedApprover};
use serde_json::{json, Value};
use tool_core::approval::{ApprovalDecision, ApprovalReason, ApprovalStatus};
use tool_core::executor::{GateVerdict, ScriptGate, ToolLimits};
use tool_core::registry::ToolDef;
use tool_core::CallOptions;
use tool_core::{
    CallStatus, ContextModifier, Executor, ExecutorConfig, ReasonCode, Risk, ScriptLang, ToolDecl,
    ToolOutcome,
};

fn schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// `echo(n: integer)`: returns `n`; counts its runs.
fn echo(runs: &Runs) -> ToolDef {
    let r = runs.clone();
    ToolDef::builder("echo")
        .description("Echo a number")
        .risk(Risk::Safe)
        .input_schema(schema(json!({"n": {"type": "integer"}}), &["n"]))
        .handler(move |_ctx, args| {
            r.hit();
            async move { ToolOutcome::ok(args["n"].clone()) }
        })
        .build()
        .expect("echo")
}

/// `fail`: always an error outcome whose text looks like success.
fn fail(runs: &Runs) -> ToolDef {
    let r = runs.clone();
    ToolDef::builder("fail")
        .description("Always fails")
        .risk(Risk::Safe)
        .handler(move |_ctx, _args| {
            r.hit();
            async move { Err::<String, String>("ok".into()) }
        })
        .build()
        .expect("fail")
}

fn executor(
    defs: Vec<ToolDef>,
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (Executor, tempfile::TempDir) {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec =
        Executor::new(registry(defs), config(ExecutorConfig::new(ws.path()))).expect("executor");
    (exec, ws)
}

#[tokio::test]
async fn the_outcome_variant_decides_success_never_the_text() {
    let runs = Runs::default();
    let looks_bad = ToolDef::builder("looks_bad")
        .description("Succeeds with an alarming text")
        .risk(Risk::Safe)
        .handler(|_ctx, _args| async { Ok::<_, String>("error: everything failed".to_owned()) })
        .build()
        .expect("tool");
    let (exec, _ws) = executor(vec![fail(&runs), looks_bad], |c| c);
    let s = exec.new_session();
    let r = exec
        .execute(&s, call("fail", json!({})), CallOptions::default())
        .await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Failed, Some(ReasonCode::ToolError))
    );
    assert_eq!(r.message.as_deref(), Some("ok"));
    let r = exec
        .execute(&s, call("looks_bad", json!({})), CallOptions::default())
        .await;
    assert_eq!(r.status, CallStatus::Ok);
    assert_eq!(r.output, Some(json!("error: everything failed")));
}

#[tokio::test]
async fn unknown_tools_and_malformed_text_are_refused() {
    let runs = Runs::default();
    let (exec, _ws) = executor(vec![echo(&runs)], |c| c);
    let s = exec.new_session();
    let r = exec
        .execute(&s, call("ech0", json!({"n": 1})), CallOptions::default())
        .await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Refused, Some(ReasonCode::UnknownTool))
    );
    let r = exec
        .execute_text(&s, r#"{"tool": "echo", "args": {"n": 1}, "x": 1}"#)
        .await;
    assert_eq!(
        (r.status, r.code, r.tool),
        (CallStatus::Refused, Some(ReasonCode::MalformedCall), None)
    );
    let r = exec
        .execute_text(&s, r#"{"tool": "echo", "args": {"n": 7}}"#)
        .await;
    assert_eq!(r.output, Some(json!(7)));
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn schema_violations_are_refused_with_every_path_and_no_coercion() {
    let runs = Runs::default();
    let r2 = runs.clone();
    let nested = ToolDef::builder("nested")
        .description("Takes a list of points")
        .risk(Risk::Safe)
        .input_schema(schema(
            json!({
                "n": {"type": "integer"},
                "points": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}
            }),
            &["n", "points"],
        ))
        .handler(move |_ctx, _args| {
            r2.hit();
            async { "ran" }
        })
        .build()
        .expect("nested");
    let (exec, _ws) = executor(vec![echo(&runs), nested], |c| c.error_budget(0));
    let s = exec.new_session();
    for bad in [
        json!({"n": "42"}),
        json!({"n": true}),
        json!({"n": 1.5}),
        json!({}),
        json!({"n": 1, "m": 2}),
    ] {
        let r = exec
            .execute(&s, call("echo", bad.clone()), CallOptions::default())
            .await;
        assert_eq!(r.code, Some(ReasonCode::InvalidArguments), "{bad}");
    }
    let r = exec
        .execute(
            &s,
            call(
                "nested",
                json!({"n": "1", "points": [{"x": 1}, {"x": "2"}]}),
            ),
            CallOptions::default(),
        )
        .await;
    let msg = r.message.expect("message");
    assert!(msg.contains("/n") && msg.contains("/points/1/x"), "{msg}");
    assert_eq!(runs.count(), 0);
}

#[tokio::test]
async fn a_panicking_tool_fails_and_the_executor_keeps_serving() {
    let runs = Runs::default();
    let async_panic = ToolDef::builder("async_panic")
        .description("Panics while running")
        .risk(Risk::Safe)
        .handler(|_ctx, _args| async {
            if true {
                panic!("boom in async");
            }
            "unreachable"
        })
        .build()
        .expect("tool");
    let sync_panic = ToolDef::builder("sync_panic")
        .description("Panics on the blocking pool")
        .risk(Risk::Safe)
        .raw_handler(Arc::new(|_ctx, _args| {
            Ok(tool_core::__private_0_1_0::boxed(
                tool_core::__private_0_1_0::run_blocking(|| -> String { panic!("boom in sync") }),
            ))
        }))
        .build()
        .expect("tool");
    let eager_panic = ToolDef::builder("eager_panic")
        .description("Panics before returning its future")
        .risk(Risk::Safe)
        .raw_handler(Arc::new(|_ctx, _args| panic!("boom in adapter")))
        .build()
        .expect("tool");
    let (exec, _ws) = executor(
        vec![async_panic, sync_panic, eager_panic, echo(&runs)],
        |c| c,
    );
    let s = exec.new_session();
    for (tool, text) in [
        ("async_panic", "boom in async"),
        ("sync_panic", "boom in sync"),
        ("eager_panic", "boom in adapter"),
    ] {
        let r = exec
            .execute(&s, call(tool, json!({})), CallOptions::default())
            .await;
        assert_eq!(
            (r.status, r.code),
            (CallStatus::Failed, Some(ReasonCode::Panicked)),
            "{tool}"
        );
        assert!(r.message.as_deref().unwrap_or_default().contains(text));
    }
    let r = exec
        .execute(&s, call("echo", json!({"n": 3})), CallOptions::default())
        .await;
    assert_eq!(r.output, Some(json!(3)));
}

fn forever(
    name: &str,
    timeout: Option<Duration>,
    started: Option<Arc<tokio::sync::Notify>>,
) -> ToolDef {
    let mut b = ToolDef::builder(name)
        .description("Never finishes")
        .risk(Risk::Safe);
    if let Some(t) = timeout {
        b = b.timeout(t);
    }
    b.handler(move |_ctx, _args| {
        let started = started.clone();
        async move {
            if let Some(n) = started {
                n.notify_one();
            }
            std::future::pending::<()>().await;
            "unreachable"
        }
    })
    .build()
    .expect("tool")
}

#[tokio::test]
async fn timeouts_come_from_the_declaration_then_limits_then_the_default() {
    let (exec, _ws) = executor(
        vec![
            forever("declared", Some(Duration::from_millis(20)), None),
            forever("limited", Some(Duration::from_secs(3600)), None),
            forever("defaulted", None, None),
        ],
        |c| {
            c.default_timeout(Duration::from_millis(20)).tool_limits(
                "limited",
                ToolLimits {
                    timeout: Some(Duration::from_millis(20)),
                    output_cap: None,
                },
            )
        },
    );
    let s = exec.new_session();
    for tool in ["declared", "limited", "defaulted"] {
        let r = exec
            .execute(&s, call(tool, json!({})), CallOptions::default())
            .await;
        assert_eq!(
            (r.status, r.code),
            (CallStatus::Failed, Some(ReasonCode::Timeout)),
            "{tool}"
        );
    }
}

#[tokio::test]
async fn calls_can_be_cancelled_by_id_or_by_session() {
    let started = Arc::new(tokio::sync::Notify::new());
    let (exec, _ws) = executor(vec![forever("wait", None, Some(started.clone()))], |c| c);
    let exec = Arc::new(exec);
    let s = exec.new_session();

    let (e2, s2) = (exec.clone(), s.clone());
    let task = tokio::spawn(async move {
        e2.execute(
            &s2,
            call("wait", json!({})).with_id("c-1"),
            CallOptions::default(),
        )
        .await
    });
    started.notified().await;
    exec.cancel(&s, Some("c-1"));
    let r = task.await.expect("join");
    assert_eq!(
        (r.status, r.code, r.call_id.as_str()),
        (CallStatus::Failed, Some(ReasonCode::Cancelled), "c-1")
    );

    let (e2, s2) = (exec.clone(), s.clone());
    let task = tokio::spawn(async move {
        e2.execute(&s2, call("wait", json!({})), CallOptions::default())
            .await
    });
    started.notified().await;
    exec.cancel(&s, None);
    let r = task.await.expect("join");
    assert_eq!(r.code, Some(ReasonCode::Cancelled));
    // Cancellation is the caller's decision: it does not count against the model.
    assert_eq!(s.consecutive_failures(), 0);
}

/// An outside cancellation (`CallOptions::cancel`, an MCP client's say) ends a running call as
/// `cancelled` and cancels the token the handler watches; one that fired before the call
/// refuses it without running the handler.
#[tokio::test]
async fn an_outside_cancellation_reaches_the_handler_and_ends_the_call() {
    let started = Arc::new(tokio::sync::Notify::new());
    let seen = Arc::new(std::sync::Mutex::new(None));
    let runs = Runs::default();
    let (s2, seen2, r2) = (started.clone(), seen.clone(), runs.clone());
    let watcher = ToolDef::builder("watch")
        .description("Waits to be cancelled")
        .risk(Risk::Safe)
        .handler(move |ctx, _args| {
            *seen2.lock().expect("lock") = Some(ctx.cancellation().clone());
            let (started, runs) = (s2.clone(), r2.clone());
            async move {
                runs.hit();
                started.notify_one();
                std::future::pending::<()>().await;
                "unreachable"
            }
        })
        .build()
        .expect("watch");
    let (exec, _ws) = executor(vec![watcher], |c| c);
    let exec = Arc::new(exec);
    let s = exec.new_session();

    let outside = tokio_util::sync::CancellationToken::new();
    let options = CallOptions {
        cancel: Some(outside.clone()),
        ..CallOptions::default()
    };
    let (e2, sess) = (exec.clone(), s.clone());
    let task =
        tokio::spawn(async move { e2.execute(&sess, call("watch", json!({})), options).await });
    started.notified().await;
    outside.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the call ends when cancelled")
        .expect("join");
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Failed, Some(ReasonCode::Cancelled)),
        "{r:?}"
    );
    let token = seen.lock().expect("lock").clone().expect("the handler ran");
    assert!(
        token.is_cancelled(),
        "the handler's token was not cancelled"
    );

    // Fired before the call: the handler never runs.
    let before = runs.count();
    let r = exec
        .execute(
            &s,
            call("watch", json!({})),
            CallOptions {
                cancel: Some(outside.clone()),
                ..CallOptions::default()
            },
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::Cancelled), "{r:?}");
    assert_eq!(runs.count(), before, "a cancelled call ran its handler");
    assert_eq!(s.consecutive_failures(), 0);
}

#[tokio::test]
async fn the_error_budget_stops_a_session_until_reset() {
    let runs = Runs::default();
    let (exec, _ws) = executor(vec![echo(&runs), fail(&runs)], |c| c.error_budget(3));
    let s = exec.new_session();
    let other = exec.new_session();
    // A success resets the count.
    exec.execute(&s, call("fail", json!({})), CallOptions::default())
        .await;
    exec.execute(&s, call("fail", json!({})), CallOptions::default())
        .await;
    assert!(exec
        .execute(&s, call("echo", json!({"n": 1})), CallOptions::default())
        .await
        .is_ok());
    // Failures and refusals both count.
    exec.execute(&s, call("fail", json!({})), CallOptions::default())
        .await;
    exec.execute(&s, call("nope", json!({})), CallOptions::default())
        .await;
    exec.execute(&s, call("echo", json!({"n": "x"})), CallOptions::default())
        .await;
    assert_eq!(s.consecutive_failures(), 3);
    let before = runs.count();
    let r = exec
        .execute(&s, call("echo", json!({"n": 2})), CallOptions::default())
        .await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Refused, Some(ReasonCode::ErrorBudgetExhausted))
    );
    assert_eq!(
        runs.count(),
        before,
        "the handler must not run once the budget is spent"
    );
    // Budgets are per session.
    assert!(exec
        .execute(
            &other,
            call("echo", json!({"n": 2})),
            CallOptions::default()
        )
        .await
        .is_ok());
    s.reset_budget();
    assert!(exec
        .execute(&s, call("echo", json!({"n": 2})), CallOptions::default())
        .await
        .is_ok());
}

#[tokio::test]
async fn long_output_is_cut_with_a_marker() {
    let big = ToolDef::builder("big")
        .description("Returns a long text")
        .risk(Risk::Safe)
        .handler(|_ctx, _args| async { "é".repeat(100) })
        .build()
        .expect("tool");
    let (exec, _ws) = executor(vec![big], |c| c.default_output_cap(11));
    let s = exec.new_session();
    let r = exec
        .execute(&s, call("big", json!({})), CallOptions::default())
        .await;
    assert!(r.truncated);
    let text = r
        .output
        .and_then(|v| v.as_str().map(str::to_owned))
        .expect("text");
    assert!(text.starts_with("ééééé\n[output truncated"), "{text}");
    assert!(text.contains("10 of 200 bytes"), "{text}");
}

#[tokio::test]
async fn trusted_defaults_and_overrides_apply_before_validation() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let run = ToolDef::builder("run_in")
        .description("Reports its arguments")
        .risk(Risk::Safe)
        .input_schema(schema(
            json!({"cwd": {"type": "string"}, "timeout": {"type": "integer", "maximum": 60}}),
            &["cwd", "timeout"],
        ))
        .handler(move |_ctx, args| {
            s2.lock().expect("lock").push(args);
            async { "ok" }
        })
        .build()
        .expect("tool");
    let (exec, ws) = executor(vec![run], |c| {
        c.default_arg(None, "cwd", ".")
            .override_arg(Some("run_in"), "timeout", 30)
    });
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("run_in", json!({"timeout": 9999})),
            CallOptions::default(),
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    let args = seen.lock().expect("lock").pop().expect("ran");
    let root = std::fs::canonicalize(ws.path()).expect("canon");
    // `cwd` is a legacy path field of a dynamic tool: defaulted, then guarded and normalized.
    assert_eq!(args["cwd"], json!(root.to_string_lossy()));
    assert_eq!(args["timeout"], json!(30));
}

#[tokio::test]
async fn modifiers_are_merged_into_the_session_and_refused_from_read_only_tools() {
    let remember = ToolDef::builder("remember")
        .description("Stores a value")
        .risk(Risk::Mutation)
        .input_schema(schema(json!({"v": {"type": "string"}}), &["v"]))
        .handler(|ctx, args| async move {
            let before: Option<String> = ctx.state().get("memory/v");
            (
                json!(before),
                ContextModifier::new().with("memory/v", args["v"].clone()),
            )
        })
        .build()
        .expect("tool");
    let sneaky = ToolDef::builder("sneaky")
        .description("Read-only but returns a modifier")
        .risk(Risk::ReadOnly)
        .handler(|_ctx, _args| async { ("x", ContextModifier::new().with("k", 1)) })
        .build()
        .expect("tool");
    let approver = ScriptedApprover::always(ApprovalDecision::Approve);
    let (exec, _ws) = executor(vec![remember, sneaky], |c| c.approver(approver));
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("remember", json!({"v": "a"})),
            CallOptions::default(),
        )
        .await;
    assert!(r.modifier_applied);
    assert_eq!(r.output, Some(Value::Null));
    let r = exec
        .execute(
            &s,
            call("remember", json!({"v": "b"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.output, Some(json!("a")));
    let r = exec
        .execute(
            &s,
            call("remember", json!({"v": "c"})),
            CallOptions::unmerged(),
        )
        .await;
    assert!(!r.modifier_applied && r.modifier.is_some());
    assert_eq!(s.state().get::<String>("memory/v").as_deref(), Some("b"));
    let r = exec
        .execute(&s, call("sneaky", json!({})), CallOptions::default())
        .await;
    assert_eq!(
        (r.status, r.code),
        (CallStatus::Failed, Some(ReasonCode::ToolError))
    );
    assert!(s.state().get_value("k").is_none());
}

#[tokio::test]
async fn the_permission_rule_refuses_before_the_handler() {
    let runs = Runs::default();
    let r2 = runs.clone();
    let t = ToolDef::builder("limited")
        .description("Refuses big numbers")
        .risk(Risk::Safe)
        .input_schema(schema(json!({"n": {"type": "integer"}}), &["n"]))
        .check_permissions(|args| {
            if args["n"].as_i64().unwrap_or(0) > 10 {
                Err("n is over 10".into())
            } else {
                Ok(())
            }
        })
        .handler(move |_ctx, _args| {
            r2.hit();
            async { "ran" }
        })
        .build()
        .expect("tool");
    let (exec, _ws) = executor(vec![t], |c| c);
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("limited", json!({"n": 11})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.code, r.message.as_deref()),
        (Some(ReasonCode::PermissionDenied), Some("n is over 10"))
    );
    assert!(exec
        .execute(&s, call("limited", json!({"n": 1})), CallOptions::default())
        .await
        .is_ok());
    assert_eq!(runs.count(), 1);
}

/// A gate keyed on the script text, standing in for the real scanner.
struct WordGate;

impl ScriptGate for WordGate {
    fn check(&self, _decl: &ToolDecl, args: &Value) -> GateVerdict {
        match args["script"].as_str().unwrap_or_default() {
            s if s.contains("rm -rf") => GateVerdict::Deny {
                rule_ids: vec!["BASH-RM".into()],
                message: "recursive delete".into(),
            },
            s if s.contains("curl") => GateVerdict::Review {
                summary: "network access".into(),
                rule_ids: vec!["BASH-NET".into()],
            },
            _ => GateVerdict::Allow,
        }
    }
}

fn script_tool(runs: &Runs) -> ToolDef {
    let r = runs.clone();
    ToolDef::builder("shell")
        .description("Runs a (pretend) shell script")
        .risk(Risk::ReadOnly)
        .input_schema(schema(json!({"script": {"type": "string"}}), &["script"]))
        .script_args(["script"], ScriptLang::Bash)
        .handler(move |_ctx, _args| {
            r.hit();
            async { "ran" }
        })
        .build()
        .expect("tool")
}

#[tokio::test]
async fn scripts_never_run_unscanned() {
    // With the `safety` feature (on here) the scanner is the default gate: every script call is
    // scanned, a dangerous one never reaches the handler.
    let runs = Runs::default();
    let audit = Arc::new(tool_core::audit::MemoryAuditSink::new());
    let (exec, _ws) = executor(vec![script_tool(&runs)], |c| c.audit(audit.clone()));
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "rm -rf /"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::SafetyDenied), "{r:?}");
    assert_eq!(runs.count(), 0);
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "ls"})),
            CallOptions::default(),
        )
        .await;
    // Allowed by the scan (what happens next, confinement, is not this test's concern).
    assert_ne!(r.step, Some(tool_core::Step::ScriptGate), "{r:?}");
    let events = audit.events();
    assert_eq!(events.len(), 2);
    assert!(
        events.iter().all(|e| e.safety.is_some()),
        "both calls were scanned: {events:?}"
    );
}

#[tokio::test]
async fn the_gate_allows_denies_and_sends_reviews_to_a_human() {
    let runs = Runs::default();
    let (exec, _ws) = executor(vec![script_tool(&runs)], |c| {
        c.script_gate(Arc::new(WordGate))
    });
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "ls"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.status, r.approval),
        (CallStatus::Ok, ApprovalStatus::NotRequired)
    );
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "rm -rf /"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::SafetyDenied));
    // Review on a read-only tool with no approver: blocked, never downgraded to allow.
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "curl x"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::ReviewRequired));
    assert_eq!(runs.count(), 1);

    let approver = ScriptedApprover::new([
        ApprovalDecision::ApproveForSession,
        ApprovalDecision::Deny {
            reason: "no".into(),
        },
    ]);
    let (exec, _ws) = executor(vec![script_tool(&runs)], |c| {
        c.script_gate(Arc::new(WordGate)).approver(approver.clone())
    });
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "curl x"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(
        (r.status, r.approval),
        (CallStatus::Ok, ApprovalStatus::Approved)
    );
    // A review is never covered by a session grant: the second one asks again (and is denied).
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "curl y"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::ApprovalDenied));
    let seen = approver.seen();
    assert_eq!(seen.len(), 2);
    assert!(!seen[0].session_grant_allowed);
    assert!(
        matches!(&seen[0].reason, ApprovalReason::Review { rule_ids, .. } if rule_ids == &["BASH-NET"])
    );
}
