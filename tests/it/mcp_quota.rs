//! Fair MCP serving: one client (one `Authorization` header) cannot take the running tasks or the
//! outstanding input-required rounds every client shares. A client at its quota is refused with
//! `client_quota_exceeded` (JSON-RPC `-32603`, HTTP 200, the code in `error.data.reason_code`),
//! another client is still accepted and served, and the quota is given back when a task ends or
//! a round is answered. Each scenario also runs against a server whose per-client quota is its
//! server-wide bound (a global bound only, as before): there the first client starves the
//! second, which shows the scenario would catch the defence missing.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::mcp::tasks::{TaskSupport, TaskTools};
use tool_core::mcp::{ClientQuotas, ExecutorBackend, McpServer};
use tool_core::{tool, ToolContext};

use crate::mcp_wire::{post_with, serve, Reply, Server};

/// Returns at once.
#[tool(risk = "safe", idempotent)]
fn instant(n: u32) -> String {
    format!("instant {n}")
}

/// Runs for `ms` milliseconds, or until cancelled.
#[tool(risk = "safe", idempotent)]
async fn hold(ctx: ToolContext, ms: u64) -> Result<String, String> {
    tokio::select! {
        _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("held {ms}")),
        _ = ctx.cancellation().cancelled() => Err("cancelled".to_owned()),
    }
}

/// A mutation: asks for approval.
#[tool(risk = "mutation")]
fn change(n: u32) -> String {
    format!("changed {n}")
}

/// The server-wide bounds of these tests, small so that one client can reach them.
const MAX_TASKS: usize = 6;
const MAX_PENDING: usize = 6;

/// The per-client quotas of a server with the defence, and of one without (a client's quota is
/// the whole server's).
const QUOTA: usize = 2;
const NO_QUOTA: usize = MAX_TASKS;

async fn start(per_client: usize) -> Server {
    let (dir, exec) = crate::exec_support::module_executor(module_path!(), |c| c);
    let tasks = TaskTools::new()
        .with_tool("hold", TaskSupport::Optional)
        .with_tool("instant", TaskSupport::Optional);
    let quotas = ClientQuotas::new()
        .with_max_tasks(MAX_TASKS)
        .with_max_tasks_per_client(per_client)
        .with_max_pending(MAX_PENDING)
        .with_max_pending_per_client(per_client);
    let server = McpServer::new(ExecutorBackend::new(Arc::new(exec)))
        .with_tasks(tasks)
        .with_client_quotas(quotas);
    server.check().expect("valid");
    serve(server, dir).await
}

fn as_client(token: &str) -> String {
    format!("Bearer {token}")
}

fn task_caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

fn form_caps() -> Value {
    json!({"elicitation": {"form": {}}})
}

async fn call_as(s: &Server, who: &str, caps: Value, name: &str, params: Value) -> Reply {
    let auth = as_client(who);
    let mut params = params;
    params["name"] = json!(name);
    post_with(
        s.addr,
        "tools/call",
        Some(name),
        caps,
        params,
        &[("Authorization", &auth)],
    )
    .await
}

/// Client `who` asks for a task of `hold` for `ms` milliseconds.
async fn hold_as(s: &Server, who: &str, ms: u64) -> Reply {
    call_as(
        s,
        who,
        task_caps(),
        "hold",
        json!({"arguments": {"ms": ms}}),
    )
    .await
}

/// Client `who` asks for a task of `instant`.
async fn instant_task_as(s: &Server, who: &str, n: u32) -> Reply {
    call_as(
        s,
        who,
        task_caps(),
        "instant",
        json!({"arguments": {"n": n}}),
    )
    .await
}

/// Client `who` calls `change` (a mutation: an approval question comes back).
async fn change_as(s: &Server, who: &str, n: impl Into<Value>) -> Reply {
    let n: Value = n.into();
    call_as(
        s,
        who,
        form_caps(),
        "change",
        json!({"arguments": {"n": n}}),
    )
    .await
}

async fn task_request(s: &Server, who: &str, method: &str, id: &str) -> Reply {
    let auth = as_client(who);
    post_with(
        s.addr,
        method,
        Some(id),
        task_caps(),
        json!({"taskId": id}),
        &[("Authorization", &auth)],
    )
    .await
}

/// The reason code of a refusal, if the reply is one.
fn refusal(reply: &Reply) -> Option<String> {
    reply.message["error"]["data"]["reason_code"]
        .as_str()
        .map(str::to_owned)
}

/// The id of the task a reply created, if it created one.
fn task_id(reply: &Reply) -> Option<String> {
    let r = reply.message.get("result")?;
    (r["resultType"] == "task").then(|| r["taskId"].as_str().map(str::to_owned))?
}

/// Polls task `id` of `who` until it is finished; its last `tasks/get` result.
async fn finished(s: &Server, who: &str, id: &str) -> Value {
    for _ in 0..400 {
        let r = task_request(s, who, "tasks/get", id).await;
        let status = r.result()["status"].as_str().unwrap_or_default().to_owned();
        if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return r.result().clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not finish");
}

/// Client `a` makes `count` requests with `ask` and answers none: what each reply left open
/// (`open` of it: a task id, a request state), or else its refusal.
async fn a_fills<Fut: std::future::Future<Output = Reply>>(
    count: usize,
    mut ask: impl FnMut(usize) -> Fut,
    open: fn(&Reply) -> Option<String>,
) -> (Vec<String>, Vec<String>) {
    let (mut opened, mut refused) = (Vec::new(), Vec::new());
    for n in 0..count {
        let r = ask(n).await;
        assert_eq!(r.status, 200);
        match open(&r) {
            Some(id) => opened.push(id),
            None => refused.push(refusal(&r).unwrap_or_else(|| r.message.to_string())),
        }
    }
    (opened, refused)
}

/// Client `a` starts as many long tasks as the whole server holds; then client `b` asks for one
/// short task. The tasks `a` got, the refusals `a` got, and `b`'s reply.
async fn a_fills_the_tasks(s: &Server, ms: u64) -> (Vec<String>, Vec<String>, Reply) {
    let (accepted, refused) = a_fills(MAX_TASKS, |_| hold_as(s, "a", ms), task_id).await;
    (accepted, refused, instant_task_as(s, "b", 1).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_at_its_task_quota_is_refused_and_another_is_still_served() {
    // Without a per-client quota, `a` fills the store and `b` is refused.
    let s = start(NO_QUOTA).await;
    let (accepted, _, b) = a_fills_the_tasks(&s, 600_000).await;
    assert_eq!(accepted.len(), MAX_TASKS);
    assert_eq!(
        refusal(&b).as_deref(),
        Some("error_budget_exhausted"),
        "{}",
        b.message
    );
    drop(s);

    let s = start(QUOTA).await;
    let (accepted, refused, b) = a_fills_the_tasks(&s, 1_500).await;
    assert_eq!(accepted.len(), QUOTA);
    assert_eq!(refused, vec!["client_quota_exceeded"; MAX_TASKS - QUOTA]);
    let b_task = task_id(&b).unwrap_or_else(|| panic!("b refused: {}", b.message));
    let done = finished(&s, "b", &b_task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "instant 1", "{done}");

    // The refusal is a JSON-RPC error with the code as data and the quota it hit.
    let r = hold_as(&s, "a", 1).await;
    assert_eq!(r.error_code(), -32603, "{}", r.message);
    let data = &r.message["error"]["data"];
    assert_eq!(data["quota"], "tasks");
    assert_eq!(data["limit"], QUOTA);
    assert!(r.message["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("client_quota_exceeded: ")));

    // Once its tasks have ended, `a` is served again, up to its quota.
    for id in &accepted {
        assert_eq!(finished(&s, "a", id).await["status"], "completed");
    }
    for _ in 0..QUOTA {
        let r = hold_as(&s, "a", 1).await;
        assert!(task_id(&r).is_some(), "{}", r.message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_gives_its_slot_back_and_a_plain_call_needs_none() {
    let s = start(QUOTA).await;
    let (accepted, refused, _) = a_fills_the_tasks(&s, 600_000).await;
    assert_eq!((accepted.len(), refused.len()), (QUOTA, MAX_TASKS - QUOTA));
    // Another client cannot cancel `a`'s task, nor free `a`'s quota by trying.
    let r = task_request(&s, "b", "tasks/cancel", &accepted[0]).await;
    assert_eq!(r.error_code(), -32602);
    let r = hold_as(&s, "a", 1).await;
    assert_eq!(refusal(&r).as_deref(), Some("client_quota_exceeded"));
    for id in &accepted {
        task_request(&s, "a", "tasks/cancel", id).await.result();
    }
    for _ in 0..QUOTA {
        let r = hold_as(&s, "a", 600_000).await;
        let id = task_id(&r).unwrap_or_else(|| panic!("a refused: {}", r.message));
        task_request(&s, "a", "tasks/cancel", &id).await.result();
    }
    // A call without the extension is no task: the task quota does not apply.
    let r = call_as(
        &s,
        "a",
        json!({}),
        "instant",
        json!({"arguments": {"n": 2}}),
    )
    .await;
    assert_eq!(
        r.result()["content"][0]["text"],
        "instant 2",
        "{}",
        r.message
    );
}

/// The `requestState` of an input-required approval question, if the reply is one.
fn question(reply: &Reply) -> Option<String> {
    let r = reply.message.get("result")?;
    if r["resultType"] != "input_required" {
        return None;
    }
    assert_eq!(
        r["inputRequests"]["approval"]["method"], "elicitation/create",
        "{r}"
    );
    r["requestState"].as_str().map(str::to_owned)
}

async fn approve(s: &Server, who: &str, n: u32, state: &str) -> Reply {
    let answer = json!({"approval": {"action": "accept", "content": {"approve": true}}});
    let params = json!({"arguments": {"n": n}, "inputResponses": answer, "requestState": state});
    call_as(s, who, form_caps(), "change", params).await
}

/// Client `a` asks for as many approvals as the whole server holds and answers none; then
/// client `b` asks for one. The states `a` got, the refusals `a` got, and `b`'s reply.
async fn a_fills_the_rounds(s: &Server) -> (Vec<String>, Vec<String>, Reply) {
    let (asked, refused) = a_fills(MAX_PENDING, |n| change_as(s, "a", n), question).await;
    (asked, refused, change_as(s, "b", 100).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_at_its_quota_of_open_rounds_is_refused_and_another_is_still_served() {
    // Without a per-client quota, `a`'s unanswered questions leave `b` none.
    let s = start(NO_QUOTA).await;
    let (asked, _, b) = a_fills_the_rounds(&s).await;
    assert_eq!(asked.len(), MAX_PENDING);
    assert_eq!(
        refusal(&b).as_deref(),
        Some("error_budget_exhausted"),
        "{}",
        b.message
    );
    drop(s);

    let s = start(QUOTA).await;
    let (asked, refused, b) = a_fills_the_rounds(&s).await;
    assert_eq!(asked.len(), QUOTA);
    assert_eq!(refused, vec!["client_quota_exceeded"; MAX_PENDING - QUOTA]);
    let state = question(&b).unwrap_or_else(|| panic!("b refused: {}", b.message));
    let served = approve(&s, "b", 100, &state).await;
    assert_eq!(
        served.result()["content"][0]["text"],
        "changed 100",
        "{}",
        served.message
    );

    let r = change_as(&s, "a", 50).await;
    assert_eq!(r.error_code(), -32603, "{}", r.message);
    assert_eq!(r.message["error"]["data"]["quota"], "input_rounds");

    // A state of `a`'s echoed by `b` does not verify and answers nothing of `a`'s.
    let stolen = approve(&s, "b", 0, &asked[0]).await;
    assert_eq!(refusal(&stolen).as_deref(), Some("approval_state_invalid"));
    let r = change_as(&s, "a", 51).await;
    assert_eq!(refusal(&r).as_deref(), Some("client_quota_exceeded"));

    // Answering its rounds gives `a` its quota back (a replay does not take it twice).
    for (n, state) in asked.iter().enumerate() {
        let n = u32::try_from(n).expect("small");
        let r = approve(&s, "a", n, state).await;
        assert_eq!(r.result()["content"][0]["text"], format!("changed {n}"));
        let again = approve(&s, "a", n, state).await;
        assert_eq!(refusal(&again).as_deref(), Some("approval_state_replayed"));
    }
    for n in 60..60 + QUOTA {
        let r = change_as(&s, "a", n).await;
        assert!(question(&r).is_some(), "{}", r.message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_session_id_on_a_stateless_request_is_no_new_client() {
    // A client without a token shares the anonymous quota, whatever session id it sends on a
    // stateless request (none was issued to it).
    let s = start(QUOTA).await;
    let mut accepted = 0;
    for n in 0..MAX_TASKS {
        let sid = format!("made-up-{n}");
        let params = json!({"name": "hold", "arguments": {"ms": 600_000}});
        let headers = [("Mcp-Session-Id", sid.as_str())];
        let r = post_with(
            s.addr,
            "tools/call",
            Some("hold"),
            task_caps(),
            params,
            &headers,
        )
        .await;
        match task_id(&r) {
            Some(_) => accepted += 1,
            None => assert_eq!(
                refusal(&r).as_deref(),
                Some("client_quota_exceeded"),
                "{}",
                r.message
            ),
        }
    }
    assert_eq!(accepted, QUOTA);
    let b = instant_task_as(&s, "b", 3).await;
    assert!(task_id(&b).is_some(), "{}", b.message);
}
