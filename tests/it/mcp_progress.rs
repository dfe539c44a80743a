//! Progress over MCP: a tool's `report_progress` reaches the client as
//! `notifications/progress` for the request's token, every report before the call's result,
//! whether or not the tool reports at all (the forwarding starts with the first report).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::RoleClient;
use tool_core::{tool, ToolContext};

use crate::rich_results::mcp_client;

/// Reports `steps` steps of progress, then answers.
#[tool(risk = "safe")]
fn report_steps(ctx: &ToolContext, steps: u32) -> String {
    for i in 1..=steps {
        ctx.report_progress(
            f64::from(i),
            Some(f64::from(steps)),
            Some(&format!("step {i}")),
        );
    }
    format!("{steps} steps")
}

/// Passes on every progress notification the server sends.
#[derive(Clone)]
struct Recorder(tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>);

impl rmcp::ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params);
    }
}

/// A call of `report_steps`; the rmcp client gives each request a progress token of its own.
fn steps(steps: u32) -> CallToolRequestParams {
    let args = serde_json::json!({ "steps": steps });
    CallToolRequestParams::new("report_steps")
        .with_arguments(args.as_object().cloned().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_report_reaches_the_client_with_its_token() {
    let (_dir, exec) = crate::exec_support::module_executor(module_path!(), |c| c);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = mcp_client(Arc::new(exec), Recorder(tx)).await;
    let peer = client.peer().clone();

    // No report: the call is answered, and nothing is sent for it.
    let r = peer.call_tool(steps(0)).await.expect("answered");
    assert_eq!(r.is_error, Some(false), "{r:?}");

    let mut tokens = Vec::new();
    for n in [3u32, 2] {
        let r = peer.call_tool(steps(n)).await.expect("answered");
        assert_eq!(r.is_error, Some(false), "{r:?}");
        let mut got = Vec::new();
        for _ in 0..n {
            // A guard against a hang, not a speed requirement.
            let p = tokio::time::timeout(Duration::from_secs(30), rx.recv())
                .await
                .expect("a progress notification arrives")
                .expect("the client is running");
            got.push(p);
        }
        // The client hands each notification to a task of its own: their arrival order is not
        // theirs.
        got.sort_by(|a, b| a.progress.total_cmp(&b.progress));
        let token = serde_json::to_string(&got[0].progress_token).expect("token");
        let want: Vec<(String, f64, Option<f64>, Option<String>)> = (1..=n)
            .map(|i| {
                let message = Some(format!("step {i}"));
                (token.clone(), f64::from(i), Some(f64::from(n)), message)
            })
            .collect();
        let got: Vec<(String, f64, Option<f64>, Option<String>)> = got
            .into_iter()
            .map(|p| {
                let token = serde_json::to_string(&p.progress_token).expect("token");
                (token, p.progress, p.total, p.message)
            })
            .collect();
        assert_eq!(got, want, "one call's reports, all with its token");
        tokens.push(token);
    }
    assert_ne!(tokens[0], tokens[1], "each call has its own token");
    client.cancel().await.expect("closes");
    assert!(rx.try_recv().is_err(), "nothing more was sent");
}
