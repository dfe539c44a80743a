//! What the steps share about one call: its context ([`StepContext`]), its state on the way down
//! ([`CallState`]), what they learned ([`Record`]) and how they end ([`Stop`], [`Verdict`]).

use serde_json::{Map, Value};
use tracing::field::Empty;

use super::engine::Executor;
use super::options::CallOptions;
use super::session::Session;
use crate::approval::ApprovalStatus;
use crate::audit::{AuditId, AuditText};
use crate::context::{ContextModifier, ProgressSink};
use crate::decl::Risk;
use crate::gate::GateAudit;
use crate::guard::path::WorkspacePath;
use crate::reason::ReasonCode;
use crate::registry::typed::TypedRun;
use crate::registry::RegisteredTool;
use crate::schema::validate::Violation;
use crate::status::Step;

/// What every step of one call may read: the executor, the session, the call's id and options,
/// and where a running call belongs.
#[derive(Clone, Copy)]
pub(super) struct StepContext<'a> {
    pub(super) executor: &'a Executor,
    pub(super) session: &'a Session,
    pub(super) call_id: &'a str,
    pub(super) options: &'a CallOptions,
    pub(super) env: &'a RunEnv,
}

/// Where a running call belongs: its batch (whose cancellation stops it) and where its progress
/// reports and log messages go.
#[derive(Default, Clone)]
pub(super) struct RunEnv {
    pub(super) parent: Option<tokio_util::sync::CancellationToken>,
    pub(super) progress: Option<ProgressSink>,
    pub(super) log: Option<crate::context::LogSink>,
}

/// A looked-up call on its way down the steps: each step reads and refines it.
pub(super) struct CallState<'r> {
    /// The tool (step `lookup`).
    pub(super) tool: &'r RegisteredTool,
    /// The arguments, always a JSON object: the model's, then filtered (step `filters`), then
    /// with normalized paths (step `guard`); what the handler receives.
    pub(super) args: Value,
    /// The checked path arguments (step `guard`), given to the handler's context.
    pub(super) paths: Vec<(String, WorkspacePath)>,
    /// The script gate's request for human review: summary and rule ids (step `script_gate`).
    pub(super) review: Option<(String, Vec<String>)>,
    /// What the steps learned, for the result and the audit event.
    pub(super) record: Record,
    /// The handler's run with the arguments read by the tool's typed entry (the typed path);
    /// `args` is then empty.
    pub(super) typed: Option<TypedRun>,
}

impl<'r> CallState<'r> {
    pub(super) fn new(tool: &'r RegisteredTool, args: Map<String, Value>) -> Self {
        let mut record = Record::new();
        record.risk = Some(tool.decl().risk);
        CallState {
            tool,
            args: Value::Object(args),
            paths: Vec::new(),
            review: None,
            record,
            typed: None,
        }
    }

    /// A call the typed path read and guarded.
    pub(super) fn typed(
        tool: &'r RegisteredTool,
        paths: Vec<(String, WorkspacePath)>,
        run: TypedRun,
    ) -> Self {
        let mut call = CallState::new(tool, Map::new());
        call.paths = paths;
        call.typed = Some(run);
        call
    }
}

/// What the steps learned about a call, for the result, the audit event and tracing.
pub(super) struct Record {
    pub(super) risk: Option<Risk>,
    pub(super) approval: ApprovalStatus,
    pub(super) rule_ids: Vec<String>,
    pub(super) safety: Option<GateAudit>,
    pub(super) args_sha256: Option<String>,
    pub(super) truncated: bool,
    /// What enforced the handler (and its programs), once it was started (step `run`).
    pub(super) enforced: Option<&'static str>,
}

impl Record {
    /// Nothing learned yet: the record of a call refused before lookup.
    pub(super) fn new() -> Self {
        Record {
            risk: None,
            approval: ApprovalStatus::NotReached,
            rule_ids: Vec::new(),
            safety: None,
            args_sha256: None,
            truncated: false,
            enforced: None,
        }
    }
}

/// Where and why a call stopped short of `ok`.
pub(super) struct Stop {
    pub(super) step: Step,
    pub(super) code: ReasonCode,
    pub(super) message: String,
    /// The tool's own error code (checked), for a handler's `ToolError`.
    pub(super) error_code: Option<String>,
    /// The schema violations, for `invalid_arguments`.
    pub(super) violations: Vec<Violation>,
}

impl Stop {
    pub(super) fn new(step: Step, code: ReasonCode, message: String) -> Self {
        Stop {
            step,
            code,
            message,
            error_code: None,
            violations: Vec::new(),
        }
    }
}

/// How a call ended, before it is turned into a [`CallResult`](super::CallResult).
pub(super) enum Verdict {
    Ok {
        output: Value,
        content: Vec<crate::content::Content>,
        modifier: Option<ContextModifier>,
    },
    /// The handler never ran.
    Refused(Stop),
    /// The handler ran (or started) and failed.
    Failed(Stop),
}

/// The tracing span of one call; the outcome fields are recorded when it ends.
pub(super) fn call_span(session: &Session, tool: Option<&str>, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        "tool.call",
        session.id = %AuditText(session.id()),
        tool.name = %AuditText(tool.unwrap_or("")),
        tool.call_id = %AuditId(call_id),
        tool.status = Empty,
        tool.code = Empty,
        tool.step = Empty,
        tool.approval = Empty,
        tool.safety.rule_ids = Empty,
    )
}
