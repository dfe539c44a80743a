//! Resources for tools: `State<T>` parameters filled from the executor's resources, for sync
//! tools (on confined workers) and async ones, through the CLI's `call`; a missing resource
//! refuses the executor's start, naming the tool and the type.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::cli::call::{run_call_with, CallArgs};
use tool_core::executor::ExecutorError;
use tool_core::resource::{MissingResource, ResourceType, Resources};
use tool_core::{tool, CallOptions, CallStatus, Executor, ExecutorConfig, Registry, State};

use crate::exec_support::call;

/// The application's counter, shared by every call.
#[derive(Default)]
pub struct Visits {
    count: AtomicU64,
}

/// The application's configuration (cloned into each call).
#[derive(Clone)]
pub struct Greeting {
    prefix: String,
}

/// A clock the application chooses (a trait object resource).
pub trait Clock: Send + Sync {
    fn now(&self) -> u64;
}

struct FixedClock(u64);

impl Clock for FixedClock {
    fn now(&self) -> u64 {
        self.0
    }
}

/// Count a visit (a sync tool: it runs on a confined worker thread).
///
/// # Arguments
/// * `visits` - the shared counter
/// * `by` - how many visits to add
#[tool(risk = "safe")]
fn res_visit(visits: State<Arc<Visits>>, by: u64) -> String {
    (visits.count.fetch_add(by, Ordering::SeqCst) + by).to_string()
}

/// Greet someone with the configured prefix (an async tool; the pattern form of `State`).
#[tool(risk = "safe")]
async fn res_greet(
    State(greeting): State<Greeting>,
    name: String,
    visits: State<Arc<Visits>>,
) -> String {
    visits.count.fetch_add(1, Ordering::SeqCst);
    format!("{} {name}", greeting.prefix)
}

/// The time, from the application's clock.
#[tool(risk = "safe")]
fn res_now(clock: State<Arc<dyn Clock>>) -> String {
    clock.now().to_string()
}

fn registry() -> Arc<Registry> {
    crate::exec_support::module_registry(module_path!())
}

fn resources(visits: &Arc<Visits>) -> Resources {
    let mut r = Resources::new();
    r.insert(Arc::clone(visits));
    r.insert(Greeting {
        prefix: "hello".into(),
    });
    let clock: Arc<dyn Clock> = Arc::new(FixedClock(1_700_000_000));
    r.insert(clock);
    r
}

#[test]
fn state_parameters_are_not_in_the_schema_and_are_recorded_as_resources() {
    let reg = registry();
    let visit = reg.get("res_visit").expect("res_visit");
    assert_eq!(
        visit.decl().input_schema["properties"],
        json!({"by": {"type": "integer", "format": "uint64", "minimum": 0, "maximum": 18_446_744_073_709_551_615u64, "description": "how many visits to add"}}),
        "{}",
        visit.decl().input_schema
    );
    assert_eq!(visit.def().resources(), [ResourceType::of::<Arc<Visits>>()]);
    let greet = reg.get("res_greet").expect("res_greet");
    assert_eq!(
        greet.def().resources(),
        [
            ResourceType::of::<Greeting>(),
            ResourceType::of::<Arc<Visits>>()
        ]
    );
    assert_eq!(greet.decl().input_schema["required"], json!(["name"]));
    let now = reg.get("res_now").expect("res_now");
    assert_eq!(
        now.def().resources(),
        [ResourceType::of::<Arc<dyn Clock>>()]
    );
    assert_eq!(now.decl().input_schema["properties"], json!({}));
}

#[tokio::test]
async fn sync_and_async_tools_share_the_registered_resources() {
    let ws = tempfile::tempdir().expect("tempdir");
    let visits = Arc::new(Visits::default());
    let exec = Executor::new(
        registry(),
        ExecutorConfig::new(ws.path()).resources(&resources(&visits)),
    )
    .expect("every resource is registered");
    let session = exec.new_session();
    let r = exec
        .execute(
            &session,
            call("res_visit", json!({"by": 2})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert_eq!(r.output, Some(json!("2")));
    let r = exec
        .execute(
            &session,
            call("res_greet", json!({"name": "Ada"})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.output, Some(json!("hello Ada")), "{r:?}");
    let r = exec
        .execute(
            &session,
            call("res_visit", json!({"by": 1})),
            CallOptions::default(),
        )
        .await;
    // 2, then 1 by `res_greet`, then 1: one counter, the application's.
    assert_eq!(r.output, Some(json!("4")), "{r:?}");
    assert_eq!(visits.count.load(Ordering::SeqCst), 4);
    let r = exec
        .execute(&session, call("res_now", json!({})), CallOptions::default())
        .await;
    assert_eq!(r.output, Some(json!("1700000000")), "{r:?}");
    // The model cannot name a resource: it is not an argument.
    let r = exec
        .execute(
            &session,
            call("res_visit", json!({"by": 1, "visits": 0})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Refused, "{r:?}");
    assert_eq!(visits.count.load(Ordering::SeqCst), 4);
}

#[test]
fn a_missing_resource_refuses_the_start_naming_the_tool_and_the_type() {
    let ws = tempfile::tempdir().expect("tempdir");
    let config = ExecutorConfig::new(ws.path()).resource(Greeting {
        prefix: "hi".into(),
    });
    let err = Executor::new(registry(), config).expect_err("resources are missing");
    let ExecutorError::MissingResources { missing, message } = &err else {
        panic!("{err:?}")
    };
    let visits = std::any::type_name::<Arc<Visits>>();
    let clock = std::any::type_name::<Arc<dyn Clock>>();
    let mut got: Vec<(String, &str)> = missing
        .iter()
        .map(|m: &MissingResource| (m.tool.clone(), m.resource))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("res_greet".to_owned(), visits),
            ("res_now".to_owned(), clock),
            ("res_visit".to_owned(), visits),
        ]
    );
    let text = err.to_string();
    assert_eq!(&text, message);
    assert!(
        text.contains(&format!("tool `res_visit` takes `State<{visits}>`")),
        "{text}"
    );
    assert!(text.contains("ExecutorConfig::resource"), "{text}");
    assert!(
        text.contains(&format!(
            "registered: {}",
            std::any::type_name::<Greeting>()
        )),
        "{text}"
    );
    // A `T` registered where the tool takes an `Arc<T>` is another type: the message shows both.
    let config = ExecutorConfig::new(ws.path())
        .resource(Arc::new(Visits::default()).count.load(Ordering::SeqCst));
    let text = Executor::new(registry(), config)
        .expect_err("still missing")
        .to_string();
    assert!(text.contains("registered: u64"), "{text}");
}

fn call_args(ws: &std::path::Path) -> CallArgs {
    CallArgs {
        error_budget: 5,
        ..crate::exec_support::call_args(ws)
    }
}

#[test]
fn the_call_command_takes_the_resources() {
    let ws = tempfile::tempdir().expect("tempdir");
    let visits = Arc::new(Visits::default());
    let mut out = Vec::new();
    let input = "{\"tool\": \"res_visit\", \"args\": {\"by\": 5}}\n";
    run_call_with(
        registry(),
        &resources(&visits),
        input.as_bytes(),
        &mut out,
        &call_args(ws.path()),
    )
    .expect("call runs");
    let line: Value = serde_json::from_slice(&out).expect("one JSON line");
    assert_eq!(line["status"], "ok", "{line}");
    assert_eq!(line["output"], "5", "{line}");
    assert_eq!(visits.count.load(Ordering::SeqCst), 5);
    // Without them, nothing runs: the command fails before reading a line.
    let mut out = Vec::new();
    let err = run_call_with(
        registry(),
        &Resources::new(),
        input.as_bytes(),
        &mut out,
        &call_args(ws.path()),
    )
    .expect_err("resources are missing");
    assert!(err.to_string().contains("res_visit"), "{err}");
    assert!(out.is_empty());
}

/// A handler called outside an executor (a unit test of the tool) gets its resources from the
/// context, and refuses the call without them.
#[tokio::test]
async fn a_context_without_the_resource_refuses_the_call() {
    let reg = registry();
    let handler = reg.get("res_now").expect("res_now").def().handler().clone();
    let ctx = tool_core::ToolContext::new("s", "c", "/");
    let err = handler(ctx, json!({})).err().expect("refused");
    assert!(err.message.contains("Clock"), "{}", err.message);
    let visits = Arc::new(Visits::default());
    let ctx =
        tool_core::ToolContext::new("s", "c", "/").with_resources(Arc::new(resources(&visits)));
    let outcome = handler(ctx, json!({})).expect("accepted").await;
    assert_eq!(outcome, tool_core::ToolOutcome::ok(json!("1700000000")));
}
