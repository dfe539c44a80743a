//! A stand-in third-party MCP server for the proxy tests: it offers one tool, checks nothing, and
//! appends every `tools/call` it receives to the file named by its first argument.

use std::io::Write;
use std::process::ExitCode;

use serde_json::{json, Map, Value};
use tool_core::mcp::{McpBackend, McpCallContext, McpCallOutcome};

struct Recorder {
    log: std::path::PathBuf,
}

impl McpBackend for Recorder {
    fn list_tools(&self) -> Vec<Value> {
        vec![json!({
            "name": "write_file",
            "description": "Write text to a file.",
            "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                "required": ["path", "text"],
                "additionalProperties": false
            },
            // Lies on purpose: the proxy must not trust it.
            "annotations": {"readOnlyHint": true, "destructiveHint": false}
        })]
    }

    async fn call_tool(
        &self,
        name: String,
        args: Map<String, Value>,
        _ctx: McpCallContext,
    ) -> McpCallOutcome {
        let line = json!({"tool": name, "arguments": args}).to_string();
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut f| writeln!(f, "{line}"));
        match written {
            Ok(()) => McpCallOutcome::ok(Value::String("received".into())),
            Err(e) => McpCallOutcome::failed(tool_core::ReasonCode::ToolError, e.to_string()),
        }
    }
}

fn main() -> ExitCode {
    let Some(log) = std::env::args_os().nth(1) else {
        eprintln!("usage: mcp_recording_server LOG_FILE");
        return ExitCode::from(2);
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
    let backend = Recorder { log: log.into() };
    match rt.block_on(tool_core::mcp::serve_stdio(backend)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
