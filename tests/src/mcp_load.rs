//! Load over MCP's streamable HTTP: many concurrent rmcp clients calling the example tool
//! `get_weather`, every call checked, and a plain rmcp server serving the same function without
//! our guards, to measure against.
//!
//! Each call's `city` is a token unique to the run, the client and the call, so its result, which
//! echoes the city, says which call it answers. A result is accepted only when it is exactly what
//! `tool_examples::get_weather` returns for that call's arguments: a lost, failed, duplicated or
//! mixed-up call fails the run.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Barrier;
use tokio_util::sync::CancellationToken;
use tool_examples::TempUnit;

/// The tool every call goes to.
pub const TOOL: &str = "get_weather";

/// How a client starts: stateless 2026-07-28 (`server/discover`, version and capabilities in each
/// request) or a 2025-11-25 session (`initialize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// `server/discover`, then self-contained requests.
    Stateless,
    /// `initialize`, then requests in the session.
    Session,
}

impl Lifecycle {
    /// The lifecycle a name on the command line means: `stateless` or `session`.
    pub fn parse(name: &str) -> Option<Lifecycle> {
        match name {
            "stateless" => Some(Lifecycle::Stateless),
            "session" => Some(Lifecycle::Session),
            _ => None,
        }
    }

    fn mode(self) -> ClientLifecycleMode {
        match self {
            Lifecycle::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Lifecycle::Session => ClientLifecycleMode::Initialize,
        }
    }
}

/// Why a load run failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A client could not connect.
    #[error("client {client} could not connect to {url}: {message}")]
    Connect {
        /// The client's number.
        client: usize,
        /// The server.
        url: String,
        /// rmcp's error.
        message: String,
    },
    /// A call failed at the protocol level.
    #[error("call {token} failed: {message}")]
    Call {
        /// The call's token.
        token: String,
        /// rmcp's error.
        message: String,
    },
    /// A call's result is not the tool's answer to that call's arguments.
    #[error("call {token}: expected {expected:?}, got {got:?}")]
    Mismatch {
        /// The call's token.
        token: String,
        /// What the tool returns for these arguments.
        expected: String,
        /// What came back.
        got: String,
    },
    /// Fewer (or other) answers than calls came back.
    #[error("{sent} calls sent, {answered} distinct answers")]
    Lost {
        /// Calls sent.
        sent: usize,
        /// Distinct calls answered.
        answered: usize,
    },
    /// The clients did not all negotiate the expected revision.
    #[error("negotiated {got}, expected {expected}")]
    Revision {
        /// The revision the lifecycle asks for.
        expected: String,
        /// What a client negotiated.
        got: String,
    },
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// Calls answered correctly (all of them, or the run fails).
    pub calls: usize,
    /// From the first call to the last answer (connecting is not counted).
    pub elapsed: Duration,
    /// The revision the clients negotiated.
    pub revision: String,
    /// The CPU time the watched server process used over `elapsed` (see [`run_watching`]).
    pub server_cpu: Option<Duration>,
}

impl LoadReport {
    /// Calls per second.
    pub fn throughput(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
}

type Client = RunningService<RoleClient, ()>;

/// `calls` calls of [`TOOL`] against `url` from `clients` concurrent clients (each with its own
/// HTTP connection, one call at a time), every answer checked. `run` makes the tokens unique
/// across runs against the same server.
pub async fn run(
    url: &str,
    lifecycle: Lifecycle,
    clients: usize,
    calls: usize,
    run: &str,
) -> Result<LoadReport, LoadError> {
    run_watching(url, lifecycle, clients, calls, run, None).await
}

/// [`run`], also reading the CPU time the server process `server` uses while the calls run
/// (connecting not counted), into [`LoadReport::server_cpu`].
pub async fn run_watching(
    url: &str,
    lifecycle: Lifecycle,
    clients: usize,
    calls: usize,
    run: &str,
    server: Option<u32>,
) -> Result<LoadReport, LoadError> {
    let clients = clients.max(1);
    let mut connected = Vec::with_capacity(clients);
    for client in 0..clients {
        connected.push(connect(url, lifecycle, client).await?);
    }
    let expected_revision = match lifecycle {
        Lifecycle::Stateless => ProtocolVersion::V_2026_07_28,
        Lifecycle::Session => ProtocolVersion::V_2025_11_25,
    };
    for c in &connected {
        let got = c
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned())
            .unwrap_or_default();
        if got != expected_revision.as_str() {
            return Err(LoadError::Revision {
                expected: expected_revision.as_str().to_owned(),
                got,
            });
        }
    }

    let next = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(clients + 1));
    let mut tasks = Vec::with_capacity(clients);
    for (n, client) in connected.into_iter().enumerate() {
        let (next, start) = (Arc::clone(&next), Arc::clone(&start));
        let run = run.to_owned();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let mut tokens = Vec::new();
            let outcome = loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= calls {
                    break Ok(());
                }
                match call(&client, &format!("{run}-c{n}-i{i}"), i).await {
                    Ok(token) => tokens.push(token),
                    Err(e) => break Err(e),
                }
            };
            let _ = client.cancel().await;
            outcome.map(|()| tokens)
        }));
    }
    start.wait().await;
    let began = Instant::now();
    let cpu_before = server.and_then(cpu_time);
    let mut answered = HashSet::with_capacity(calls);
    let mut first_error = None;
    for task in tasks {
        match task.await {
            Ok(Ok(tokens)) => answered.extend(tokens),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(LoadError::Call {
                    token: "(client task)".into(),
                    message: e.to_string(),
                });
            }
        }
    }
    let elapsed = began.elapsed();
    let server_cpu = server
        .and_then(cpu_time)
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    if let Some(e) = first_error {
        return Err(e);
    }
    if answered.len() != calls {
        return Err(LoadError::Lost {
            sent: calls,
            answered: answered.len(),
        });
    }
    Ok(LoadReport {
        calls,
        elapsed,
        revision: expected_revision.as_str().to_owned(),
        server_cpu,
    })
}

async fn connect(url: &str, lifecycle: Lifecycle, client: usize) -> Result<Client, LoadError> {
    let transport = StreamableHttpClientTransport::with_client(
        http_client(),
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
    );
    ().serve_with_lifecycle(transport, lifecycle.mode())
        .await
        .map_err(|e| LoadError::Connect {
            client,
            url: url.to_owned(),
            message: e.to_string(),
        })
}

/// The HTTP client every load client's transport uses: as rmcp's default for `from_uri`, no idle
/// connection kept (so each request opens its own connection, as before), and no redirects
/// followed (the servers measured send none). Built once: building one loads the system's
/// certificate store, which for a client per connection cost the load run more time than its
/// calls.
fn http_client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("an HTTP client with default TLS settings")
        })
        .clone()
}

/// One call, checked against the tool itself; returns the token it answered.
async fn call(client: &Client, token: &str, i: usize) -> Result<String, LoadError> {
    let unit = if i % 2 == 0 {
        TempUnit::Celsius
    } else {
        TempUnit::Fahrenheit
    };
    let args = json!({"city": token, "unit": unit});
    let params = CallToolRequestParams::new(TOOL).with_arguments(match args {
        serde_json::Value::Object(map) => map,
        _ => unreachable!("a json! object literal is an object"),
    });
    let result = client
        .call_tool(params)
        .await
        .map_err(|e| LoadError::Call {
            token: token.to_owned(),
            message: e.to_string(),
        })?;
    let got: String = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let expected = tool_examples::get_weather(token.to_owned(), unit)
        .unwrap_or_else(|e| format!("(the tool refuses this call: {e})"));
    if result.is_error == Some(true) || got != expected {
        return Err(LoadError::Mismatch {
            token: token.to_owned(),
            expected,
            got: format!("{got} (isError: {:?})", result.is_error),
        });
    }
    Ok(token.to_owned())
}

/// The resident set size of process `pid` in KiB (`VmRSS` of `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The CPU time process `pid` has used so far, its threads' user and system time together
/// (`utime` + `stime` of `/proc/PID/stat`, in the kernel's user clock ticks of 1/100 s).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    /// `USER_HZ`: 100 on every architecture Linux exports `/proc` times for.
    const TICKS_PER_SECOND: u64 = 100;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: count fields after its end. The field
    // after it is the third (`state`); `utime` and `stime` are the 14th and 15th.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

/// `get_weather`'s arguments as a hand-written rmcp server declares them.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeatherArgs {
    /// the city name
    city: String,
    /// the temperature unit
    unit: TempUnit,
}

/// The same tool served by rmcp alone: its router, no schema validation, no guards.
#[derive(Clone)]
pub struct PlainServer;

#[tool_router(server_handler)]
impl PlainServer {
    #[tool(description = "Get today's weather for a city (offline demo data)")]
    fn get_weather(&self, Parameters(a): Parameters<WeatherArgs>) -> Result<String, String> {
        tool_examples::get_weather(a.city, a.unit)
    }
}

/// Serve [`PlainServer`] over streamable HTTP at `/mcp` on `listener` until `shutdown` fires,
/// with rmcp's default configuration (loopback `Host` names only).
pub async fn serve_plain(
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    let service: StreamableHttpService<PlainServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(PlainServer),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}

/// The URL of the MCP endpoint on `addr`.
pub fn url_of(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}
