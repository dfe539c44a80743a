//! An MCP server with fixture tools for third-party clients: the conformance suite's tools
//! (`test_simple_text`, `test_error_handling`, `test_tool_with_progress`,
//! `json_schema_2020_12_tool`) and a few tools that exercise annotations, output schemas, path
//! arguments and approval for the Python client test.
//!
//! `mcp_fixture_server --stdio [--workspace DIR]` or `mcp_fixture_server --http ADDR [--workspace DIR]`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_core::mcp::RegistryBackend;
use tool_core::{Registry, RegistryError, Risk, ToolContext, ToolDef};

fn no_args() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn fixtures() -> Result<Registry, RegistryError> {
    let simple_text = ToolDef::builder("test_simple_text")
        .description("Returns a fixed text.")
        .input_schema(no_args())
        .risk(Risk::Safe)
        .handler(|_ctx: ToolContext, _args| async { "This is a simple text response for testing." })
        .build()?;
    let error_handling = ToolDef::builder("test_error_handling")
        .description("Always fails.")
        .input_schema(no_args())
        .risk(Risk::Safe)
        .handler(|_ctx: ToolContext, _args| async {
            Err::<String, _>("This tool intentionally returns an error for testing")
        })
        .build()?;
    let progress = ToolDef::builder("test_tool_with_progress")
        .description("Reports progress 0, 50 and 100 out of 100.")
        .input_schema(no_args())
        .risk(Risk::Safe)
        .handler(|ctx: ToolContext, _args| async move {
            for step in [0.0, 50.0, 100.0] {
                if step > 0.0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.report_progress(step, Some(100.0), None);
            }
            "progress reported: 0, 50, 100"
        })
        .build()?;
    let json_schema = ToolDef::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        }))
        .risk(Risk::Safe)
        .handler(|_ctx: ToolContext, args: Value| async move { Value::String(args.to_string()) })
        .build()?;
    let read_note = ToolDef::builder("read_note")
        .description("Read a note from the workspace.")
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "the note, relative to the workspace"}},
            "required": ["path"],
            "additionalProperties": false
        }))
        .risk(Risk::ReadOnly)
        .idempotent(true)
        .path_args(["path"])
        .handler(|ctx: ToolContext, _args| async move {
            let path = ctx
                .path_arg("path")
                .ok_or_else(|| "the path was not checked".to_owned())?
                .clone();
            tokio::fs::read_to_string(&path)
                .await
                .map_err(|e| format!("{path}: {e}"))
        })
        .build()?;
    let count_words = ToolDef::builder("count_words")
        .description("Count the words of a text.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "max": {"type": "integer", "minimum": 0}
            },
            "required": ["text"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"words": {"type": "integer"}},
            "required": ["words"]
        }))
        .risk(Risk::Safe)
        .idempotent(true)
        .handler(|_ctx: ToolContext, args: Value| async move {
            let n = args["text"]
                .as_str()
                .unwrap_or_default()
                .split_whitespace()
                .count();
            let n = match args.get("max").and_then(Value::as_u64) {
                Some(max) => n.min(max as usize),
                None => n,
            };
            json!({"words": n})
        })
        .build()?;
    let write_note = ToolDef::builder("write_note")
        .description("Write a note into the workspace.")
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
            "required": ["path", "text"],
            "additionalProperties": false
        }))
        .risk(Risk::Mutation)
        .path_args(["path"])
        .handler(|ctx: ToolContext, args: Value| async move {
            let path = ctx
                .path_arg("path")
                .ok_or_else(|| "the path was not checked".to_owned())?
                .clone();
            let text = args["text"].as_str().unwrap_or_default().to_owned();
            tokio::fs::write(&path, text)
                .await
                .map(|()| format!("wrote {path}"))
                .map_err(|e| format!("{path}: {e}"))
        })
        .build()?;
    Registry::builder()
        .tool(simple_text)
        .tool(error_handling)
        .tool(progress)
        .tool(json_schema)
        .tool(read_note)
        .tool(count_words)
        .tool(write_note)
        .build()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut http = None;
    let mut stdio = false;
    let mut workspace = std::path::PathBuf::from(".");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" => stdio = true,
            "--http" => http = it.next().cloned(),
            "--workspace" => workspace = it.next().map(Into::into).unwrap_or(workspace),
            other => {
                eprintln!(
                    "unknown argument `{other}`; usage: --stdio | --http ADDR [--workspace DIR]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let registry = match fixtures() {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let backend = RegistryBackend::new(registry, workspace);
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
        match (stdio, http) {
            (true, None) => tool_core::mcp::serve_stdio(backend).await,
            (false, Some(addr)) => match addr.parse() {
                Ok(addr) => tool_core::mcp::serve_http(backend, addr).await,
                Err(e) => {
                    eprintln!("error: bad address `{addr}`: {e}");
                    return Err(None);
                }
            },
            _ => {
                eprintln!("usage: --stdio | --http ADDR [--workspace DIR]");
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
