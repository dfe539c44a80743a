//! Long-running tools as tasks (`io.modelcontextprotocol/tasks`, SEP-2663) over stateless HTTP:
//! the extension is advertised and gated (a request that does not declare it gets a plain call,
//! or `-32021` for a tool that runs only as a task, and `tasks/*` are refused); a task's result,
//! tool error and panic surface as `completed`, `completed` + `isError` and `failed`; cancelling
//! reaches the tool through its `ToolContext` cancellation; task ids are looked up only for the
//! caller that created them; questions park the task in `input_required` until `tasks/update`
//! answers them all; approval is not asked inside a task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::input::{FormAnswer, InputError, InputRequest};
use tool_core::mcp::tasks::{TaskSupport, TaskTools};
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::{tool, ToolContext};

use crate::mcp_wire::{accept, post, post_with, serve, Reply, Server};

/// Set when `wait_for_cancel` started running.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Set when `wait_for_cancel` stopped running (its future dropped, or its cancellation seen).
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Sets [`STOPPED`] when dropped.
struct StopMark;

impl Drop for StopMark {
    fn drop(&mut self) {
        STOPPED.store(true, Ordering::SeqCst);
    }
}

/// Returns at once.
#[tool(risk = "safe", idempotent)]
fn quick(n: u32) -> String {
    format!("quick {n}")
}

/// Waits until cancelled, and records that it stopped.
#[tool(risk = "safe", idempotent)]
async fn wait_for_cancel(ctx: ToolContext) -> Result<String, String> {
    let _mark = StopMark;
    STARTED.store(true, Ordering::SeqCst);
    ctx.cancellation().cancelled().await;
    Err("cancelled".to_owned())
}

/// Always a tool error.
#[tool(risk = "safe", idempotent)]
fn broken() -> Result<String, String> {
    Err("broken on purpose".to_owned())
}

/// Panics.
#[tool(risk = "safe", idempotent)]
fn explodes() -> String {
    panic!("explodes on purpose")
}

/// Asks two questions at once, then joins the answers.
#[tool(risk = "safe")]
async fn two_questions(ctx: ToolContext) -> Result<String, InputError> {
    let form =
        json!({"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]});
    let answers = ctx
        .ask(vec![
            ("a".into(), InputRequest::form("A?", form.clone())),
            ("b".into(), InputRequest::form("B?", form)),
        ])
        .await?;
    let texts: Vec<String> = answers
        .into_iter()
        .map(|a| match a {
            tool_core::input::InputAnswer::Form(FormAnswer::Accept(c)) => {
                c["v"].as_str().unwrap_or_default().to_owned()
            }
            other => format!("{other:?}"),
        })
        .collect();
    Ok(texts.join("+"))
}

/// Asks a name first (before it is a task), then a colour (inside the task).
#[tool(risk = "safe")]
async fn name_then_colour(ctx: ToolContext) -> Result<String, InputError> {
    let form =
        |k: &str| json!({"type": "object", "properties": {k: {"type": "string"}}, "required": [k]});
    let text = |a: FormAnswer, k: &str| match a {
        FormAnswer::Accept(c) => c[k].as_str().unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    let name = text(
        ctx.elicit("user_name", "Name?", form("name")).await?,
        "name",
    );
    let colour = text(
        ctx.elicit("colour", "Colour?", form("color")).await?,
        "color",
    );
    Ok(format!("{name} likes {colour}"))
}

/// A mutation: needs approval.
#[tool(risk = "mutation")]
fn mutate() -> String {
    "mutated".to_owned()
}

async fn start() -> Server {
    let (dir, exec) = crate::exec_support::module_executor(module_path!(), |c| c);
    let tasks = TaskTools::new()
        .with_tool("wait_for_cancel", TaskSupport::Optional)
        .with_tool("broken", TaskSupport::Optional)
        .with_tool("explodes", TaskSupport::Optional)
        .with_tool("two_questions", TaskSupport::Optional)
        .with_tool("mutate", TaskSupport::Optional)
        .with_tool("quick", TaskSupport::Required)
        .with_tool_asking_first("name_then_colour", TaskSupport::Required);
    let server = McpServer::new(ExecutorBackend::new(Arc::new(exec))).with_tasks(tasks);
    server.check().expect("valid");
    serve(server, dir).await
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

async fn call(s: &Server, caps: Value, name: &str, args: Value) -> Reply {
    post(
        s.addr,
        "tools/call",
        Some(name),
        caps,
        json!({"name": name, "arguments": args}),
    )
    .await
}

async fn task(s: &Server, method: &str, id: &str, extra: Value) -> Reply {
    let mut params = json!({"taskId": id});
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    post(s.addr, method, Some(id), with_tasks(), params).await
}

fn created(reply: &Reply) -> String {
    let r = reply.result();
    assert_eq!(r["resultType"], "task", "{r}");
    assert!(
        r.get("requestState").is_none() && r.get("task").is_none(),
        "{r}"
    );
    assert!(r["ttlMs"].as_u64().is_some_and(|t| t > 0), "{r}");
    r["taskId"].as_str().expect("a taskId").to_owned()
}

/// Poll `tasks/get` until the task's status is one of `until` (bounded: the tools here finish
/// or park at once).
async fn poll(s: &Server, id: &str, until: &[&str]) -> Value {
    for _ in 0..1000 {
        let r = task(s, "tasks/get", id, json!({})).await;
        let status = r.result()["status"].as_str().unwrap_or_default().to_owned();
        if until.contains(&status.as_str()) {
            return r.result().clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never reached {until:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_extension_is_advertised_and_gated() {
    let s = start().await;
    let d = post(s.addr, "server/discover", None, json!({}), json!({})).await;
    assert!(
        d.result()["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{}",
        d.message
    );
    // Without the extension: an optional task tool is a plain call, a required one is refused.
    let plain = call(&s, json!({}), "broken", json!({})).await;
    assert_eq!(plain.result()["isError"], true, "{}", plain.message);
    assert!(plain.result().get("taskId").is_none());
    let refused = call(&s, json!({}), "quick", json!({"n": 1})).await;
    assert_eq!(refused.error_code(), -32021, "{}", refused.message);
    assert!(
        refused.message["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object()
    );
    for method in ["tasks/get", "tasks/cancel"] {
        let r = post(s.addr, method, Some("x"), json!({}), json!({"taskId": "x"})).await;
        assert_eq!(r.error_code(), -32021, "{method}: {}", r.message);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn results_tool_errors_and_panics_surface_as_their_statuses() {
    let s = start().await;
    let id = created(&call(&s, with_tasks(), "quick", json!({"n": 7})).await);
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "quick 7");
    let id = created(&call(&s, with_tasks(), "broken", json!({})).await);
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true);
    let id = created(&call(&s, with_tasks(), "explodes", json!({})).await);
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert!(
        done["error"]["code"].is_i64() && done.get("result").is_none(),
        "{done}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_reaches_the_tool_and_the_task_stays_cancelled() {
    let s = start().await;
    let id = created(&call(&s, with_tasks(), "wait_for_cancel", json!({})).await);
    assert_eq!(
        task(&s, "tasks/get", &id, json!({})).await.result()["status"],
        "working"
    );
    // A task is working once created, which may be before its tool first runs: cancelled
    // before that, the tool would never start, and nothing would show the cancel reached it.
    for _ in 0..1000 {
        if STARTED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(STARTED.load(Ordering::SeqCst), "the tool never started");
    assert!(
        !STOPPED.load(Ordering::SeqCst),
        "the tool stopped before the cancel"
    );
    let ack = task(&s, "tasks/cancel", &id, json!({})).await;
    assert_eq!(ack.result(), &json!({"resultType": "complete"}));
    let done = poll(&s, &id, &["cancelled"]).await;
    assert!(done.get("result").is_none());
    for _ in 0..1000 {
        if STOPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(STOPPED.load(Ordering::SeqCst), "the tool is still running");
    // Cancelling a finished task is the same acknowledgement.
    let again = task(&s, "tasks/cancel", &id, json!({})).await;
    assert_eq!(again.result()["resultType"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn task_ids_are_the_servers_and_the_callers_own() {
    let s = start().await;
    let created_by = |who: &'static str| {
        let addr = s.addr;
        async move {
            post_with(
                addr,
                "tools/call",
                Some("broken"),
                with_tasks(),
                json!({"name": "broken", "arguments": {}}),
                &[("Authorization", who)],
            )
            .await
        }
    };
    let id = created(&created_by("Bearer alice").await);
    let as_bob = post_with(
        s.addr,
        "tasks/get",
        Some(&id),
        with_tasks(),
        json!({"taskId": id}),
        &[("Authorization", "Bearer bob")],
    )
    .await;
    assert_eq!(as_bob.error_code(), -32602, "{}", as_bob.message);
    for bad in ["../../etc/passwd", "no-such-task"] {
        assert_eq!(
            task(&s, "tasks/get", bad, json!({})).await.error_code(),
            -32602
        );
    }
    let as_alice = post_with(
        s.addr,
        "tasks/cancel",
        Some(&id),
        with_tasks(),
        json!({"taskId": id}),
        &[("Authorization", "Bearer alice")],
    )
    .await;
    assert_eq!(as_alice.result()["resultType"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_park_the_task_until_every_one_is_answered() {
    let s = start().await;
    let id = created(&call(&s, with_tasks(), "two_questions", json!({})).await);
    let parked = poll(&s, &id, &["input_required"]).await;
    let keys: Vec<&String> = parked["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .keys()
        .collect();
    assert_eq!(keys, ["a", "b"], "{parked}");
    assert_eq!(parked["inputRequests"]["a"]["method"], "elicitation/create");
    let ack = task(
        &s,
        "tasks/update",
        &id,
        json!({"inputResponses": {"a": accept(json!({"v": "x"})), "zzz": {}}}),
    )
    .await;
    assert_eq!(ack.result(), &json!({"resultType": "complete"}));
    let still = task(&s, "tasks/get", &id, json!({})).await;
    assert_eq!(still.result()["status"], "input_required");
    assert!(still.result()["inputRequests"].get("a").is_none());
    assert!(still.result()["inputRequests"].get("b").is_some());
    task(
        &s,
        "tasks/update",
        &id,
        json!({"inputResponses": {"b": accept(json!({"v": "y"}))}}),
    )
    .await;
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(done["result"]["content"][0]["text"], "x+y", "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfit_answer_fails_the_call_and_approval_is_not_asked_in_a_task() {
    let s = start().await;
    let id = created(&call(&s, with_tasks(), "two_questions", json!({})).await);
    poll(&s, &id, &["input_required"]).await;
    task(
        &s,
        "tasks/update",
        &id,
        json!({"inputResponses": {"a": accept(json!({"v": 1})), "b": accept(json!({"v": "y"}))}}),
    )
    .await;
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        done["result"]["structuredContent"]["reason_code"],
        "input_invalid"
    );
    let id = created(&call(&s, with_tasks(), "mutate", json!({})).await);
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(
        done["result"]["structuredContent"]["reason_code"], "approval_denied",
        "{done}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_asking_first_gathers_its_answer_then_becomes_a_task() {
    let s = start().await;
    let r1 = call(&s, with_tasks(), "name_then_colour", json!({})).await;
    let first = r1.result();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none());
    assert!(first["inputRequests"]["user_name"].is_object());
    let state = first["requestState"].as_str().expect("state").to_owned();
    let retry = json!({"name": "name_then_colour", "arguments": {},
        "inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": state});
    let r2 = post(
        s.addr,
        "tools/call",
        Some("name_then_colour"),
        with_tasks(),
        retry.clone(),
    )
    .await;
    let id = created(&r2);
    assert!(r2.result().get("inputRequests").is_none());
    // The state was used up by the retry that became the task.
    let replay = post(
        s.addr,
        "tools/call",
        Some("name_then_colour"),
        with_tasks(),
        retry,
    )
    .await;
    assert_eq!(
        replay.message["error"]["data"]["reason_code"], "approval_state_replayed",
        "{}",
        replay.message
    );
    let parked = poll(&s, &id, &["input_required"]).await;
    assert!(parked["inputRequests"]["colour"].is_object(), "{parked}");
    task(
        &s,
        "tasks/update",
        &id,
        json!({"inputResponses": {"colour": accept(json!({"color": "blue"}))}}),
    )
    .await;
    let done = poll(&s, &id, &["completed", "failed"]).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Alice likes blue",
        "{done}"
    );
}
