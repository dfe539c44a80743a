//! The per-call context and the session state: what a tool sees (ids, workspace, a snapshot of the
//! state, its output budget), typed keys and the file-history view, and the session's output
//! budget, which cuts output with a marker and records the cut.

use crate::exec_support;

use std::sync::{Arc, Mutex};

use exec_support::{call, registry};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_core::approval::FixedApprover;
use tool_core::audit::MemoryAuditSink;
use tool_core::context::FILE_HISTORY_PREFIX;
use tool_core::executor::BatchOptions;
use tool_core::executor::ToolLimits;
use tool_core::registry::ToolDef;
use tool_core::CallOptions;
use tool_core::{
    ContextModifier, Executor, ExecutorConfig, Risk, SessionState, StateKey, ToolOutcome,
};

fn schema(props: Value) -> Value {
    json!({"type": "object", "properties": props, "additionalProperties": false})
}

/// `look`: concurrency-safe; returns what its context says.
fn look() -> ToolDef {
    ToolDef::builder("look")
        .description("Report the context")
        .risk(Risk::ReadOnly)
        .concurrency_safe(true)
        .input_schema(schema(json!({})))
        .handler(|ctx, _args| async move {
            ToolOutcome::ok(json!({
                "session": ctx.session_id(),
                "call": ctx.call_id(),
                "workspace": ctx.workspace().display().to_string(),
                "budget": ctx.output_budget(),
                "cancelled": ctx.is_cancelled(),
                "state": ctx.state().entries().map(|(k, v)| (k.to_owned(), v.clone())).collect::<serde_json::Map<_, _>>(),
            }))
        })
        .build()
        .expect("look")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    text: String,
    rev: u32,
}

const NOTE: StateKey<Note> = StateKey::new("note");

/// `note(text, rev)`: a mutation that stores a typed note.
fn note() -> ToolDef {
    ToolDef::builder("note")
        .description("Store a note")
        .risk(Risk::Mutation)
        .input_schema(schema(
            json!({"text": {"type": "string"}, "rev": {"type": "integer"}}),
        ))
        .handler(|_ctx, args| async move {
            let n = Note {
                text: args["text"].as_str().unwrap_or_default().to_owned(),
                rev: args["rev"].as_u64().unwrap_or(0) as u32,
            };
            let mut m = ContextModifier::new();
            m.put(&NOTE, &n);
            ToolOutcome::ok("noted").with_modifier(m)
        })
        .build()
        .expect("note")
}

/// `say(n)`: returns a string of `n` bytes and records the budget its context offered.
fn say(offered: &Arc<Mutex<Vec<Option<usize>>>>) -> ToolDef {
    let o = offered.clone();
    ToolDef::builder("say")
        .description("Say n bytes")
        .risk(Risk::Safe)
        .input_schema(schema(json!({"n": {"type": "integer", "minimum": 0}})))
        .handler(move |ctx, args| {
            o.lock().expect("lock").push(ctx.output_budget());
            async move { ToolOutcome::ok("x".repeat(args["n"].as_u64().unwrap_or(0) as usize)) }
        })
        .build()
        .expect("say")
}

fn executor(defs: Vec<ToolDef>, config: impl FnOnce(ExecutorConfig) -> ExecutorConfig) -> Executor {
    let config = config(
        ExecutorConfig::new(std::env::temp_dir()).approver(Arc::new(FixedApprover::allow())),
    );
    Executor::new(registry(defs), config).expect("executor")
}

#[tokio::test]
async fn each_call_gets_its_own_context_with_ids_workspace_and_a_state_snapshot() {
    let exec = executor(vec![look(), note()], |c| c);
    let s = exec.session_with_id("conv-7");
    let calls = vec![
        call("look", json!({})).with_id("a"),
        call("look", json!({})).with_id("b"),
        call("note", json!({"text": "hi", "rev": 1})),
        call("look", json!({})).with_id("c"),
    ];
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    let out = |i: usize| results[i].output.clone().expect("output");
    let workspace = std::env::temp_dir()
        .canonicalize()
        .expect("canonical")
        .display()
        .to_string();
    for (i, id) in [(0, "a"), (1, "b"), (3, "c")] {
        assert_eq!(out(i)["session"], "conv-7");
        assert_eq!(out(i)["call"], id, "each call sees its own id");
        assert_eq!(out(i)["workspace"], workspace);
        assert_eq!(out(i)["cancelled"], false);
    }
    assert_eq!(out(0)["state"], json!({}));
    assert_eq!(out(3)["state"], json!({"note": {"text": "hi", "rev": 1}}));
    assert_eq!(
        s.state().read(&NOTE),
        Some(Note {
            text: "hi".into(),
            rev: 1
        })
    );
}

#[test]
fn typed_keys_and_the_file_history_view_read_what_modifiers_wrote() {
    let mut state = SessionState::new();
    let mut m = ContextModifier::new();
    m.put(
        &NOTE,
        &Note {
            text: "t".into(),
            rev: 2,
        },
    )
    .set(
        format!("{FILE_HISTORY_PREFIX}b.txt"),
        json!({"op": "write"}),
    )
    .set(format!("{FILE_HISTORY_PREFIX}a.txt"), json!({"op": "move"}))
    .set("file_historyX", 1)
    .set("memory/k", "v");
    state.apply(&m);
    assert_eq!(state.read(&NOTE).map(|n| n.rev), Some(2));
    // Another type at the same key reads as absent, never as a wrong value.
    assert_eq!(state.read(&StateKey::<u32>::new("note")), None);
    let history: Vec<(&str, &Value)> = state.file_history().collect();
    assert_eq!(
        history,
        [
            ("a.txt", &json!({"op": "move"})),
            ("b.txt", &json!({"op": "write"}))
        ]
    );
    let memory: Vec<&str> = state.prefixed("memory/").map(|(k, _)| k).collect();
    assert_eq!(memory, ["k"]);
}

#[tokio::test]
async fn the_session_output_budget_cuts_output_with_a_marker_and_records_the_cut() {
    let offered = Arc::new(Mutex::new(Vec::new()));
    let audit = Arc::new(MemoryAuditSink::new());
    let a = audit.clone();
    let exec = executor(vec![say(&offered)], |c| {
        c.session_output_budget(Some(100))
            .tool_limits(
                "say",
                ToolLimits {
                    output_cap: Some(80),
                    ..ToolLimits::default()
                },
            )
            .audit(a)
    });
    let s = exec.new_session();
    let calls = (0..3).map(|_| call("say", json!({"n": 60}))).collect();
    let results = exec.run_batch(&s, calls, BatchOptions::default()).await;
    let text = |i: usize| {
        results[i]
            .output
            .clone()
            .expect("out")
            .as_str()
            .expect("str")
            .to_owned()
    };
    assert_eq!(text(0), "x".repeat(60));
    assert!(!results[0].truncated);
    assert!(text(1).starts_with(&"x".repeat(40)));
    assert!(text(1).contains("output truncated at the session's output budget: showing 40 of 60"));
    assert!(results[1].truncated);
    assert!(text(2).contains("showing 0 of 60"));
    assert!(results[2].truncated);
    assert_eq!(s.output_remaining(), Some(0));
    // Each call was offered the smaller of its cap and what the session had left.
    assert_eq!(
        *offered.lock().expect("lock"),
        [Some(80), Some(40), Some(0)]
    );
    let cuts: Vec<bool> = audit.events().iter().map(|e| e.truncated).collect();
    assert_eq!(cuts, [false, true, true]);
    // A new turn may refill the budget.
    s.set_output_budget(Some(1000));
    let again = exec
        .execute(&s, call("say", json!({"n": 60})), CallOptions::default())
        .await;
    assert!(!again.truncated);
    assert_eq!(s.output_remaining(), Some(940));
}

#[tokio::test]
async fn without_a_session_budget_only_the_call_cap_applies() {
    let offered = Arc::new(Mutex::new(Vec::new()));
    let exec = executor(vec![say(&offered)], |c| c.default_output_cap(50));
    let s = exec.new_session();
    let r = exec
        .execute(&s, call("say", json!({"n": 60})), CallOptions::default())
        .await;
    assert!(r.truncated);
    let text = r.output.expect("out");
    assert!(text
        .as_str()
        .expect("str")
        .contains("[output truncated: showing 50 of 60 bytes]"));
    assert_eq!(s.output_remaining(), None);
    assert_eq!(*offered.lock().expect("lock"), [Some(50)]);
}
