//! A prompt that asks the user before it is built (`Prompt::asking`): over stateless HTTP
//! (2026-07-28) `prompts/get` answers with an input-required result whose signed, single-use
//! `requestState` is bound to the prompt, its arguments and the method (a tool call's state does
//! not verify for a prompt); the retry with the answer builds it. A client that did not declare
//! elicitation gets `-32021`; an answer that does not fit the form is refused.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::input::FormAnswer;
use tool_core::mcp::prompts::{Message, Prompt, PromptArgument, PromptFailure, Prompts};
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::{tool, ToolContext};

use crate::mcp_wire::{accept, post, serve, Reply, Server};

fn context_form() -> Value {
    json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]})
}

/// A tool named like the prompt, asking the same question: its states must not open the prompt.
#[tool(risk = "safe")]
async fn brief(ctx: ToolContext) -> Result<String, tool_core::input::InputError> {
    ctx.elicit("user_context", "Context?", context_form())
        .await?;
    Ok("tool ran".to_owned())
}

fn prompts() -> Prompts {
    let brief = Prompt::asking("brief", |args, input| async move {
        let answer = input
            .elicit("user_context", "Context?", context_form())
            .await?;
        let FormAnswer::Accept(content) = answer else {
            return Err(PromptFailure::Failed("no context given".into()));
        };
        Ok(vec![Message::user(format!(
            "{} with {}",
            args.get("topic").unwrap_or("anything"),
            content["context"].as_str().unwrap_or_default()
        ))])
    })
    .with_argument(PromptArgument::optional("topic"));
    Prompts::new().with_prompt(brief).expect("valid prompts")
}

async fn start() -> Server {
    let (dir, exec) = crate::exec_support::module_executor(module_path!(), |c| c);
    let server = McpServer::new(ExecutorBackend::new(Arc::new(exec))).with_prompts(prompts());
    serve(server, dir).await
}

fn caps() -> Value {
    json!({"elicitation": {}})
}

async fn get(s: &Server, caps: Value, params: Value) -> Reply {
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    post(s.addr, "prompts/get", Some(&name), caps, params).await
}

fn state_of(reply: &Reply) -> String {
    let r = reply.result();
    assert_eq!(r["resultType"], "input_required", "{r}");
    r["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_asks_then_is_built_with_the_answer() {
    let s = start().await;
    let args = json!({"topic": "rust"});
    let r1 = get(&s, caps(), json!({"name": "brief", "arguments": args})).await;
    assert_eq!(r1.status, 200);
    let state = state_of(&r1);
    let asked = &r1.result()["inputRequests"]["user_context"];
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["requestedSchema"], context_form());
    assert!(r1.result().get("messages").is_none());
    let answer = json!({"user_context": accept(json!({"context": "tests"}))});
    let retry = |args: Value, state: String| json!({"name": "brief", "arguments": args, "inputResponses": answer, "requestState": state});
    // Other arguments, or a changed state, do not verify; neither uses the state up.
    for (a, st) in [
        (json!({"topic": "go"}), state.clone()),
        (args.clone(), format!("{state}x")),
    ] {
        let r = get(&s, caps(), retry(a, st)).await;
        assert_eq!(r.error_code(), -32602, "{}", r.message);
        assert_eq!(
            r.message["error"]["data"]["reason_code"],
            "approval_state_invalid"
        );
    }
    let r2 = get(&s, caps(), retry(args.clone(), state.clone())).await;
    let res = r2.result();
    assert_ne!(res["resultType"], "input_required", "{res}");
    assert_eq!(
        res["messages"][0]["content"]["text"], "rust with tests",
        "{res}"
    );
    let again = get(&s, caps(), retry(args, state)).await;
    assert_eq!(
        again.message["error"]["data"]["reason_code"], "approval_state_replayed",
        "{}",
        again.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_calls_state_does_not_open_a_prompt_of_the_same_name() {
    let s = start().await;
    let r = post(
        s.addr,
        "tools/call",
        Some("brief"),
        caps(),
        json!({"name": "brief", "arguments": {}}),
    )
    .await;
    let state = state_of(&r);
    let r = get(
        &s,
        caps(),
        json!({"name": "brief", "arguments": {},
               "inputResponses": {"user_context": accept(json!({"context": "x"}))},
               "requestState": state}),
    )
    .await;
    assert_eq!(r.error_code(), -32602, "{}", r.message);
    assert_eq!(
        r.message["error"]["data"]["reason_code"],
        "approval_state_invalid"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_elicitation_or_with_an_unfit_answer_the_prompt_is_refused() {
    let s = start().await;
    let r = get(&s, json!({}), json!({"name": "brief"})).await;
    assert_eq!(r.error_code(), -32021, "{}", r.message);
    let state = state_of(&get(&s, caps(), json!({"name": "brief"})).await);
    let r = get(
        &s,
        caps(),
        json!({"name": "brief", "inputResponses": {"user_context": accept(json!({"context": 5}))},
               "requestState": state}),
    )
    .await;
    assert_eq!(r.error_code(), -32602, "{}", r.message);
    assert_eq!(r.message["error"]["data"]["reason_code"], "input_invalid");
}
