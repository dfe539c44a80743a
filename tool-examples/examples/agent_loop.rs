//! An agent loop: the example tools offered to a model over its HTTP API, every tool call run
//! through the executor, the results sent back, until the model answers
//! ([`tool_examples::agent_loop`]).
//!
//! ```text
//! cargo run -p tool-examples --example agent_loop -- \
//!     --api openai --base-url https://api.openai.com --model MODEL \
//!     --workspace DIR "What is in notes.txt?"
//! ```
//!
//! - `--api openai|anthropic|gemini` (or `AGENT_API`): Chat Completions (`POST
//!   /v1/chat/completions`), Messages (`POST /v1/messages`) or Gemini (`POST
//!   /v1beta/models/MODEL:generateContent`);
//! - `--base-url URL` (or `AGENT_BASE_URL`): the API's base, without `/v1`; any server speaking
//!   the format (a provider, a local model server, a test server);
//! - `--model NAME` (or `AGENT_MODEL`);
//! - `--workspace DIR`: the directory the tools work in (the current directory by default);
//! - `--allow-writes`: approve calls of tools that change the workspace (else they are denied
//!   and the model is told so);
//! - the key comes from `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `GEMINI_API_KEY`, when set.
//!
//! It prints the answer on stdout and one line per tool call on stderr.

use std::process::ExitCode;
use std::sync::Arc;

use tool_core::approval::{self, ApprovalDecision};
use tool_core::ExecutorConfig;
use tool_examples::agent_loop::{run, AgentConfig, Api};

struct Args {
    api: Api,
    base_url: String,
    model: String,
    workspace: String,
    allow_writes: bool,
    prompt: String,
}

fn parse_args() -> Result<Args, String> {
    let env = |k: &str| std::env::var(k).ok();
    let mut api = env("AGENT_API");
    let mut base_url = env("AGENT_BASE_URL");
    let mut model = env("AGENT_MODEL");
    let mut workspace = ".".to_owned();
    let mut allow_writes = false;
    let mut prompt = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("`{name}` needs a value"));
        match arg.as_str() {
            "--api" => api = Some(value("--api")?),
            "--base-url" => base_url = Some(value("--base-url")?),
            "--model" => model = Some(value("--model")?),
            "--workspace" => workspace = value("--workspace")?,
            "--allow-writes" => allow_writes = true,
            s if s.starts_with("--") => return Err(format!("unknown option `{s}`")),
            _ if prompt.is_none() => prompt = Some(arg),
            _ => return Err("one prompt only (quote it)".to_owned()),
        }
    }
    let api = api.ok_or("`--api openai|anthropic|gemini` is required")?;
    Ok(Args {
        api: Api::from_name(&api)
            .ok_or(format!("unknown API `{api}`: openai, anthropic or gemini"))?,
        base_url: base_url.ok_or("`--base-url URL` is required")?,
        model: model.ok_or("`--model NAME` is required")?,
        workspace,
        allow_writes,
        prompt: prompt.ok_or("a prompt is required")?,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("agent_loop: {e}");
            return ExitCode::from(2);
        }
    };
    let allow_writes = args.allow_writes;
    let approver = approval::from_fn(move |req| {
        if allow_writes {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Deny {
                reason: format!(
                    "`{}` changes the workspace; this run approves no change",
                    req.tool
                ),
            }
        }
    });
    let executor = tool_examples::registry()
        .map_err(|e| e.to_string())
        .and_then(|registry| {
            let config = ExecutorConfig::new(&args.workspace).approver(Arc::new(approver));
            tool_core::Executor::new(Arc::new(registry), config).map_err(|e| e.to_string())
        });
    let executor = match executor {
        Ok(e) => e,
        Err(e) => {
            eprintln!("agent_loop: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut config = AgentConfig::new(args.api, args.base_url, args.model);
    config.api_key = match args.api {
        Api::OpenAi => std::env::var("OPENAI_API_KEY").ok(),
        Api::Anthropic => std::env::var("ANTHROPIC_API_KEY").ok(),
        Api::Gemini => std::env::var("GEMINI_API_KEY").ok(),
    };
    match run(&executor, &config, &args.prompt).await {
        Ok(done) => {
            for r in &done.results {
                eprintln!(
                    "{} {} {}",
                    r.tool.as_deref().unwrap_or("?"),
                    r.status.as_str(),
                    r.code.map_or("", |c| c.as_str())
                );
            }
            println!("{}", done.answer);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent_loop: {e}");
            ExitCode::FAILURE
        }
    }
}
