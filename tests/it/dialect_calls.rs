//! What we export, we accept: a call shaped by a dialect's exported schema is mapped back before
//! validation (strict OpenAI's `null` for an optional argument is "absent"), automatically for an
//! OpenAI envelope and on request (`call --dialect`, `ExecutorConfig::dialect`); `call` judges
//! each line on its own.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::cli::call::CallArgs;
use tool_core::executor::{CallOptions, Executor, ExecutorConfig};
use tool_core::schema::export::{openai, Dialect};
use tool_core::{tool, Registry};

/// Search the notes.
///
/// # Arguments
/// * `query` - what to look for
/// * `limit` - most results
/// * `tag` - only notes with this tag
#[tool(risk = "safe", concurrency_safe)]
fn dc_search(query: String, #[arg(default = 5)] limit: u32, tag: Option<String>) -> String {
    format!("{query}:{limit}:{tag:?}")
}

pub(crate) fn registry() -> Arc<Registry> {
    crate::exec_support::module_registry(module_path!())
}

pub(crate) fn call_args(ws: &std::path::Path) -> CallArgs {
    CallArgs {
        error_budget: tool_core::executor::DEFAULT_ERROR_BUDGET,
        ..crate::exec_support::call_args(ws)
    }
}

pub(crate) fn run_lines(registry: Arc<Registry>, args: &CallArgs, input: &str) -> Vec<Value> {
    crate::exec_support::call_lines(registry, args, input)
}

fn openai_call(id: &str, arguments: &Value) -> String {
    json!({"id": id, "type": "function", "function": {
        "name": "dc_search", "arguments": arguments.to_string()}})
    .to_string()
}

#[test]
fn the_strict_export_makes_optional_arguments_required_and_nullable() {
    let tool = registry().get("dc_search").expect("tool").decl().clone();
    let strict = openai::strict_schema(&tool).expect("strict");
    assert_eq!(strict["required"], json!(["query", "limit", "tag"]));
    let limit_types = &strict["properties"]["limit"]["type"];
    assert!(
        limit_types
            .as_array()
            .is_some_and(|t| t.contains(&json!("null"))),
        "{strict}"
    );
}

#[test]
fn an_openai_envelope_reads_strict_nulls_as_absent() {
    let ws = tempfile::tempdir().expect("tempdir");
    let args = call_args(ws.path());
    let input = [
        openai_call(
            "call_1",
            &json!({"query": "rust", "limit": null, "tag": null}),
        ),
        openai_call("call_2", &json!({"query": "rust", "limit": 3, "tag": "x"})),
        // A null where the canonical schema requires a value is still refused.
        openai_call(
            "call_3",
            &json!({"query": null, "limit": null, "tag": null}),
        ),
    ]
    .join("\n");
    let out = run_lines(registry(), &args, &input);
    assert_eq!(out[0]["status"], json!("ok"), "{}", out[0]);
    assert_eq!(out[0]["output"], json!("rust:5:None"));
    assert_eq!(out[1]["output"], json!("rust:3:Some(\"x\")"));
    assert_eq!(out[2]["status"], json!("refused"));
    assert_eq!(out[2]["code"], json!("invalid_arguments"));
    assert!(
        out[2]["message"].as_str().unwrap_or("").contains("/query"),
        "{}",
        out[2]
    );
}

#[test]
fn the_canonical_shape_refuses_nulls_unless_a_dialect_is_asked_for() {
    let ws = tempfile::tempdir().expect("tempdir");
    let line = json!({"tool": "dc_search", "args": {"query": "q", "limit": null}}).to_string();
    let out = run_lines(registry(), &call_args(ws.path()), &line);
    assert_eq!(out[0]["code"], json!("invalid_arguments"), "{}", out[0]);

    let mut args = call_args(ws.path());
    args.dialect = Some(Dialect::OpenAiStrict);
    let out = run_lines(registry(), &args, &line);
    assert_eq!(out[0]["output"], json!("q:5:None"), "{}", out[0]);

    // `--dialect canonical` wins over the envelope: an OpenAI call's null is refused again.
    args.dialect = Some(Dialect::Canonical);
    let out = run_lines(
        registry(),
        &args,
        &openai_call("call_9", &json!({"query": "q", "limit": null, "tag": null})),
    );
    assert_eq!(out[0]["code"], json!("invalid_arguments"), "{}", out[0]);
}

#[tokio::test]
async fn the_executor_option_maps_every_call_back() {
    let ws = tempfile::tempdir().expect("tempdir");
    let config = ExecutorConfig::new(ws.path()).dialect(Dialect::OpenAiStrict);
    let exec = Executor::new(registry(), config).expect("executor");
    let session = exec.new_session();
    let r = exec
        .execute(
            &session,
            r#"dc_search(query="a", limit=None, tag=None)"#,
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.output, Some(json!("a:5:None")), "{r:?}");
}

#[test]
fn each_line_of_a_file_of_calls_is_judged_on_its_own() {
    let ws = tempfile::tempdir().expect("tempdir");
    let args = call_args(ws.path());
    let budget = tool_core::executor::DEFAULT_ERROR_BUDGET as usize;
    let mut lines: Vec<String> = (0..budget + 3)
        .map(|_| json!({"tool": "dc_search", "args": {"query": 1}}).to_string())
        .collect();
    lines.push(json!({"tool": "dc_search", "args": {"query": "last"}}).to_string());
    let out = run_lines(registry(), &args, &lines.join("\n"));
    assert_eq!(out.len(), budget + 4);
    for line in &out[..budget + 3] {
        assert_eq!(line["code"], json!("invalid_arguments"), "{line}");
    }
    assert_eq!(out[budget + 3]["output"], json!("last:5:None"));
}
