//! An MCP server with fixture tools for third-party clients: the conformance suite's tools
//! (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`, the content tools
//! `test_image_content`, `test_audio_content`, `test_embedded_resource`,
//! `test_multiple_content_types`, the logging tools `test_tool_with_logging` and
//! `test_logging_tool`, `json_schema_2020_12_tool`, `test_custom_header` with its
//! `x-mcp-header` parameter, the `mutation` tools the input-required scenarios ask to approve,
//! and the tools that ask the user, the caller's model or its roots mid-call through
//! `ToolContext`: `test_elicitation`, `test_elicitation_sep1034_defaults`,
//! `test_elicitation_sep1330_enums`, `test_sampling`, `test_missing_capability` and the
//! `test_input_required_result_*` tools) and a few tools that exercise annotations, output
//! schemas, path arguments and approval for the Python client test. All are `#[tool]`s served
//! through the executor, like any application's tools.
//!
//! Besides tools it offers the suite's resources (`test://static-text`, `test://static-binary`,
//! `test://watched-resource`, the template `test://template/{id}/data`), the workspace's files
//! as `file://` resources, and the suite's prompts (`test_simple_prompt`,
//! `test_prompt_with_arguments` with completion of `arg1`, `test_prompt_with_embedded_resource`,
//! `test_prompt_with_image`, and `test_input_required_result_prompt`, which asks the user for
//! its context before it is built).
//!
//! The tasks extension's fixtures are served as tasks to clients that declare it: `slow_compute`,
//! `failing_job` (only as a task), `protocol_error_job`, `confirm_delete` and `multi_input`
//! (which ask inside the task), `test_tool_with_task` (which asks before it becomes a task), next
//! to the plain `greet`.
//!
//! `mcp_fixture_server --stdio --workspace DIR` or `mcp_fixture_server --http ADDR --workspace DIR`,
//! and as a replica of a fleet `--store URL --state-key-file FILE [--replica NAME]`. Over HTTP it
//! writes `serving at http://ADDR/mcp` to stderr once the address is bound (port 0: the one the
//! system chose).
mod asking;
mod catalog;
mod conformance;
mod tasks;

use std::process::ExitCode;
use std::sync::Arc;

use tool_core::guard::path::PathGuard;
use tool_core::mcp::state_key::StateKeys;
use tool_core::mcp::{ExecutorBackend, McpServer};
use tool_core::store::open_store;
use tool_core::{Executor, ExecutorConfig, Registry};

use catalog::{prompts, resources};
use tasks::task_tools;

/// The fixture tools, and only them (the example library's tools are linked in too).
fn fixtures() -> Result<Registry, tool_core::RegistryError> {
    Registry::builder()
        .with_inventory_where(|module| {
            module == module_path!() || module.starts_with(concat!(module_path!(), "::"))
        })
        .build()
}

const USAGE: &str = "usage: --stdio | --http ADDR, and --workspace DIR \
                     [--store URL --state-key-file FILE] [--replica NAME]";

fn main() -> ExitCode {
    // The program is its own sandbox helper (for tools that start programs): first thing.
    if let Some(code) = tool_core::sandbox::dispatch_helper() {
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut http = None;
    let mut stdio = false;
    let mut workspace = None;
    let (mut store, mut key_file, mut replica) = (None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" => stdio = true,
            "--http" => http = it.next().cloned(),
            "--workspace" => workspace = it.next().cloned(),
            "--store" => store = it.next().cloned(),
            "--state-key-file" => key_file = it.next().cloned(),
            "--replica" => replica = it.next().cloned(),
            other => {
                eprintln!("unknown argument `{other}`; {USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(workspace) = workspace else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let executor = match fixtures().map_err(|e| e.to_string()).and_then(|r| {
        Executor::new(Arc::new(r), ExecutorConfig::new(workspace)).map_err(|e| e.to_string())
    }) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let catalog = PathGuard::new(executor.workspace())
        .map_err(|e| e.to_string())
        .and_then(|guard| Ok((resources(guard)?, prompts()?)));
    let server = match catalog {
        Ok((resources, prompts)) => McpServer::new(ExecutorBackend::new(executor))
            .with_resources(resources)
            .with_prompts(prompts)
            .with_tasks(task_tools()),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match replica {
        Some(name) => server.with_replica_name(name),
        None => server,
    };
    let fleet = match (store, key_file) {
        (None, None) => None,
        (Some(url), Some(file)) => match StateKeys::from_file(std::path::Path::new(&file)) {
            Ok(keys) => Some((url, keys)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => {
            eprintln!("--store and --state-key-file go together; {USAGE}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async move {
        // A Redis store is opened inside the runtime that drives its connection.
        let server = match fleet {
            None => server,
            Some((url, keys)) => match open_store(&url) {
                Ok(store) => server.with_state_keys(keys).with_store(store),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Err(None);
                }
            },
        };
        match (stdio, http) {
            (true, None) => tool_core::mcp::serve_stdio_server(server).await,
            (false, Some(addr)) => match addr.parse::<std::net::SocketAddr>() {
                Ok(addr) => match tool_core::mcp::listen_http(&server, addr).await {
                    Ok(listener) => {
                        if let Ok(bound) = listener.local_addr() {
                            eprintln!("serving at http://{bound}/mcp");
                        }
                        tool_core::mcp::serve_http_server_on(listener, server, Default::default())
                            .await
                    }
                    Err(e) => Err(e),
                },
                Err(e) => {
                    eprintln!("error: bad address `{addr}`: {e}");
                    return Err(None);
                }
            },
            _ => {
                eprintln!("{USAGE}");
                return Err(None);
            }
        }
        .map_err(Some)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Some(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(None) => ExitCode::from(2),
    }
}
