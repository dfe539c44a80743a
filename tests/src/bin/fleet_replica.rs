//! One replica of an MCP fleet, for the fleet tests: three tools served over streamable HTTP,
//! sharing used states, quotas and tasks with the other replicas in a Redis store.
//!
//! - `write` (`mutation`: asked to approve) answers `wrote TEXT at REPLICA`;
//! - `slow` (`safe`, served as a task to clients that declare the extension) sleeps `ms`
//!   milliseconds, stopping early when cancelled, and answers `slept MS [TAG] at REPLICA`;
//! - `echo` (`read_only`) answers its text: a call that needs no shared state.
//!
//! `fleet_replica --http ADDR --workspace DIR --replica NAME [--store URL --state-key-file FILE]`

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::mcp::state_key::StateKeys;
use tool_core::mcp::tasks::{TaskSupport, TaskTools};
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::registry::ToolDef;
use tool_core::store::open_store;
use tool_core::{Executor, ExecutorConfig, Registry, Risk};

const USAGE: &str = "usage: fleet_replica --http ADDR --workspace DIR --replica NAME \
                     [--store URL --state-key-file FILE]";

fn text_schema(field: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": kind}},
        "required": [field],
        "additionalProperties": false
    })
}

fn registry(replica: &str) -> Result<Registry, String> {
    let me = replica.to_owned();
    let write = ToolDef::builder("write")
        .description("Writes a text (asked to approve).")
        .input_schema(text_schema("text", "string"))
        .risk(Risk::Mutation)
        .handler(move |_ctx, args: Value| {
            let me = me.clone();
            async move {
                format!(
                    "wrote {} at {me}",
                    args["text"].as_str().unwrap_or_default()
                )
            }
        })
        .build()
        .map_err(|e| e.to_string())?;
    let me = replica.to_owned();
    let slow = ToolDef::builder("slow")
        .description("Sleeps `ms` milliseconds; its answer names `tag`.")
        .input_schema(json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0}, "tag": {"type": "string"}},
            "required": ["ms"],
            "additionalProperties": false
        }))
        .risk(Risk::Safe)
        .handler(move |ctx, args: Value| {
            let me = me.clone();
            async move {
                let ms = args["ms"].as_u64().unwrap_or(0);
                let tag = args["tag"]
                    .as_str()
                    .map(|t| format!(" {t}"))
                    .unwrap_or_default();
                tokio::select! {
                    () = ctx.cancellation().cancelled() => "cancelled".to_owned(),
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        format!("slept {ms}{tag} at {me}")
                    }
                }
            }
        })
        .build()
        .map_err(|e| e.to_string())?;
    let echo = ToolDef::builder("echo")
        .description("Echoes a text.")
        .input_schema(text_schema("text", "string"))
        .risk(Risk::ReadOnly)
        .handler(
            |_ctx, args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
        )
        .build()
        .map_err(|e| e.to_string())?;
    Registry::builder()
        .tool(write)
        .tool(slow)
        .tool(echo)
        .build()
        .map_err(|e| e.to_string())
}

#[derive(Default)]
struct Args {
    http: Option<String>,
    workspace: Option<String>,
    replica: Option<String>,
    store: Option<String>,
    key_file: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let slot = match a.as_str() {
            "--http" => &mut args.http,
            "--workspace" => &mut args.workspace,
            "--replica" => &mut args.replica,
            "--store" => &mut args.store,
            "--state-key-file" => &mut args.key_file,
            other => return Err(format!("unknown argument `{other}`")),
        };
        *slot = it.next();
    }
    Ok(args)
}

fn serve(args: Args) -> Result<(), String> {
    let (Some(http), Some(workspace), Some(replica)) = (args.http, args.workspace, args.replica)
    else {
        return Err(USAGE.to_owned());
    };
    let executor = Executor::new(
        Arc::new(registry(&replica)?),
        ExecutorConfig::new(workspace),
    )
    .map_err(|e| e.to_string())?;
    let mut server = McpServer::new(ExecutorBackend::new(Arc::new(executor)))
        .with_tasks(TaskTools::new().with_tool("slow", TaskSupport::Optional))
        .with_replica_name(replica);
    let addr = http
        .parse()
        .map_err(|e| format!("bad address `{http}`: {e}"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        if let (Some(url), Some(file)) = (&args.store, &args.key_file) {
            let keys =
                StateKeys::from_file(std::path::Path::new(file)).map_err(|e| e.to_string())?;
            let store = open_store(url).map_err(|e| e.to_string())?;
            server = server.with_state_keys(keys).with_store(store);
        }
        tool_core::mcp::serve_http_server(server, addr)
            .await
            .map_err(|e| e.to_string())
    })
}

fn main() -> ExitCode {
    if let Some(code) = tool_core::sandbox::dispatch_helper() {
        std::process::exit(code);
    }
    match parse().and_then(serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
