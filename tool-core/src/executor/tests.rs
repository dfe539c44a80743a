//! The step that refuses a call is named in its result and its audit event; the one entry point
//! takes every form of input; `merge_modifier` is an option with a merging default.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::{CallInput, CallOptions, Executor, ExecutorConfig, Step};
use crate::approval::FixedApprover;
use crate::audit::MemoryAuditSink;
use crate::call::{ParseError, ToolCall};
use crate::context::{ContextModifier, ToolContext};
use crate::decl::{Risk, ScriptLang};
use crate::outcome::ToolOutcome;
use crate::reason::ReasonCode;
use crate::registry::{Registry, ToolDef};
use crate::status::CallStatus;

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new(name, object(args))
}

fn tools() -> Registry {
    let echo = ToolDef::builder("echo")
        .description("Echoes n.")
        .input_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "path": {"type": "string"}},
            "additionalProperties": false
        }))
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .check_permissions(|args: &Value| match args.get("n") {
            Some(n) if *n == json!(13) => Err("13 is not allowed".to_owned()),
            _ => Ok(()),
        })
        .handler(|_ctx: ToolContext, args: Value| async move {
            match args.get("n") {
                Some(n) if *n == json!(0) => ToolOutcome::error("zero"),
                _ => ToolOutcome::ok(args),
            }
        })
        .build()
        .expect("valid tool");
    let touch = ToolDef::builder("touch")
        .description("Changes the context.")
        .input_schema(json!({"type": "object", "additionalProperties": false}))
        .risk(Risk::Mutation)
        .handler(|_ctx: ToolContext, _args: Value| async move {
            let mut m = ContextModifier::new();
            m.set("touched", true);
            ToolOutcome::ok("done").with_modifier(m)
        })
        .build()
        .expect("valid tool");
    let shell = ToolDef::builder("shell")
        .description("Runs a script.")
        .input_schema(json!({
            "type": "object",
            "properties": {"script": {"type": "string"}},
            "required": ["script"],
            "additionalProperties": false
        }))
        .risk(Risk::ReadOnly)
        .script_args(["script"], ScriptLang::Bash)
        .handler(|_ctx: ToolContext, _args: Value| async move { "ran" })
        .build()
        .expect("valid tool");
    Registry::builder()
        .tool(echo)
        .tool(touch)
        .tool(shell)
        .build()
        .expect("registry")
}

fn executor(
    dir: &std::path::Path,
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> Executor {
    let config = config(ExecutorConfig::new(dir).error_budget(0).argument_filter(
        |_decl, args: &mut Map<String, Value>| match args.get("n") {
            Some(n) if *n == json!(7) => Err("7 is filtered out".to_owned()),
            _ => Ok(()),
        },
    ));
    let config = config.script_gate(Arc::new(DenyScripts));
    Executor::new(Arc::new(tools()), config).expect("executor over a temp dir")
}

/// A gate that refuses every script, so these tests do not depend on the scanner.
struct DenyScripts;

impl super::ScriptGate for DenyScripts {
    fn check(&self, decl: &crate::decl::ToolDecl, _args: &Value) -> super::GateVerdict {
        if decl.script_args.is_empty() {
            return super::GateVerdict::Allow;
        }
        super::GateVerdict::Deny {
            rule_ids: vec!["TEST-DENY".to_owned()],
            message: "scripts are refused here".to_owned(),
        }
    }
}

#[cfg(not(feature = "safety"))]
#[test]
fn without_the_safety_feature_script_tools_are_refused_at_start_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Executor::new(Arc::new(tools()), ExecutorConfig::new(dir.path()))
        .expect_err("no script gate");
    let super::ExecutorError::NoScriptGate {
        tools: named,
        message,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(named, &["shell".to_owned()]);
    assert!(message.contains("`safety`"), "{message}");
    assert!(message.contains("ExecutorConfig::script_gate"), "{message}");
    // An explicit gate, or the scan switched off, is enough.
    let off = ExecutorConfig::new(dir.path()).scan(super::ScanMode::Off);
    assert!(Executor::new(Arc::new(tools()), off).is_ok());
}

#[cfg(feature = "safety")]
#[tokio::test]
async fn with_the_safety_feature_the_scanner_is_the_default_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = Arc::new(MemoryAuditSink::new());
    let config = ExecutorConfig::new(dir.path()).audit(audit.clone());
    let exec = Executor::new(Arc::new(tools()), config).expect("the scanner is the default");
    let s = exec.new_session();
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": "rm -rf /"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.code, Some(ReasonCode::SafetyDenied), "{r:?}");
    assert_eq!(r.step, Some(Step::ScriptGate), "{r:?}");
    // Judged against the executor's workspace: a write outside it is not allowed. (Not beside
    // the workspace: that is under /tmp, which the scanner lets any script use as scratch; and
    // not under a system path, which is denied with or without a workspace.)
    let outside = "echo x > /elsewhere-than-the-workspace/x".to_owned();
    let r = exec
        .execute(
            &s,
            call("shell", json!({"script": outside})),
            CallOptions::default(),
        )
        .await;
    assert_ne!(r.status, CallStatus::Ok, "{r:?}");
    let events = audit.events();
    assert!(
        events.iter().all(|e| e.safety.is_some()),
        "every call was scanned"
    );
}

#[tokio::test]
async fn each_refusal_names_its_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let audit = Arc::new(MemoryAuditSink::new());
    let exec = executor(dir.path(), |c| c.audit(audit.clone()));
    let s = exec.new_session();
    let cases: [(CallInput<'_>, Step, ReasonCode); 8] = [
        ("not a call(".into(), Step::Parse, ReasonCode::MalformedCall),
        (
            call("nope", json!({})).into(),
            Step::Lookup,
            ReasonCode::UnknownTool,
        ),
        (
            call("echo", json!({"n": 7})).into(),
            Step::Filters,
            ReasonCode::InvalidArguments,
        ),
        (
            call("echo", json!({"n": "x"})).into(),
            Step::Validate,
            ReasonCode::InvalidArguments,
        ),
        (
            call("echo", json!({"path": "../out"})).into(),
            Step::Guard,
            ReasonCode::PathOutsideWorkspace,
        ),
        (
            call("echo", json!({"n": 13})).into(),
            Step::Permissions,
            ReasonCode::PermissionDenied,
        ),
        (
            call("shell", json!({"script": "ls"})).into(),
            Step::ScriptGate,
            ReasonCode::SafetyDenied,
        ),
        (
            call("touch", json!({})).into(),
            Step::Approve,
            ReasonCode::ApprovalDenied,
        ),
    ];
    for (input, step, code) in cases {
        let r = exec.execute(&s, input, CallOptions::default()).await;
        assert_eq!(r.status, CallStatus::Refused, "{r:?}");
        assert_eq!((r.step, r.code), (Some(step), Some(code)), "{r:?}");
    }
    let failed = exec
        .execute(&s, call("echo", json!({"n": 0})), CallOptions::default())
        .await;
    assert_eq!(failed.status, CallStatus::Failed);
    assert_eq!(failed.step, Some(Step::Run));
    let ok = exec
        .execute(&s, call("echo", json!({"n": 1})), CallOptions::default())
        .await;
    assert!(ok.is_ok());
    assert_eq!(ok.step, None);

    let events = audit.events();
    assert_eq!(events.len(), 10);
    assert_eq!(events[1].step, Some(Step::Lookup));
    assert_eq!(events[9].step, None);
    let line = serde_json::to_value(&events[7]).expect("serializable");
    assert_eq!(line["step"], json!("approve"));
}

#[tokio::test]
async fn a_spent_budget_is_refused_at_the_budget_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = executor(dir.path(), |c| c.error_budget(1));
    let s = exec.new_session();
    let first = exec
        .execute_text(&s, r#"{"tool": "nope", "args": {}}"#)
        .await;
    assert_eq!(first.step, Some(Step::Lookup));
    let second = exec
        .execute_text(&s, r#"{"tool": "echo", "args": {}}"#)
        .await;
    assert_eq!(second.code, Some(ReasonCode::ErrorBudgetExhausted));
    assert_eq!(second.step, Some(Step::Budget));
}

#[tokio::test]
async fn text_calls_and_parse_results_take_the_same_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = executor(dir.path(), |c| c);
    let s = exec.new_session();
    let text = exec.execute(&s, "echo(n=2)", CallOptions::default()).await;
    let parsed = exec
        .execute(
            &s,
            Ok(call("echo", json!({"n": 2}))),
            CallOptions::default(),
        )
        .await;
    let direct = exec
        .execute(&s, call("echo", json!({"n": 2})), CallOptions::default())
        .await;
    for r in [&text, &parsed, &direct] {
        assert_eq!(r.output, Some(json!({"n": 2})), "{r:?}");
    }
    let bad: Result<ToolCall, ParseError> = Err(ParseError::new("broken"));
    let refused = exec.execute(&s, bad, CallOptions::default()).await;
    assert_eq!(refused.step, Some(Step::Parse));
    let named = CallOptions {
        call_id: Some("mine".to_owned()),
        ..CallOptions::default()
    };
    let r = exec
        .execute(&s, call("echo", json!({})).with_id("theirs"), named)
        .await;
    assert_eq!(r.call_id, "mine");
}

#[tokio::test]
async fn modifiers_merge_by_default_and_not_when_the_caller_merges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = executor(dir.path(), |c| c.approver(Arc::new(FixedApprover::allow())));
    let s = exec.new_session();
    let kept = exec
        .execute(&s, call("touch", json!({})), CallOptions::unmerged())
        .await;
    assert!(kept.is_ok() && kept.modifier.is_some() && !kept.modifier_applied);
    assert!(s.state().get::<bool>("touched").is_none());
    let merged = exec
        .execute(&s, call("touch", json!({})), CallOptions::default())
        .await;
    assert!(merged.modifier_applied);
    assert_eq!(s.state().get::<bool>("touched"), Some(true));
}

#[tokio::test]
async fn a_batch_takes_parsed_results_and_names_the_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = executor(dir.path(), |c| c);
    let s = exec.new_session();
    let calls: Vec<Result<ToolCall, ParseError>> = vec![
        Ok(call("echo", json!({"n": 1}))),
        Err(ParseError::new("broken")),
        Ok(call("echo", json!({"n": "x"}))),
    ];
    let results = exec
        .run_batch(&s, calls, super::BatchOptions::default())
        .await;
    let steps: Vec<Option<Step>> = results.iter().map(|r| r.step).collect();
    assert_eq!(steps, [None, Some(Step::Parse), Some(Step::Validate)]);
    let texts = exec
        .run_batch(
            &s,
            vec!["echo(n=3)", "nope()"],
            super::BatchOptions::default(),
        )
        .await;
    assert!(texts[0].is_ok());
    assert_eq!(texts[1].step, Some(Step::Lookup));
}
