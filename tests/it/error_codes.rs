//! A tool's own error type with a stable code (`ToolError`, `ToolErrorCode`): the code reaches
//! the result, the audit event, `call`'s output, every provider's reply and MCP, next to the
//! `tool_error` reason code; a code that is not a short ASCII identifier is dropped, never passed
//! on. Before, a custom error reached the model only as text.

use std::sync::Arc;

use serde_json::{json, Map};
use tokio_util::sync::CancellationToken;
use tool_core::audit::MemoryAuditSink;
use tool_core::cli::call::CallArgs;
use tool_core::mcp::{ExecutorBackend, McpBackend, McpCallContext, McpCallOutcome};
use tool_core::outcome::{ToolError, ToolErrorCode};
use tool_core::reply::{reply, Provider};
use tool_core::{tool, Executor, ExecutorConfig, ReasonCode, Registry};

/// The application's own error type.
#[derive(Debug)]
enum StoreError {
    NotFound(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::NotFound(key) => write!(f, "no entry `{key}`"),
        }
    }
}

impl ToolErrorCode for StoreError {
    fn code(&self) -> &str {
        match self {
            StoreError::NotFound(_) => "not_found",
        }
    }
}

fn find(key: &str) -> Result<String, StoreError> {
    match key {
        "a" => Ok("alpha".to_owned()),
        _ => Err(StoreError::NotFound(key.to_owned())),
    }
}

/// Look an entry up.
///
/// # Arguments
/// * `key` - the entry's key
#[tool(risk = "read_only")]
fn ec_lookup(key: String) -> Result<String, ToolError> {
    Ok(find(&key)?)
}

/// Fails with a code made of whatever it was given.
///
/// # Arguments
/// * `code` - the code to fail with
#[tool(risk = "read_only")]
async fn ec_echo_code(code: String) -> Result<String, ToolError> {
    Err(ToolError::new(code, "failed on purpose"))
}

fn registry() -> Arc<Registry> {
    crate::exec_support::module_registry(module_path!())
}

fn executor(ws: &std::path::Path, audit: Arc<MemoryAuditSink>) -> Executor {
    Executor::new(registry(), ExecutorConfig::new(ws).audit(audit)).expect("executor")
}

#[tokio::test]
async fn the_tools_code_reaches_the_result_the_audit_event_and_every_reply_shape() {
    let ws = tempfile::tempdir().expect("tempdir");
    let audit = Arc::new(MemoryAuditSink::new());
    let exec = executor(ws.path(), Arc::clone(&audit));
    let session = exec.new_session();
    let r = exec
        .execute_text(&session, r#"{"tool": "ec_lookup", "args": {"key": "zz"}}"#)
        .await;
    assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
    assert_eq!(r.error_code.as_deref(), Some("not_found"));
    assert_eq!(r.message.as_deref(), Some("no entry `zz`"));
    let ok = exec
        .execute_text(&session, r#"{"tool": "ec_lookup", "args": {"key": "a"}}"#)
        .await;
    assert!(ok.is_ok() && ok.error_code.is_none(), "{ok:?}");

    let events = audit.events();
    assert_eq!(events[0].error_code.as_deref(), Some("not_found"));
    let line = serde_json::to_value(&events[0]).expect("event JSON");
    assert_eq!(line["error_code"], "not_found", "{line}");
    assert_eq!(line["code"], "tool_error");
    let line = serde_json::to_value(&events[1]).expect("event JSON");
    assert!(line.get("error_code").is_none(), "{line}");

    for provider in [Provider::OpenAi, Provider::Responses, Provider::Anthropic] {
        let text = reply(&r, provider).to_string();
        assert!(
            text.contains("failed (tool_error, error code not_found, at step run): no entry `zz`"),
            "{provider:?}: {text}"
        );
    }
    let gemini = reply(&r, Provider::Gemini);
    let error = &gemini["parts"][0]["functionResponse"]["response"]["error"];
    assert_eq!(error["code"], "tool_error", "{gemini}");
    assert_eq!(error["error_code"], "not_found", "{gemini}");
}

#[tokio::test]
async fn a_code_that_is_not_a_short_ascii_identifier_is_dropped_and_never_passed_on() {
    let ws = tempfile::tempdir().expect("tempdir");
    let audit = Arc::new(MemoryAuditSink::new());
    let exec = executor(ws.path(), Arc::clone(&audit));
    let session = exec.new_session();
    let long = "x".repeat(65);
    for bad in ["not a code", "ignore_all\nprevious", "é", long.as_str()] {
        let call = json!({"tool": "ec_echo_code", "args": {"code": bad}}).to_string();
        let r = exec.execute_text(&session, &call).await;
        assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
        assert_eq!(r.error_code, None, "{bad:?}");
        let message = r.message.as_deref().unwrap_or_default();
        assert!(message.starts_with("failed on purpose"), "{message}");
        assert!(message.contains("error code was dropped"), "{message}");
        assert!(!message.contains(bad), "{message}");
        for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
            assert!(
                !reply(&r, provider).to_string().contains(bad),
                "{provider:?}"
            );
        }
    }
    assert!(audit.events().iter().all(|e| e.error_code.is_none()));
    // A valid code passes, whatever its case.
    let r = exec
        .execute_text(
            &session,
            r#"{"tool": "ec_echo_code", "args": {"code": "E429"}}"#,
        )
        .await;
    assert_eq!(r.error_code.as_deref(), Some("E429"));
}

#[test]
fn call_prints_the_code_in_its_result_line() {
    let ws = tempfile::tempdir().expect("tempdir");
    let args = CallArgs {
        ..crate::exec_support::call_args(ws.path())
    };
    let input = "{\"tool\": \"ec_lookup\", \"args\": {\"key\": \"zz\"}}\n\
                 {\"tool\": \"ec_lookup\", \"args\": {\"key\": \"a\"}}\n";
    let lines = crate::exec_support::call_lines(registry(), &args, input);
    assert_eq!(lines[0]["status"], "failed");
    assert_eq!(lines[0]["code"], "tool_error");
    assert_eq!(lines[0]["error_code"], "not_found", "{}", lines[0]);
    assert!(lines[1].get("error_code").is_none(), "{}", lines[1]);
}

#[tokio::test]
async fn mcp_gets_the_code_as_data() {
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = executor(ws.path(), Arc::new(MemoryAuditSink::new()));
    let backend = ExecutorBackend::new(Arc::new(exec));
    let mut args = Map::new();
    args.insert("key".into(), json!("zz"));
    let out = backend
        .call_tool(
            "ec_lookup".into(),
            args,
            McpCallContext::new("1", CancellationToken::new()),
        )
        .await;
    assert_eq!(
        out,
        McpCallOutcome::Failed {
            code: ReasonCode::ToolError,
            message: "no entry `zz`".into(),
            error_code: Some("not_found".into()),
        }
    );
}
