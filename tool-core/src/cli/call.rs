//! `call`: run calls read one per line through the executor and write one JSON result per line.
//!
//! Output, one line per input line, in order:
//! `{"line": N, "tool": NAME|null, "status": "ok"|"refused"|"failed", "code": REASON|null,
//! "message": TEXT|null, "output": VALUE|null}`. `refused` means the handler never ran; `failed`
//! means it ran and failed; a tool's own error code ([`crate::outcome::ToolError`]) adds
//! `"error_code": CODE`. A tool that returns content blocks (images, audio, resources; see
//! [`crate::content`]) adds `"content": [BLOCK, ...]`, each block in MCP's `ContentBlock` shape
//! (binary data base64-encoded, e.g. `{"type": "image", "data": "...", "mimeType": "image/png"}`);
//! `output` is then `null` unless the tool also returned a value.
//!
//! Messages a tool logs ([`ToolContext::log`](crate::context::ToolContext::log)) go to stderr,
//! one line each, `[LEVEL] CALL_ID: MESSAGE` (control characters escaped), at `info` and above
//! by default (`--log-level`); stdout carries only result lines.
//!
//! With `--batch`, a line holding a model turn (a JSON array of calls, an assistant message, a
//! Gemini content `{"parts"}` or response `{"candidates"}`) runs as one batch
//! ([`Executor::run_batch`]) and is answered with one line holding a JSON array of result
//! objects, in call order, each as above plus `"index"` (its place in the turn). A call that is
//! not valid is refused (`malformed_call`) in its place, under the id its envelope names, without
//! stopping the others. Any other line is served as without `--batch`.
//!
//! Each line is judged on its own: the error budget (`--error-budget`) counts consecutive failures
//! within one line (the calls of a batch) and starts afresh on the next line, so a file of test
//! calls with refusals in it is served to its end.
//!
//! A blank (whitespace-only) line still gets its result line, `refused` / `malformed_call`, so
//! line numbers always match, but it is not sent to the executor: it is not audited and does not
//! count against the error budget. A line longer than the parse limit or not UTF-8 is refused the
//! same way, and audited.

use std::fs::OpenOptions;
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::shared::CliError;
use crate::approval::{ApprovalDecision, ApprovalRequest, Approver, FixedApprover};
use crate::audit::{AuditLogError, JsonlAuditSink};
use crate::call::{parse_turn, ParseError, ParseLimits, ToolCall, Turn};
use crate::context::{LogLevel, LogMessage, LogSink};
use crate::executor::{
    BatchOptions, CallOptions, CallResult, CallStatus, Executor, ExecutorConfig, ExecutorError,
    ScanMode, DEFAULT_ERROR_BUDGET, DEFAULT_MAX_CONCURRENCY,
};
use crate::reason::ReasonCode;
use crate::registry::Registry;
use crate::reply::Provider;
use crate::resource::Resources;
use crate::schema::export::Dialect;

/// Who answers approval requests on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ApproveMode {
    /// Deny every call that needs approval (the default: fail closed).
    #[default]
    Deny,
    /// Approve every call that needs approval, one call at a time (never for the session); only
    /// the guards stand in the way.
    Allow,
    /// Ask on the terminal (`/dev/tty`); deny when there is none.
    Prompt,
}

/// How much kernel confinement the commands that run tools demand (`--sandbox`); see
/// [`crate::sandbox`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SandboxArg {
    /// Confine by the kernel; refuse what cannot be confined (the default).
    #[default]
    Required,
    /// Confine with what the kernel offers; the audit records what that was.
    BestEffort,
    /// Confine nothing (you bring your own container); the audit records `none`.
    Off,
}

impl From<SandboxArg> for crate::sandbox::Mode {
    fn from(a: SandboxArg) -> Self {
        match a {
            SandboxArg::Required => crate::sandbox::Mode::Required,
            SandboxArg::BestEffort => crate::sandbox::Mode::BestEffort,
            SandboxArg::Off => crate::sandbox::Mode::Off,
        }
    }
}

/// Arguments of `call`.
#[derive(Debug, Clone, clap::Args)]
pub struct CallArgs {
    /// The workspace root: relative paths are resolved against it, and no path may leave it.
    #[arg(long)]
    pub workspace: PathBuf,
    /// Who approves calls that need approval.
    #[arg(long, value_enum, default_value_t = ApproveMode::Deny)]
    pub approve: ApproveMode,
    /// Append one JSON audit line per call to this file.
    #[arg(long)]
    pub audit: Option<PathBuf>,
    /// Key the audit log with this key file (at least 32 bytes, mode 600): MACed lines, evolving
    /// epoch keys, checkpoints; a log changed since its last checkpoint is refused
    /// (`audit_tampered`).
    #[arg(long, value_name = "FILE", requires = "audit")]
    pub audit_key: Option<PathBuf>,
    /// Consecutive failures within one line (a batch) before its further calls are refused
    /// (0 = no limit). Each line is judged on its own: it starts with the whole budget.
    #[arg(long, default_value_t = DEFAULT_ERROR_BUDGET)]
    pub error_budget: u32,
    /// Accept a JSON array of calls on one line and run it as one batch (concurrency-safe calls
    /// together), answered with one JSON array line.
    #[arg(long)]
    pub batch: bool,
    /// How many concurrency-safe calls of a batch run at the same time.
    #[arg(long, default_value_t = DEFAULT_MAX_CONCURRENCY)]
    pub max_concurrency: usize,
    /// `on` (the default): scripts run only after the static scan allowed them (without the
    /// `safety` feature, script tools are refused). `off`: scripts run unscanned, for scripts
    /// confined by other means; every audit event records the mode.
    #[arg(long, value_enum, default_value_t = ScanMode::On)]
    pub scan: ScanMode,
    /// Kernel confinement of handlers and scripts: `required` refuses what cannot be confined.
    #[arg(long, value_enum, default_value_t = SandboxArg::Required)]
    pub sandbox: SandboxArg,
    /// Print each result as the provider's next message instead of a result line: `openai`
    /// (`role: tool`), `responses` (`function_call_output`), `anthropic` (`tool_result` in a user
    /// message), `gemini` (`functionResponse`), with the call's id.
    #[arg(long, value_enum)]
    pub reply: Option<Provider>,
    /// Read every call's arguments as shaped by this dialect's exported schema and map them back
    /// before validation: `openai-strict` (a `null` for an optional property is "absent"),
    /// `anthropic`, `gemini`, `mcp`, `canonical`. Without it, each call is mapped from the
    /// dialect of its envelope (OpenAI calls as `openai-strict`).
    #[arg(long, value_enum)]
    pub dialect: Option<Dialect>,
    /// The least severe tool log message written to stderr: debug, info, notice, warning,
    /// error, critical, alert, emergency.
    #[arg(long, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
}

/// Why `call` could not run (a bad call is never one of these: it gets a result line).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallCommandError {
    /// The executor could not be built (bad workspace).
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// The audit file could not be opened.
    #[error("cannot open the audit log {path}: {source}")]
    Audit {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The keyed audit log or its key was refused (`audit_tampered` when the log was changed).
    #[error(transparent)]
    AuditLog(#[from] AuditLogError),
    /// The safety policy is invalid.
    #[cfg(feature = "safety")]
    #[error("the safety policy is invalid: {0}")]
    Policy(#[from] crate::safety::PolicyError),
    /// Reading input or writing output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

pub(super) fn run(
    registry: &Registry,
    app: &super::app::AppParts,
    args: &CallArgs,
) -> Result<ExitCode, CliError> {
    let stdin = io::stdin().lock();
    let stdout = io::stdout().lock();
    let config = app.configure(ExecutorConfig::new(&args.workspace));
    run_call_configured(Arc::new(registry.clone()), config, stdin, stdout, args)
        .map_err(|e| CliError(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// Run `call` over any input and output (what the command does with stdin and stdout).
pub fn run_call(
    registry: Arc<Registry>,
    input: impl BufRead,
    output: impl Write,
    args: &CallArgs,
) -> Result<(), CallCommandError> {
    run_call_with(registry, &Resources::new(), input, output, args)
}

/// [`run_call`] with the resources the tools' `State<T>` parameters take.
pub fn run_call_with(
    registry: Arc<Registry>,
    resources: &Resources,
    input: impl BufRead,
    output: impl Write,
    args: &CallArgs,
) -> Result<(), CallCommandError> {
    let config = ExecutorConfig::new(&args.workspace).resources(resources);
    run_call_configured(registry, config, input, output, args)
}

/// [`run_call`] from a configuration the application started (resources, approver, filters);
/// the command's flags are applied on top (`--approve allow|prompt` replaces its approver).
pub(crate) fn run_call_configured(
    registry: Arc<Registry>,
    config: ExecutorConfig,
    input: impl BufRead,
    output: impl Write,
    args: &CallArgs,
) -> Result<(), CallCommandError> {
    let mut config = config
        .error_budget(args.error_budget)
        .max_concurrency(args.max_concurrency)
        .scan(args.scan)
        .sandbox(args.sandbox.into());
    // Without the scanner there is no gate, and tools with script arguments are refused (unless
    // the scan is off).
    #[cfg(feature = "safety")]
    if args.scan == ScanMode::On {
        let gate = crate::safety::ScannerGate::with_default_policy()?;
        config = config.script_gate(Arc::new(gate));
    }
    match args.approve {
        ApproveMode::Deny => {}
        ApproveMode::Allow => config = config.approver(Arc::new(FixedApprover::allow())),
        ApproveMode::Prompt => config = config.approver(Arc::new(TtyApprover::default())),
    }
    match (&args.audit, &args.audit_key) {
        (Some(path), Some(key)) => {
            let key = crate::audit::AuditKey::from_file(key).map_err(AuditLogError::from)?;
            config = config.keyed_audit_log(path, &key)?;
        }
        (Some(path), None) => {
            let sink = JsonlAuditSink::open(path).map_err(|source| CallCommandError::Audit {
                path: path.clone(),
                source,
            })?;
            config = config.audit(Arc::new(sink));
        }
        (None, _) => {}
    }
    if let Some(dialect) = args.dialect {
        config = config.dialect(dialect);
    }
    config = config.log_sink(stderr_log(args.log_level));
    let executor = Executor::new(registry, config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mode = if args.batch {
        LineMode::Batch
    } else {
        LineMode::Single
    };
    runtime.block_on(serve_lines_with(&executor, input, output, mode, args.reply))
}

/// Tool log messages at `min` and above as stderr lines, `[LEVEL] CALL_ID: MESSAGE`, control
/// characters escaped so a message can neither forge a line nor drive the terminal.
fn stderr_log(min: LogLevel) -> LogSink {
    LogSink::new(min, |m| {
        let _ = io::stderr().lock().write_all(log_line(&m).as_bytes());
    })
}

/// One stderr line for a tool's log message.
fn log_line(m: &LogMessage) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    };
    format!(
        "[{}] {}: {}\n",
        m.level,
        clean(&m.call_id),
        clean(&m.message)
    )
}

/// Longest batch accepted on one line; a longer array is refused as a whole.
pub const MAX_BATCH_CALLS: usize = 256;

/// How `call` reads its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineMode {
    /// One call per line.
    #[default]
    Single,
    /// A line may also hold a JSON array of calls, run as one batch.
    Batch,
}

/// Execute each input line in one session and write its result line.
pub async fn serve_lines(
    executor: &Executor,
    input: impl BufRead,
    output: impl Write,
) -> Result<(), CallCommandError> {
    serve_lines_as(executor, input, output, LineMode::Single).await
}

/// [`serve_lines`], reading batches when `mode` is [`LineMode::Batch`].
pub async fn serve_lines_as(
    executor: &Executor,
    input: impl BufRead,
    output: impl Write,
    mode: LineMode,
) -> Result<(), CallCommandError> {
    serve_lines_with(executor, input, output, mode, None).await
}

/// [`serve_lines_as`], writing each line's results as `reply`'s next message
/// ([`crate::reply`]) when given.
pub async fn serve_lines_with(
    executor: &Executor,
    mut input: impl BufRead,
    mut output: impl Write,
    mode: LineMode,
    reply: Option<Provider>,
) -> Result<(), CallCommandError> {
    let session = executor.new_session();
    let limits = ParseLimits::default();
    let limit = limits.max_bytes;
    let mut line_no: u64 = 0;
    while let Some(line) = read_bounded_line(&mut input, limit)? {
        line_no += 1;
        // Lines are independent calls (a file of test calls, one model turn each): the failures
        // of one never refuse the next.
        session.reset_budget();
        let results: Lined = match line {
            Line::Text(text) if text.trim().is_empty() => Lined::Empty,
            Line::Text(text) => match batch_of(mode, text.trim(), &limits) {
                Some(Ok(calls)) => Lined::Batch(
                    executor
                        .run_batch(&session, calls, BatchOptions::default())
                        .await,
                ),
                Some(Err(err)) => Lined::One(Box::new(
                    executor
                        .execute(&session, Err(err), CallOptions::default())
                        .await,
                )),
                None => Lined::One(Box::new(executor.execute_text(&session, text.trim()).await)),
            },
            Line::TooLong => {
                let err = ParseError::new(format!("the line is longer than {limit} bytes"));
                Lined::One(Box::new(
                    executor
                        .execute(&session, Err(err), CallOptions::default())
                        .await,
                ))
            }
            Line::NotUtf8 => {
                let err = ParseError::new("the line is not valid UTF-8");
                Lined::One(Box::new(
                    executor
                        .execute(&session, Err(err), CallOptions::default())
                        .await,
                ))
            }
        };
        let result_line = match (results, reply) {
            // Not a call: nothing to answer in a provider's shape, and it costs no budget.
            (Lined::Empty, _) => result_json(
                line_no,
                None,
                CallStatus::Refused,
                Some(ReasonCode::MalformedCall),
                Some("empty line".to_owned()),
                None,
            ),
            (Lined::One(r), Some(provider)) => crate::reply::reply(&r, provider),
            (Lined::Batch(rs), Some(provider)) => crate::reply::reply_batch(&rs, provider),
            (Lined::One(r), None) => to_json(line_no, *r),
            (Lined::Batch(rs), None) => Value::Array(
                rs.into_iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let mut v = to_json(line_no, r);
                        v["index"] = json!(i);
                        v
                    })
                    .collect(),
            ),
        };
        let mut bytes = serde_json::to_vec(&result_line).map_err(io::Error::other)?;
        bytes.push(b'\n');
        output.write_all(&bytes)?;
        output.flush()?;
    }
    Ok(())
}

/// What one input line came to.
enum Lined {
    Empty,
    One(Box<CallResult>),
    Batch(Vec<CallResult>),
}

/// In batch mode, a line that is a model turn (a JSON array of calls, an assistant message, a
/// Gemini content or response): each call parsed on its own (`None`: not a turn, served as one
/// call). A line that starts like an array but is not one is a malformed call.
fn batch_of(
    mode: LineMode,
    text: &str,
    limits: &ParseLimits,
) -> Option<Result<Vec<Result<ToolCall, ParseError>>, ParseError>> {
    if mode != LineMode::Batch || !text.starts_with(['[', '{']) {
        return None;
    }
    // The whole line goes through the strict parser (duplicate keys, depth and size limits at
    // every level); a call of an unknown shape or with malformed arguments is refused in its
    // place, under the id its envelope names.
    let limits = ParseLimits {
        max_calls: limits.max_calls.min(MAX_BATCH_CALLS),
        ..limits.clone()
    };
    match parse_turn(text, &limits) {
        Ok(Turn::Calls(calls)) => Some(Ok(calls)),
        Ok(Turn::Call(_)) => None,
        Err(e) => Some(Err(e)),
    }
}

fn to_json(line: u64, r: CallResult) -> Value {
    let content = r.content;
    let error_code = r.error_code;
    let mut v = result_json(line, r.tool, r.status, r.code, r.message, r.output);
    if let Some(e) = error_code {
        v["error_code"] = Value::String(e);
    }
    if !content.is_empty() {
        v["content"] = Value::Array(
            content
                .iter()
                .map(crate::content::Content::to_json)
                .collect(),
        );
    }
    v
}

fn result_json(
    line: u64,
    tool: Option<String>,
    status: CallStatus,
    code: Option<ReasonCode>,
    message: Option<String>,
    output: Option<Value>,
) -> Value {
    json!({
        "line": line,
        "tool": tool,
        "status": status.as_str(),
        "code": code.map(ReasonCode::as_str),
        "message": message,
        "output": output,
    })
}

enum Line {
    Text(String),
    TooLong,
    NotUtf8,
}

/// Read one line (without its `\n`), keeping at most `limit` bytes in memory: the rest of an
/// overlong line is skipped.
fn read_bounded_line(input: &mut impl BufRead, limit: usize) -> io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let mut too_long = false;
    let mut saw_any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        saw_any = true;
        let (part, found_newline) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        if !too_long {
            if buf.len() + part.len() > limit {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        let used = part.len() + usize::from(found_newline);
        input.consume(used);
        if found_newline {
            break;
        }
    }
    if !saw_any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(match String::from_utf8(buf) {
        Ok(s) => Line::Text(s),
        Err(_) => Line::NotUtf8,
    }))
}

/// Asks on the controlling terminal, one question at a time; denies when there is no terminal.
#[derive(Debug, Default)]
struct TtyApprover {
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl Approver for TtyApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            let _turn = self.one_at_a_time.lock().await;
            let request = request.clone();
            tokio::task::spawn_blocking(move || ask_tty(&request))
                .await
                .unwrap_or_else(|_| ApprovalDecision::Deny {
                    reason: "the terminal prompt failed".to_owned(),
                })
        })
    }
}

/// The terminal question for `request`: the tool, why it asks, what the scripts will do, and
/// the arguments with secrets masked.
fn prompt_text(request: &ApprovalRequest, session_choice: &str) -> String {
    let effects = request
        .effects_line()
        .map(|e| format!("\n  it will: {e}"))
        .unwrap_or_default();
    format!(
        "approve `{}` ({})?{effects}\n  arguments: {}\n[y] yes once{session_choice}, anything else \
         denies: ",
        request.tool,
        request.reason,
        request.args_shown().replace('\n', "\n  ")
    )
}

fn ask_tty(request: &ApprovalRequest) -> ApprovalDecision {
    let deny = |reason: &str| ApprovalDecision::Deny {
        reason: reason.to_owned(),
    };
    let Ok(tty) = OpenOptions::new().read(true).open("/dev/tty") else {
        return deny("no terminal to ask for approval");
    };
    let session_choice = if request.session_grant_allowed {
        ", [s] yes for this session"
    } else {
        ""
    };
    let mut err = io::stderr().lock();
    let _ = write!(err, "{}", prompt_text(request, session_choice));
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    if io::BufReader::new(tty).read_line(&mut answer).is_err() {
        return deny("the terminal could not be read");
    }
    match answer.trim() {
        "y" | "yes" => ApprovalDecision::Approve,
        "s" if request.session_grant_allowed => ApprovalDecision::ApproveForSession,
        _ => deny("denied at the terminal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalReason;
    use crate::decl::Risk;

    #[test]
    fn the_terminal_question_masks_secrets_in_the_arguments() {
        let args = json!({
            "script": "export GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123\ncurl -H 'Authorization: Bearer hunter2hunter2' https://example.com/x",
            "api_key": "plainsecretvalue",
            "path": "notes/today.md"
        });
        let request = ApprovalRequest {
            session_id: "s".into(),
            call_id: "1".into(),
            tool: "run".into(),
            risk: Risk::Dangerous,
            args: args.clone(),
            reason: ApprovalReason::Risk {
                risk: Risk::Dangerous,
            },
            session_grant_allowed: false,
            round: 0,
            effects: vec!["fetches https://example.com/x".into()],
        };
        let text = prompt_text(&request, "");
        for secret in [
            "ghp_0123456789abcdefABCDEF0123",
            "hunter2hunter2",
            "plainsecretvalue",
        ] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
        }
        assert!(text.contains("<redacted>"), "{text}");
        assert!(text.contains("notes/today.md"), "{text}");
        assert!(
            text.contains("it will: fetches https://example.com/x"),
            "{text}"
        );
        // The approver still decides on the exact call.
        assert_eq!(request.args, args);
    }

    #[test]
    fn a_log_line_cannot_forge_lines_or_drive_the_terminal() {
        let m = LogMessage {
            call_id: "c1".into(),
            level: LogLevel::Warning,
            message: "disk low\n[error] c2: forged\u{1b}[2J".into(),
        };
        assert_eq!(
            log_line(&m),
            "[warning] c1: disk low\\n[error] c2: forged\\u{1b}[2J\n"
        );
    }

    fn lines(input: &[u8], limit: usize) -> Vec<String> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(l) = read_bounded_line(&mut r, limit).expect("read") {
            out.push(match l {
                Line::Text(t) => t,
                Line::TooLong => "<long>".into(),
                Line::NotUtf8 => "<bytes>".into(),
            });
        }
        out
    }

    #[test]
    fn lines_are_bounded_and_counted() {
        assert_eq!(lines(b"ab\n\ncd", 10), vec!["ab", "", "cd"]);
        assert_eq!(lines(b"abcdefghijkl\nx\r\n", 5), vec!["<long>", "x"]);
        assert_eq!(lines(b"\xff\n", 5), vec!["<bytes>"]);
        assert!(lines(b"", 5).is_empty());
    }
}
