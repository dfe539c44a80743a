//! `serve` (the registry over MCP, stdio or streamable HTTP) and `proxy` (a third-party MCP server
//! behind our checks, served over stdio or streamable HTTP). Both run every call through the
//! executor, with the static script scan (default policy) as its script gate unless `--scan off`;
//! approvals go to the client (input-required results for 2026-07-28 clients, elicitation for
//! 2025-11-25 clients) and are denied when it can do neither. Each client (by `Authorization`
//! header, or by session) runs at most `--max-tasks-per-client` tasks and has at most
//! `--max-pending-per-client` input-required rounds outstanding.

use std::net::SocketAddr;
use std::path::PathBuf;
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
use crate::mcp::{ClientQuotas, ExecutorBackend, McpBackend, McpServer, Named, ServerInfo};
use crate::registry::Registry;

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
    fn executor(&self, registry: Registry, app: &AppParts) -> Result<Arc<Executor>, CliError> {
        let mut config = super::shared::executor_config(
            app.configure(ExecutorConfig::new(&self.workspace))
                .error_budget(self.error_budget)
                .sandbox(self.sandbox.into()),
            self.scan,
        )?;
        match (&self.audit, &self.audit_key) {
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
    /// Speak MCP over streamable HTTP at http://ADDR/mcp (loopback Host headers only).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    #[command(flatten)]
    quotas: QuotaArgs,
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
    /// stdin/stdout.
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
    let executor = args.exec.executor(registry.clone(), app)?;
    let rt = runtime()?;
    let result = rt.block_on(async move {
        let tools = executor.registry().len();
        let server = args
            .quotas
            .server(Named::new(ExecutorBackend::new(executor), info));
        match args.http {
            Some(addr) => {
                eprintln!("serving {tools} tools at http://{addr}/mcp");
                crate::mcp::serve_http_server(server, addr).await
            }
            None => crate::mcp::serve_stdio_server(server).await,
        }
    });
    result.map_err(|e| CliError(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
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
        let backend = ExecutorBackend::new(args.exec.executor(registry, app)?);
        let server = args.quotas.server(backend);
        let served = match args.http {
            Some(addr) => {
                eprintln!(
                    "serving {} tools of `{command}` at http://{addr}/mcp",
                    imported.tools.len()
                );
                crate::mcp::serve_http_server(server, addr).await
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
}
