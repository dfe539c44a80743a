//! `serve` (the registry over MCP, stdio or streamable HTTP) and `proxy` (a third-party MCP server
//! behind our checks, served over stdio or streamable HTTP). Both run every call through the
//! executor, with the static script scan (default policy) as its script gate unless `--scan off`;
//! approvals go to the client (input-required results for 2026-07-28 clients, elicitation for
//! 2025-11-25 clients) and are denied when it can do neither. Each client (by `Authorization`
//! header, or by session) runs at most `--max-tasks-per-client` tasks and has at most
//! `--max-pending-per-client` input-required rounds outstanding.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::app::AppParts;
use super::call::SandboxArg;
use super::shared::CliError;
use crate::audit::{AuditKey, JsonlAuditSink};
use crate::decl::Risk;
use crate::executor::{Executor, ExecutorConfig, ScanMode, DEFAULT_ERROR_BUDGET};
use crate::mcp::proxy::{self, ChildRevision, ProxyConfig};
use crate::mcp::quota::{DEFAULT_MAX_PENDING_PER_CLIENT, DEFAULT_MAX_TASKS_PER_CLIENT};
use crate::mcp::state_key::StateKeys;
use crate::mcp::{
    check_replica_name, default_replica_name, ClientQuotas, ExecutorBackend, McpBackend, McpServer,
    Named, ServerInfo,
};
use crate::registry::Registry;
use crate::store::open_store;

/// Executor settings shared by `serve` and `proxy`.
#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// The workspace root: relative paths are resolved against it, and no path may leave it.
    #[arg(long)]
    workspace: PathBuf,
    /// Append one JSON audit line per call to this file.
    #[arg(long)]
    audit: Option<PathBuf>,
    /// Key the audit log with this key file (at least 32 bytes, mode 600); a log changed since
    /// its last checkpoint is refused (`audit_tampered`).
    #[arg(long, value_name = "FILE", requires = "audit")]
    audit_key: Option<PathBuf>,
    /// Consecutive failures of one client connection before its calls are refused (0 = no limit).
    #[arg(long, default_value_t = DEFAULT_ERROR_BUDGET)]
    error_budget: u32,
    /// `on` (the default): scripts run only after the static scan allowed them. `off`: scripts
    /// run unscanned, for scripts confined by other means; every audit event records the mode.
    #[arg(long, value_enum, default_value_t = ScanMode::On)]
    scan: ScanMode,
    /// Kernel confinement of handlers and scripts: `required` refuses what cannot be confined.
    #[arg(long, value_enum, default_value_t = SandboxArg::Required)]
    sandbox: SandboxArg,
}

impl ExecArgs {
    /// The executor; `{replica}` in the audit log's path becomes `replica`'s name.
    fn executor(
        &self,
        registry: Registry,
        app: &AppParts,
        replica: Option<&str>,
    ) -> Result<Arc<Executor>, CliError> {
        let audit = self.audit.as_deref().map(|p| audit_path(p, replica));
        let mut config = super::shared::executor_config(
            app.configure(ExecutorConfig::new(&self.workspace))
                .error_budget(self.error_budget)
                .sandbox(self.sandbox.into()),
            self.scan,
        )?;
        match (&audit, &self.audit_key) {
            (Some(path), Some(key)) => {
                let key = AuditKey::from_file(key).map_err(|e| CliError(e.to_string()))?;
                config = config
                    .keyed_audit_log(path, &key)
                    .map_err(|e| CliError(e.to_string()))?;
            }
            (Some(path), None) => {
                let sink = JsonlAuditSink::open(path).map_err(|e| {
                    CliError(format!("cannot open the audit log {}: {e}", path.display()))
                })?;
                config = config.audit(Arc::new(sink));
            }
            (None, _) => {}
        }
        let executor =
            Executor::new(Arc::new(registry), config).map_err(|e| CliError(e.to_string()))?;
        Ok(Arc::new(executor))
    }
}

/// Per-client quotas, shared by `serve` and `proxy`.
#[derive(Debug, Args)]
pub(crate) struct QuotaArgs {
    /// Most tasks one client (one `Authorization` header, or one session) runs at a time.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_TASKS_PER_CLIENT, value_parser = parse_quota)]
    max_tasks_per_client: usize,
    /// Most input-required rounds (approval or a tool's questions) one client has outstanding.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PENDING_PER_CLIENT, value_parser = parse_quota)]
    max_pending_per_client: usize,
}

impl QuotaArgs {
    fn server<B: McpBackend>(&self, backend: B) -> McpServer<B> {
        McpServer::new(backend).with_client_quotas(
            ClientQuotas::new()
                .with_max_tasks_per_client(self.max_tasks_per_client)
                .with_max_pending_per_client(self.max_pending_per_client),
        )
    }
}

/// One replica of a fleet, shared by `serve` and `proxy`.
#[derive(Debug, Args)]
pub(crate) struct FleetArgs {
    /// Share used states, outstanding rounds, quotas and tasks with the other replicas in this
    /// store: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://` for TLS (the `redis`
    /// feature). Needs `--state-key-file`.
    #[arg(long, value_name = "URL", requires = "state_key_file")]
    store: Option<String>,
    /// Sign approval states with the fleet's key from this file (at least 32 bytes, mode 600; a
    /// second key line still verifies while keys rotate). Needs `--store`: without the shared
    /// record of used states, a state could be used again at another replica or after a
    /// restart.
    #[arg(long, value_name = "FILE", requires = "store")]
    state_key_file: Option<PathBuf>,
    /// This replica's name in task leases, logs and `{replica}` of `--audit` (default: the
    /// process id and random bits).
    #[arg(long, value_name = "NAME")]
    replica: Option<String>,
}

impl FleetArgs {
    /// `server` as this replica of its fleet.
    pub(crate) fn join<B: McpBackend>(
        &self,
        server: McpServer<B>,
        replica: String,
    ) -> Result<McpServer<B>, CliError> {
        let server = server.with_replica_name(replica);
        let (Some(url), Some(key_file)) = (&self.store, &self.state_key_file) else {
            return Ok(server);
        };
        let keys = StateKeys::from_file(key_file).map_err(|e| CliError(e.to_string()))?;
        let store = open_store(url).map_err(|e| CliError(format!("--store: {e}")))?;
        eprintln!(
            "replica {} of the fleet in {}",
            server.replica_name(),
            store.describe()
        );
        Ok(server.with_state_keys(keys).with_store(store))
    }

    /// This replica's name: the one given, checked, or a fresh default.
    fn replica(&self) -> Result<String, CliError> {
        match &self.replica {
            Some(name) => check_replica_name(name)
                .map(|()| name.clone())
                .map_err(CliError),
            None => Ok(default_replica_name()),
        }
    }
}

/// The audit log's path for `replica`: `{replica}` replaced by its name (a checked name, so
/// no separator or `..` comes in).
fn audit_path(path: &Path, replica: Option<&str>) -> PathBuf {
    let shown = path.to_string_lossy();
    match replica {
        Some(name) if shown.contains("{replica}") => {
            PathBuf::from(shown.replace("{replica}", name))
        }
        _ => path.to_path_buf(),
    }
}

fn parse_quota(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("a quota of 0 would serve nobody".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Arguments of `serve`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("transport").required(true).args(["stdio", "http"]))]
pub(crate) struct ServeArgs {
    /// Speak MCP over stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// Speak MCP over streamable HTTP at http://ADDR/mcp (loopback Host headers only); once
    /// bound, the address is printed on stderr (port 0: the port the system chose).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    #[command(flatten)]
    quotas: QuotaArgs,
    #[command(flatten)]
    fleet: FleetArgs,
    #[command(flatten)]
    exec: ExecArgs,
}

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Risk of one imported tool, NAME=RISK (repeatable); unlisted tools are `mutation`.
    #[arg(long = "risk", value_name = "NAME=RISK", value_parser = parse_risk)]
    risks: Vec<(String, Risk)>,
    /// Serve over streamable HTTP at http://ADDR/mcp (loopback Host headers only) instead of
    /// stdin/stdout; once bound, the address is printed on stderr (port 0: the port the system
    /// chose).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The MCP revision to speak with the child: `auto` (2026-07-28, falling back to
    /// 2025-11-25), `2026-07-28` or `2025-11-25`.
    #[arg(long, value_name = "REVISION", default_value = "auto")]
    child_revision: ChildRevision,
    #[command(flatten)]
    quotas: QuotaArgs,
    #[command(flatten)]
    exec: ExecArgs,
    /// The MCP server to start, and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn parse_risk(s: &str) -> Result<(String, Risk), String> {
    let (name, risk) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=RISK, got `{s}`"))?;
    Ok((name.to_owned(), risk.parse().map_err(|e| format!("{e}"))?))
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError(format!("could not start the async runtime: {e}")))
}

pub(crate) fn run_serve(
    registry: &Registry,
    app: &AppParts,
    info: ServerInfo,
    args: &ServeArgs,
) -> Result<ExitCode, CliError> {
    let replica = args.fleet.replica()?;
    let executor = args.exec.executor(registry.clone(), app, Some(&replica))?;
    let rt = runtime()?;
    let result = rt.block_on(async move {
        let tools = executor.registry().len();
        let server = args
            .quotas
            .server(Named::new(ExecutorBackend::new(executor), info));
        let server = args
            .fleet
            .join(server, replica)
            .map_err(|e| crate::mcp::ServeError::Invalid(e.0))?;
        match args.http {
            Some(addr) => {
                let listener = listen(&server, addr, &format!("{tools} tools")).await?;
                crate::mcp::serve_http_server_on(listener, server, Default::default()).await
            }
            None => crate::mcp::serve_stdio_server(server).await,
        }
    });
    result.map_err(|e| CliError(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// Binds `addr` for `server` ([`crate::mcp::listen_http`]), then says what is served where, at
/// the address bound (with port 0, the one the system chose).
async fn listen<B: McpBackend>(
    server: &McpServer<B>,
    addr: SocketAddr,
    what: &str,
) -> Result<tokio::net::TcpListener, crate::mcp::ServeError> {
    let listener = crate::mcp::listen_http(server, addr).await?;
    let bound = listener.local_addr()?;
    eprintln!("serving {what} at http://{bound}/mcp");
    Ok(listener)
}

pub(crate) fn run_proxy(app: &AppParts, args: &ProxyArgs) -> Result<ExitCode, CliError> {
    let (command, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError("proxy needs a command after `--`".to_owned()))?;
    let config = ProxyConfig {
        risks: args.risks.iter().cloned().collect(),
        revision: args.child_revision,
        ..ProxyConfig::default()
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let imported = proxy::import(command, rest, &config)
            .await
            .map_err(|e| CliError(e.to_string()))?;
        for s in &imported.skipped {
            eprintln!("warning: tool `{}` not served: {}", s.name, s.reason);
        }
        let mut b = Registry::builder();
        for def in imported.tools.iter().cloned() {
            b = b.tool(def);
        }
        let registry = b.build().map_err(|e| CliError(e.to_string()))?;
        let backend = ExecutorBackend::new(args.exec.executor(registry, app, None)?);
        let server = args.quotas.server(backend);
        let served = match args.http {
            Some(addr) => {
                let what = format!("{} tools of `{command}`", imported.tools.len());
                // The child is shut down below whether or not the address could be bound.
                async {
                    let listener = listen(&server, addr, &what).await?;
                    crate::mcp::serve_http_server_on(listener, server, Default::default()).await
                }
                .await
            }
            None => crate::mcp::serve_stdio_server(server).await,
        };
        imported.shutdown().await;
        served.map_err(|e| CliError(e.to_string()))
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Proxy {
        #[command(flatten)]
        args: ProxyArgs,
    }

    fn parse(args: &[&str]) -> Result<ProxyArgs, clap::Error> {
        Proxy::try_parse_from(std::iter::once("proxy").chain(args.iter().copied())).map(|p| p.args)
    }

    #[test]
    fn proxy_takes_its_transport_and_the_childs_revision() {
        let p = parse(&[
            "--http",
            "127.0.0.1:8080",
            "--child-revision",
            "2025-11-25",
            "--workspace",
            "/w",
            "--",
            "server",
            "--flag",
        ])
        .expect("parses");
        assert_eq!(p.http, "127.0.0.1:8080".parse().ok());
        assert_eq!(p.child_revision, ChildRevision::V2025_11_25);
        assert_eq!(p.command, ["server", "--flag"]);
        let p = parse(&["--workspace", "/w", "--", "server"]).expect("parses");
        assert_eq!(p.child_revision, ChildRevision::Auto);
        assert_eq!(p.http, None);
        let p = parse(&[
            "--child-revision",
            "2026-07-28",
            "--workspace",
            "/w",
            "--",
            "s",
        ])
        .expect("parses");
        assert_eq!(p.child_revision, ChildRevision::V2026_07_28);
        let unknown = parse(&[
            "--child-revision",
            "2024-11-05",
            "--workspace",
            "/w",
            "--",
            "s",
        ])
        .expect_err("an unknown revision is refused");
        assert!(
            unknown.to_string().contains("unknown MCP revision"),
            "{unknown}"
        );
    }

    #[test]
    fn quotas_default_below_the_server_bounds_and_refuse_zero() {
        let p = parse(&["--workspace", "/w", "--", "s"]).expect("parses");
        assert_eq!(p.quotas.max_tasks_per_client, DEFAULT_MAX_TASKS_PER_CLIENT);
        assert_eq!(
            p.quotas.max_pending_per_client,
            DEFAULT_MAX_PENDING_PER_CLIENT
        );
        let p = parse(&[
            "--max-tasks-per-client",
            "3",
            "--max-pending-per-client",
            "5",
            "--workspace",
            "/w",
            "--",
            "s",
        ])
        .expect("parses");
        assert_eq!(
            (
                p.quotas.max_tasks_per_client,
                p.quotas.max_pending_per_client
            ),
            (3, 5)
        );
        let zero = parse(&[
            "--max-tasks-per-client",
            "0",
            "--workspace",
            "/w",
            "--",
            "s",
        ]);
        assert!(zero.is_err());
    }

    #[derive(Debug, Parser)]
    struct Serve {
        #[command(flatten)]
        args: ServeArgs,
    }

    fn parse_serve(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        Serve::try_parse_from(std::iter::once("serve").chain(args.iter().copied())).map(|s| s.args)
    }

    #[test]
    fn a_store_and_a_state_key_file_go_together() {
        let base = ["--http", "127.0.0.1:1", "--workspace", "/w"];
        let with = |extra: &[&str]| {
            let mut v = base.to_vec();
            v.extend_from_slice(extra);
            parse_serve(&v)
        };
        let store_alone = with(&["--store", "redis://127.0.0.1:6379/0"]).expect_err("no key");
        assert!(
            store_alone.to_string().contains("--state-key-file"),
            "{store_alone}"
        );
        let key_alone = with(&["--state-key-file", "/k"]).expect_err("no store");
        assert!(key_alone.to_string().contains("--store"), "{key_alone}");
        let both = with(&[
            "--store",
            "redis://127.0.0.1:6379/0",
            "--state-key-file",
            "/k",
            "--replica",
            "a-1",
        ])
        .expect("parses");
        assert_eq!(both.fleet.replica().map_err(|e| e.0), Ok("a-1".to_owned()));
    }

    #[test]
    fn a_replica_name_is_checked_and_names_the_audit_log() {
        let p =
            parse_serve(&["--stdio", "--workspace", "/w", "--replica", "../x"]).expect("parses");
        assert!(p.fleet.replica().is_err());
        let p = parse_serve(&["--stdio", "--workspace", "/w"]).expect("parses");
        let name = p.fleet.replica().map_err(|e| e.0).expect("a default name");
        assert!(check_replica_name(&name).is_ok());
        assert_eq!(
            audit_path(Path::new("/var/log/audit-{replica}.jsonl"), Some("r2")),
            PathBuf::from("/var/log/audit-r2.jsonl")
        );
        assert_eq!(
            audit_path(Path::new("/var/log/audit.jsonl"), Some("r2")),
            PathBuf::from("/var/log/audit.jsonl")
        );
    }
}
