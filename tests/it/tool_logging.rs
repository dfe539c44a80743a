//! Tool logging: `ToolContext::log` reaches only a caller that asked for that level — the
//! executor's sink, an MCP request's `_meta` logLevel (2026-07-28), a connection's
//! `logging/setLevel` (2025-11-25) — and nothing is sent to anyone who did not ask.
// rmcp marks MCP logging deprecated (SEP-2577); the revisions served still define it.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, LoggingMessageNotificationParam, RequestMetaObject};
use rmcp::service::NotificationContext;
use rmcp::RoleClient;
use serde_json::{json, Value};
use tool_core::context::{log_channel, LogLevel};
use tool_core::{tool, CallOptions, Executor, ExecutorConfig, ToolContext};

use crate::exec_support::call;
use crate::rich_results::mcp_client;

/// Logs one message per level, least severe first.
#[tool(risk = "safe")]
fn log_every_level(ctx: &ToolContext) -> String {
    for level in LogLevel::ALL {
        ctx.log(level, format!("{level} message"));
    }
    assert_eq!(
        ctx.log_enabled(LogLevel::Emergency),
        ctx.log_enabled(LogLevel::Emergency)
    );
    "done".to_owned()
}

fn executor(
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (tempfile::TempDir, Arc<Executor>) {
    let (dir, exec) = crate::exec_support::module_executor(module_path!(), config);
    (dir, Arc::new(exec))
}

#[tokio::test]
async fn messages_below_the_asked_level_are_dropped() {
    let (_dir, exec) = executor(|c| c);
    let session = exec.new_session();
    let (sink, mut rx) = log_channel(LogLevel::Warning);
    let options = CallOptions {
        call_id: Some("c1".into()),
        log: Some(sink),
        ..CallOptions::default()
    };
    let r = exec
        .execute(&session, call("log_every_level", json!({})), options)
        .await;
    assert!(r.is_ok(), "{r:?}");
    let mut got = Vec::new();
    while let Ok(m) = rx.try_recv() {
        got.push(m);
    }
    let levels: Vec<LogLevel> = got.iter().map(|m| m.level).collect();
    assert_eq!(
        levels,
        LogLevel::ALL[3..].to_vec(),
        "warning and above, in order"
    );
    assert!(got.iter().all(|m| m.call_id == "c1"));
    assert_eq!(got[0].message, "warning message");
}

#[tokio::test]
async fn the_calls_sink_wins_over_the_configured_one() {
    let (config_sink, mut config_rx) = log_channel(LogLevel::Debug);
    let (_dir, exec) = executor(|c| c.log_sink(config_sink));
    let session = exec.new_session();
    exec.execute(
        &session,
        call("log_every_level", json!({})),
        CallOptions::default(),
    )
    .await;
    assert_eq!(std::iter::from_fn(|| config_rx.try_recv().ok()).count(), 8);
    let (own, mut own_rx) = log_channel(LogLevel::Emergency);
    let options = CallOptions {
        log: Some(own),
        ..CallOptions::default()
    };
    exec.execute(&session, call("log_every_level", json!({})), options)
        .await;
    assert_eq!(std::iter::from_fn(|| own_rx.try_recv().ok()).count(), 1);
    assert_eq!(
        config_rx.try_recv().ok(),
        None,
        "nothing went to the configured sink"
    );
}

#[tokio::test]
async fn a_batch_logs_every_call_to_its_sink() {
    let (_dir, exec) = executor(|c| c);
    let session = exec.new_session();
    let (sink, mut rx) = log_channel(LogLevel::Critical);
    let calls = vec![
        call("log_every_level", json!({})).with_id("a"),
        call("log_every_level", json!({})).with_id("b"),
    ];
    let results = exec
        .run_batch(
            &session,
            calls,
            tool_core::executor::BatchOptions::new().log(sink),
        )
        .await;
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    let mut got: Vec<(String, LogLevel)> = std::iter::from_fn(|| rx.try_recv().ok())
        .map(|m| (m.call_id, m.level))
        .collect();
    got.sort();
    let want: Vec<(String, LogLevel)> = ["a", "b"]
        .iter()
        .flat_map(|id| LogLevel::ALL[5..].iter().map(move |l| (id.to_string(), *l)))
        .collect();
    assert_eq!(got, want);
}

/// Passes on every log notification the server sends.
#[derive(Clone)]
struct Recorder(tokio::sync::mpsc::UnboundedSender<LoggingMessageNotificationParam>);

impl rmcp::ClientHandler for Recorder {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params);
    }
}

/// The next `n` notifications as (level, data), sorted by level: the client hands each
/// notification to its handler on a task of its own, so their arrival order is not theirs.
async fn next(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<LoggingMessageNotificationParam>,
    n: usize,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for _ in 0..n {
        // A guard against a hang, not a speed requirement.
        let p = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("a log notification arrives")
            .expect("the client is running");
        out.push(p);
    }
    out.sort_by_key(|p| {
        serde_json::to_value(p.level)
            .ok()
            .and_then(|v| v.as_str().and_then(|s| s.parse::<LogLevel>().ok()))
    });
    out.into_iter()
        .map(|p| {
            let level = serde_json::to_value(p.level).expect("level");
            (level.as_str().unwrap_or_default().to_owned(), p.data)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_requests_get_messages_only_at_the_level_they_asked() {
    let (_dir, exec) = executor(|c| c);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = mcp_client(exec, Recorder(tx)).await;
    let peer = client.peer().clone();

    // No level asked: nothing is sent (had anything been, it would come first below).
    peer.call_tool(CallToolRequestParams::new("log_every_level"))
        .await
        .expect("answered");

    // 2026-07-28: the request's own `_meta` level.
    let mut meta = RequestMetaObject::default();
    meta.0
        .insert("io.modelcontextprotocol/logLevel".into(), json!("error"));
    let mut params = CallToolRequestParams::new("log_every_level");
    params.meta = Some(meta);
    peer.call_tool(params).await.expect("answered");
    let got = next(&mut rx, 4).await;
    let levels: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(levels, ["error", "critical", "alert", "emergency"]);
    assert_eq!(got[0].1, json!("error message"));

    // 2025-11-25: `logging/setLevel` for the connection.
    let set = rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Alert);
    peer.set_level(set).await.expect("setLevel is accepted");
    peer.call_tool(CallToolRequestParams::new("log_every_level"))
        .await
        .expect("answered");
    let levels: Vec<String> = next(&mut rx, 2).await.into_iter().map(|(l, _)| l).collect();
    assert_eq!(levels, ["alert", "emergency"]);
    client.cancel().await.expect("closes");
    assert!(rx.try_recv().is_err(), "nothing more was sent");
}
