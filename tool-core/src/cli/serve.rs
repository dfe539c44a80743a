//! `serve` (the registry over MCP, stdio or streamable HTTP) and `proxy` (a third-party MCP server
//! behind our checks, served over stdio).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::CliError;
use crate::decl::Risk;
use crate::mcp::proxy::{self, ProxyConfig};
use crate::mcp::RegistryBackend;
use crate::registry::Registry;

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
    /// The workspace path arguments are resolved against.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
}

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Risk of one imported tool, NAME=RISK (repeatable); unlisted tools are `mutation`.
    #[arg(long = "risk", value_name = "NAME=RISK", value_parser = parse_risk)]
    risks: Vec<(String, Risk)>,
    /// The workspace path arguments are resolved against.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
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

fn copy_registry(registry: &Registry) -> Result<Registry, CliError> {
    let mut b = Registry::builder();
    for t in registry.iter() {
        b = b.tool(t.def().clone());
    }
    b.build().map_err(|e| CliError(e.to_string()))
}

pub(crate) fn run_serve(registry: &Registry, args: &ServeArgs) -> Result<ExitCode, CliError> {
    let backend = RegistryBackend::new(Arc::new(copy_registry(registry)?), &args.workspace);
    let rt = runtime()?;
    let result = rt.block_on(async move {
        match args.http {
            Some(addr) => {
                eprintln!(
                    "serving {} tools at http://{addr}/mcp",
                    backend.registry().len()
                );
                crate::mcp::serve_http(backend, addr).await
            }
            None => crate::mcp::serve_stdio(backend).await,
        }
    });
    result.map_err(|e| CliError(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_proxy(args: &ProxyArgs) -> Result<ExitCode, CliError> {
    let (command, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError("proxy needs a command after `--`".to_owned()))?;
    let config = ProxyConfig {
        risks: args.risks.iter().cloned().collect(),
        ..ProxyConfig::default()
    };
    let rt = runtime()?;
    let workspace = args.workspace.clone();
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
        let backend = RegistryBackend::new(Arc::new(registry), workspace);
        let served = crate::mcp::serve_stdio(backend).await;
        imported.shutdown().await;
        served.map_err(|e| CliError(e.to_string()))
    })?;
    Ok(ExitCode::SUCCESS)
}
