//! A tool's own questions mid-call (`ToolContext::ask`): over stateless HTTP (2026-07-28) as
//! input-required results whose signed `requestState` carries the answers so far (a changed,
//! replayed, re-targeted state is refused; rounds and answers are bounded; a client without the
//! capability gets `-32021`), composed with the approval question; over a 2025-11-25 session
//! as server-to-client requests; and on an executor without an input handler, refused.
// rmcp marks sampling and roots deprecated (SEP-2577); the 2025-11-25 revision still has them.
#![allow(deprecated)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{json, Value};
use tool_core::approval::BoxFuture;
use tool_core::input::{
    FormAnswer, InputAnswer, InputError, InputHandler, InputKind, InputRequest, Sampling,
};
use tool_core::mcp::{ExecutorBackend, McpServer, MAX_INPUT_ROUNDS};
use tool_core::{tool, CallStatus, Executor, ExecutorConfig, ReasonCode, ToolContext};

use crate::exec_support::call;
use crate::mcp_session::{connect, Answering};
use crate::mcp_wire::{post, serve, Reply, Server};

/// How often `guarded_greet` ran past its question.
static GUARDED_RUNS: AtomicUsize = AtomicUsize::new(0);

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn name_of(answer: FormAnswer) -> Result<String, InputError> {
    match answer {
        FormAnswer::Accept(content) => Ok(content["name"].as_str().unwrap_or_default().to_owned()),
        _ => Err(InputError::Invalid("no name given".into())),
    }
}

/// Asks a name (`user_name`) and greets, with `punct` at the end.
///
/// # Arguments
/// * `punct` - how the greeting ends
#[tool(risk = "safe")]
async fn greet(ctx: ToolContext, punct: Option<String>) -> Result<String, InputError> {
    let name = name_of(ctx.elicit("user_name", "Name?", name_form()).await?)?;
    Ok(format!("Hello, {name}{}", punct.as_deref().unwrap_or("!")))
}

/// Asks a name, then a colour, in two rounds.
#[tool(risk = "safe")]
async fn two_step(ctx: ToolContext) -> Result<String, InputError> {
    let name = name_of(ctx.elicit("step1", "Name?", name_form()).await?)?;
    let colour = ctx
        .elicit(
            "step2",
            "Colour?",
            json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}),
        )
        .await?;
    match colour {
        FormAnswer::Accept(c) => Ok(format!(
            "{name} likes {}",
            c["color"].as_str().unwrap_or("")
        )),
        _ => Ok(format!("{name} likes nothing")),
    }
}

/// Asks a name from a sync handler (on its confined worker thread) and greets.
#[tool(risk = "safe")]
fn greet_sync(ctx: ToolContext) -> Result<String, InputError> {
    let name = name_of(ctx.elicit_blocking("user_name", "Name?", name_form())?)?;
    Ok(format!("Hello from sync, {name}!"))
}

/// Asks one more question every round, forever.
#[tool(risk = "safe")]
async fn endless(ctx: ToolContext) -> Result<String, InputError> {
    for i in 0.. {
        ctx.elicit(format!("q{i}"), "Again?", name_form()).await?;
    }
    Ok("never".to_owned())
}

/// Needs the caller's model.
#[tool(risk = "safe")]
async fn needs_sampling(ctx: ToolContext) -> Result<String, InputError> {
    let m = ctx.sample("probe", Sampling::prompt("hi", 10)).await?;
    Ok(m.text().unwrap_or_default().to_owned())
}

/// Needs the caller's roots.
#[tool(risk = "safe")]
async fn needs_roots(ctx: ToolContext) -> Result<String, InputError> {
    let roots = ctx.list_roots("roots").await?;
    Ok(format!("{} roots", roots.len()))
}

/// A mutation (approval first) that then asks a name.
#[tool(risk = "mutation")]
async fn guarded_greet(ctx: ToolContext) -> Result<String, InputError> {
    let name = name_of(ctx.elicit("user_name", "Name?", name_form()).await?)?;
    GUARDED_RUNS.fetch_add(1, Ordering::SeqCst);
    Ok(format!("guarded hello, {name}"))
}

fn executor(
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (tempfile::TempDir, Executor) {
    let (dir, exec) = crate::exec_support::module_executor(module_path!(), config);
    (dir, exec)
}

async fn start() -> Server {
    let (dir, exec) = executor(|c| c);
    serve(McpServer::new(ExecutorBackend::new(Arc::new(exec))), dir).await
}

/// One stateless `tools/call` as raw HTTP, with these client capabilities.
async fn call_http(server: &Server, caps: Value, params: Value) -> Reply {
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    post(server.addr, "tools/call", Some(&name), caps, params).await
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn state_of(reply: &Reply) -> String {
    let r = &reply.message["result"];
    assert_eq!(r["resultType"], "input_required", "{}", reply.message);
    r["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_call_asks_then_completes_with_the_answer() {
    let s = start().await;
    let r1 = call_http(&s, all_caps(), json!({"name": "greet", "arguments": {}})).await;
    let state = state_of(&r1);
    let asked = &r1.message["result"]["inputRequests"]["user_name"];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["requestedSchema"], name_form());
    let r2 = call_http(
        &s,
        all_caps(),
        json!({"name": "greet", "arguments": {},
               "inputResponses": {"user_name": accept(json!({"name": "Alice"})), "extra": {}},
               "requestState": state}),
    )
    .await;
    let res = &r2.message["result"];
    assert_eq!(res["isError"], json!(false), "{res}");
    assert_eq!(res["content"][0]["text"], "Hello, Alice!");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sync_tool_asks_over_a_stateless_call_as_an_async_one_does() {
    let s = start().await;
    let r1 = call_http(
        &s,
        all_caps(),
        json!({"name": "greet_sync", "arguments": {}}),
    )
    .await;
    let state = state_of(&r1);
    assert_eq!(
        r1.message["result"]["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let r2 = call_http(
        &s,
        all_caps(),
        json!({"name": "greet_sync", "arguments": {},
               "inputResponses": {"user_name": accept(json!({"name": "Eve"}))},
               "requestState": state}),
    )
    .await;
    let res = &r2.message["result"];
    assert_eq!(res["isError"], json!(false), "{res}");
    assert_eq!(res["content"][0]["text"], "Hello from sync, Eve!");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_state_is_refused_when_tampered_replayed_or_used_for_other_arguments_or_tools() {
    let s = start().await;
    let args = json!({"punct": "!"});
    let state =
        state_of(&call_http(&s, all_caps(), json!({"name": "greet", "arguments": args})).await);
    let answer = json!({"user_name": accept(json!({"name": "Eve"}))});
    let retry = |name: &str, args: Value, state: String| json!({"name": name, "arguments": args, "inputResponses": answer, "requestState": state});
    let code_of = |r: &Reply| r.message["error"]["data"]["reason_code"].clone();
    for (name, a, st) in [
        ("greet", args.clone(), format!("{state}x")),
        ("greet", json!({"punct": "?"}), state.clone()),
        ("two_step", json!({}), state.clone()),
    ] {
        let r = call_http(&s, all_caps(), retry(name, a, st)).await;
        assert_eq!(r.message["error"]["code"], -32602, "{}", r.message);
        assert_eq!(code_of(&r), "approval_state_invalid", "{}", r.message);
    }
    // The refusals did not use it up; the one good retry does.
    let ok = call_http(&s, all_caps(), retry("greet", args.clone(), state.clone())).await;
    assert_eq!(ok.message["result"]["content"][0]["text"], "Hello, Eve!");
    let again = call_http(&s, all_caps(), retry("greet", args, state)).await;
    assert_eq!(
        code_of(&again),
        "approval_state_replayed",
        "{}",
        again.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_carry_over_rounds_and_count_only_for_the_questions_asked() {
    let s = start().await;
    let r1 = call_http(&s, all_caps(), json!({"name": "two_step", "arguments": {}})).await;
    let st1 = state_of(&r1);
    let r2 = call_http(
        &s,
        all_caps(),
        json!({"name": "two_step", "arguments": {},
               "inputResponses": {"step1": accept(json!({"name": "Alice"}))}, "requestState": st1}),
    )
    .await;
    let st2 = state_of(&r2);
    assert!(r2.message["result"]["inputRequests"]["step2"].is_object());
    // A new answer to step1 in round 2 is not what was asked: ignored, Alice stays.
    let r3 = call_http(
        &s,
        all_caps(),
        json!({"name": "two_step", "arguments": {},
               "inputResponses": {"step1": accept(json!({"name": "Mallory"})),
                                  "step2": accept(json!({"color": "blue"}))},
               "requestState": st2}),
    )
    .await;
    assert_eq!(
        r3.message["result"]["content"][0]["text"], "Alice likes blue",
        "{}",
        r3.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_that_does_not_fit_is_refused() {
    let s = start().await;
    let st = state_of(&call_http(&s, all_caps(), json!({"name": "greet", "arguments": {}})).await);
    let r = call_http(
        &s,
        all_caps(),
        json!({"name": "greet", "arguments": {},
               "inputResponses": {"user_name": accept(json!({"name": 5}))}, "requestState": st}),
    )
    .await;
    assert_eq!(r.message["error"]["code"], -32602, "{}", r.message);
    assert_eq!(r.message["error"]["data"]["reason_code"], "input_invalid");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_asks_in_at_most_so_many_rounds() {
    let s = start().await;
    let mut params = json!({"name": "endless", "arguments": {}});
    let mut rounds = 0;
    loop {
        let r = call_http(&s, all_caps(), params.clone()).await;
        let res = &r.message["result"];
        if res["resultType"] != "input_required" {
            assert_eq!(res["isError"], json!(true), "{res}");
            assert_eq!(
                res["structuredContent"]["reason_code"],
                "input_limit_exceeded"
            );
            break;
        }
        rounds += 1;
        assert!(rounds <= MAX_INPUT_ROUNDS, "more rounds than the limit");
        let id = res["inputRequests"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .expect("a question");
        params["requestState"] = res["requestState"].clone();
        params["inputResponses"] = json!({id: accept(json!({"name": "x"}))});
    }
    assert_eq!(rounds, MAX_INPUT_ROUNDS);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_without_the_capability_gets_missing_capability() {
    let s = start().await;
    let r = call_http(
        &s,
        json!({"elicitation": {}}),
        json!({"name": "needs_sampling", "arguments": {}}),
    )
    .await;
    assert_eq!(r.status, 400);
    let e = &r.message["error"];
    assert_eq!(e["code"], -32021, "{e}");
    assert_eq!(e["data"]["requiredCapabilities"], json!({"sampling": {}}));
    assert_eq!(e["data"]["reason_code"], "input_unavailable");
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_comes_first_then_the_tools_question_then_one_run() {
    let s = start().await;
    let before = GUARDED_RUNS.load(Ordering::SeqCst);
    let r1 = call_http(
        &s,
        all_caps(),
        json!({"name": "guarded_greet", "arguments": {}}),
    )
    .await;
    let st1 = state_of(&r1);
    assert!(r1.message["result"]["inputRequests"]["approval"].is_object());
    // Approved: the tool runs and asks its own question; the state now carries the grant.
    let r2 = call_http(
        &s,
        all_caps(),
        json!({"name": "guarded_greet", "arguments": {},
               "inputResponses": {"approval": accept(json!({"approve": true}))},
               "requestState": st1}),
    )
    .await;
    let st2 = state_of(&r2);
    let asked = r2.message["result"]["inputRequests"]
        .as_object()
        .expect("questions")
        .clone();
    assert_eq!(asked.keys().collect::<Vec<_>>(), ["user_name"]);
    let r3 = call_http(
        &s,
        all_caps(),
        json!({"name": "guarded_greet", "arguments": {},
               "inputResponses": {"user_name": accept(json!({"name": "Bob"}))},
               "requestState": st2}),
    )
    .await;
    assert_eq!(
        r3.message["result"]["content"][0]["text"], "guarded hello, Bob",
        "{}",
        r3.message
    );
    assert_eq!(GUARDED_RUNS.load(Ordering::SeqCst), before + 1);
    // Without the approval answer there is no grant: answering only the name asks again.
    let r = call_http(
        &s,
        all_caps(),
        json!({"name": "guarded_greet", "arguments": {}}),
    )
    .await;
    let st = state_of(&r);
    let again = call_http(
        &s,
        all_caps(),
        json!({"name": "guarded_greet", "arguments": {},
               "inputResponses": {"user_name": accept(json!({"name": "Bob"}))},
               "requestState": st}),
    )
    .await;
    assert!(again.message["result"]["inputRequests"]["approval"].is_object());
    assert_eq!(GUARDED_RUNS.load(Ordering::SeqCst), before + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_client_is_asked_through_its_own_requests() {
    let (_dir, exec) = executor(|c| c);
    let server = McpServer::new(ExecutorBackend::new(Arc::new(exec)));
    let client = connect(
        server,
        Answering {
            name: "answering",
            caps: json!({"elicitation": {}, "sampling": {}}),
            form: json!({"name": "Carol"}),
        },
    )
    .await;
    let negotiated = client.peer_info().map(|i| i.protocol_version.clone());
    assert_eq!(negotiated, Some(ProtocolVersion::V_2025_11_25));
    let peer = client.peer().clone();
    let text = |r: &rmcp::model::CallToolResult| {
        serde_json::to_value(&r.content).expect("json")[0]["text"].clone()
    };
    let r = peer
        .call_tool(CallToolRequestParams::new("greet"))
        .await
        .expect("answered");
    assert_eq!(text(&r), "Hello, Carol!", "{r:?}");
    // A sync handler's question travels the same way, from its worker thread.
    let r = peer
        .call_tool(CallToolRequestParams::new("greet_sync"))
        .await
        .expect("answered");
    assert_eq!(text(&r), "Hello from sync, Carol!", "{r:?}");
    let r = peer
        .call_tool(CallToolRequestParams::new("needs_sampling"))
        .await
        .expect("answered");
    assert_eq!(text(&r), "sampled", "{r:?}");
    // Roots were not declared: refused, with the reason code as data.
    let r = peer
        .call_tool(CallToolRequestParams::new("needs_roots"))
        .await
        .expect("answered");
    assert_eq!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content
            .as_ref()
            .map(|v| v["reason_code"].clone()),
        Some(json!("input_unavailable")),
        "{r:?}"
    );
}

/// Answers every form with a fixed name (what a terminal prompt would do).
struct FixedName;

impl InputHandler for FixedName {
    fn supports(&self, kind: InputKind) -> bool {
        kind == InputKind::Elicitation
    }

    fn ask<'a>(
        &'a self,
        requests: &'a [(String, InputRequest)],
    ) -> BoxFuture<'a, Result<Vec<InputAnswer>, InputError>> {
        Box::pin(async move {
            requests
                .iter()
                .map(|(_, r)| {
                    r.read_answer(&accept(json!({"name": "Dana"})))
                        .map_err(InputError::Invalid)
                })
                .collect()
        })
    }
}

#[tokio::test]
async fn without_a_handler_the_executor_refuses_questions_and_with_one_answers() {
    let (_dir, exec) = executor(|c| c);
    let session = exec.new_session();
    let r = exec
        .execute(&session, call("greet", json!({})), Default::default())
        .await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    assert_eq!(r.code, Some(ReasonCode::InputUnavailable), "{r:?}");
    assert!(
        r.message
            .as_deref()
            .unwrap_or_default()
            .contains("no input handler"),
        "{r:?}"
    );
    let (_dir, exec) = executor(|c| c.input_handler(Arc::new(FixedName)));
    let session = exec.new_session();
    let r = exec
        .execute(&session, call("greet", json!({})), Default::default())
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, Some(json!("Hello, Dana!")));
    let r = exec
        .execute(&session, call("greet_sync", json!({})), Default::default())
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, Some(json!("Hello from sync, Dana!")));
    assert_ne!(r.enforced.to_string(), "none", "{r:?}");
    // A kind the handler does not answer is refused all the same.
    let r = exec
        .execute(&session, call("needs_roots", json!({})), Default::default())
        .await;
    assert_eq!(r.code, Some(ReasonCode::InputUnavailable), "{r:?}");
}
