//! Load on a fleet (or one replica) of `fleet_replica`: stateless 2026-07-28 requests over HTTP,
//! each call carrying a token unique to the run, and checked: `echo` must answer its token, an
//! approval round trip (`write`, asked then approved) must answer `wrote TOKEN at R`, a task
//! (`slow`) must complete as `slept 0 TOKEN at R`. A lost, failed, duplicated or mixed-up call
//! fails the run.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What one call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `echo`: needs no shared state.
    Echo,
    /// `write`: the approval question, then the answer with its state (two requests).
    Approval,
    /// `slow` as a task: created, then polled until it completed.
    Task,
}

impl Kind {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Echo => "read-only call",
            Kind::Approval => "approval round trip",
            Kind::Task => "task",
        }
    }
}

/// What a run came to.
#[derive(Debug, Clone)]
pub struct FleetReport {
    /// Checked calls of each kind, in the order of the mix.
    pub calls: Vec<(Kind, usize)>,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

impl FleetReport {
    /// Checked calls per second, over all kinds.
    pub fn throughput(&self) -> f64 {
        let n: usize = self.calls.iter().map(|(_, n)| n).sum();
        n as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// An HTTP client for the run.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client")
}

async fn post(
    http: &reqwest::Client,
    addr: SocketAddr,
    method: &str,
    name: &str,
    params: Value,
) -> Result<Value, String> {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply = http
        .post(format!("http://{addr}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{method}: {e}"))?;
    let text = reply.text().await.map_err(|e| format!("{method}: {e}"))?;
    text.split(['\n', '\r'])
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v.get("id").is_some())
        .ok_or_else(|| format!("{method}: no JSON-RPC response in {text:?}"))
}

fn text_of(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// One checked call of `kind` with `token`.
async fn one(
    http: &reqwest::Client,
    addr: SocketAddr,
    kind: Kind,
    token: &str,
) -> Result<(), String> {
    match kind {
        Kind::Echo => {
            let r = post(
                http,
                addr,
                "tools/call",
                "echo",
                json!({"name": "echo", "arguments": {"text": token}}),
            )
            .await?;
            (text_of(&r) == token)
                .then_some(())
                .ok_or_else(|| format!("echo {token}: {r}"))
        }
        Kind::Approval => {
            let args = json!({"text": token});
            let r = post(
                http,
                addr,
                "tools/call",
                "write",
                json!({"name": "write", "arguments": args}),
            )
            .await?;
            let state = r["result"]["requestState"]
                .as_str()
                .ok_or_else(|| format!("write {token}: no question: {r}"))?;
            let r = post(
                http,
                addr,
                "tools/call",
                "write",
                json!({
                    "name": "write",
                    "arguments": args,
                    "requestState": state,
                    "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}}
                }),
            )
            .await?;
            text_of(&r)
                .starts_with(&format!("wrote {token} at r"))
                .then_some(())
                .ok_or_else(|| format!("write {token}: {r}"))
        }
        Kind::Task => {
            let r = post(
                http,
                addr,
                "tools/call",
                "slow",
                json!({"name": "slow", "arguments": {"ms": 0, "tag": token}}),
            )
            .await?;
            let id = r["result"]["taskId"]
                .as_str()
                .ok_or_else(|| format!("slow {token}: no task: {r}"))?
                .to_owned();
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let r = post(http, addr, "tasks/get", &id, json!({"taskId": id})).await?;
                match r["result"]["status"].as_str() {
                    Some("completed") => {
                        let text = r["result"]["result"]["content"][0]["text"]
                            .as_str()
                            .unwrap_or_default();
                        return text
                            .starts_with(&format!("slept 0 {token} at r"))
                            .then_some(())
                            .ok_or_else(|| format!("task {token}: {r}"));
                    }
                    Some("working") if Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    _ => return Err(format!("task {token}: {r}")),
                }
            }
        }
    }
}

/// `calls` checked calls at `addr` from `concurrency` workers, the kinds taken in turn from
/// `mix`; the first failure ends the run with its message.
pub async fn run(
    addr: SocketAddr,
    calls: usize,
    concurrency: usize,
    mix: &[Kind],
) -> Result<FleetReport, String> {
    assert!(!mix.is_empty() && concurrency > 0);
    let next = Arc::new(AtomicUsize::new(0));
    let counts: Arc<Vec<AtomicUsize>> = Arc::new(mix.iter().map(|_| AtomicUsize::new(0)).collect());
    let run_id = std::process::id();
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (next, counts, mix) = (Arc::clone(&next), Arc::clone(&counts), mix.to_vec());
        workers.push(tokio::spawn(async move {
            let http = client();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    return Ok::<(), String>(());
                }
                let k = i % mix.len();
                one(&http, addr, mix[k], &format!("t{run_id}-{i}")).await?;
                counts[k].fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())??;
    }
    Ok(FleetReport {
        calls: mix
            .iter()
            .zip(counts.iter())
            .map(|(k, n)| (*k, n.load(Ordering::Relaxed)))
            .collect(),
        elapsed: started.elapsed(),
    })
}
