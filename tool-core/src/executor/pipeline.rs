//! The steps of one call, in order: [`Executor::execute`] and the lists of steps the batch
//! runs too.
//!
//! ```text
//! budget → parse → lookup                      admit
//! filters → validate → guard → permissions
//!         → script_gate                        check (again after an approver's edit)
//! approve                                      prepare
//! run → outcome
//! ```

use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use super::approve::{self, Approval};
use super::engine::Executor;
use super::options::{CallInput, CallOptions};
use super::outcome::{self, Finished};
use super::result::CallResult;
use super::session::Session;
use super::state::{call_span, CallState, Record, RunEnv, StepContext, Stop, Verdict};
use super::{
    budget, filters, guard, lookup, parse, permissions, run, script_gate, typed, validate,
};
use crate::call::{ParseError, ToolCall};

impl Executor {
    /// Execute one call: text a model wrote, a parsed [`ToolCall`] or a parse result (see
    /// [`CallInput`]), with per-call options ([`CallOptions::default()`] changes nothing). A
    /// context modifier the tool returns is merged into the session state unless
    /// [`CallOptions::merge_modifier`] is `false`.
    pub async fn execute<'a>(
        &self,
        session: &Session,
        input: impl Into<CallInput<'a>>,
        options: CallOptions,
    ) -> CallResult {
        let input = input.into();
        // A `{"tool", "args"}` call to a `#[tool]` whose parameter types check its schema is
        // read straight into them, where nothing else needs its JSON arguments (see `typed`).
        if let CallInput::Text(text) = &input {
            if let Some(ready) = self.typed_call(session, text) {
                return self
                    .execute_one(session, Admitted::Typed(ready), options)
                    .await;
            }
        }
        let parsed = parse::parse(self, input);
        self.execute_one(session, Admitted::Parsed(parsed), options)
            .await
    }

    /// Parse `text` as one call and execute it with the default options:
    /// `execute(session, text, CallOptions::default())`.
    pub async fn execute_text(&self, session: &Session, text: &str) -> CallResult {
        self.execute(session, text, CallOptions::default()).await
    }

    /// One call from its parse (or the typed path's read) to its result: the call's span and
    /// context, its steps, its outcome.
    async fn execute_one(
        &self,
        session: &Session,
        admitted: Admitted<'_>,
        options: CallOptions,
    ) -> CallResult {
        let start = Instant::now();
        let given = options.call_id.as_deref();
        let (tool, call_id, call_id_given) = match &admitted {
            Admitted::Parsed(parsed) => self.identify(parsed, given),
            // The typed path reads no provider id: its envelope is `{"tool", "args"}` only.
            Admitted::Typed(ready) => self.name_call(Some(ready.name().to_owned()), given, None),
        };
        let span = call_span(session, tool.as_deref(), &call_id);
        let env = RunEnv::default();
        let cx = StepContext {
            executor: self,
            session,
            call_id: &call_id,
            options: &options,
            env: &env,
        };
        let (verdict, record) = match admitted {
            Admitted::Parsed(parsed) => steps(&cx, parsed).instrument(span.clone()).await,
            Admitted::Typed(ready) => typed::steps(&cx, ready).instrument(span.clone()).await,
        };
        outcome::finish(
            self,
            session,
            Finished {
                tool,
                call_id,
                call_id_given,
                verdict,
                record,
                merge_modifier: options.merge_modifier,
                start,
                span: &span,
            },
        )
    }

    /// The tool name (when parsed, or named by the envelope of a call that did not parse) and the
    /// call id: the caller's, the provider's (also salvaged from the envelope of a call that did
    /// not parse), or a fresh `call-N`; and whether the id came with the call.
    pub(super) fn identify(
        &self,
        parsed: &Result<ToolCall, ParseError>,
        given: Option<&str>,
    ) -> (Option<String>, String, bool) {
        match parsed {
            Ok(call) => self.name_call(Some(call.name.clone()), given, call.id.as_deref()),
            Err(e) => self.name_call(e.tool.clone(), given, e.call_id.as_deref()),
        }
    }

    /// `tool`, and the call id: `given` (the caller's), else `provided` (the provider's), else a
    /// fresh `call-N`; and whether the id came with the call.
    fn name_call(
        &self,
        tool: Option<String>,
        given: Option<&str>,
        provided: Option<&str>,
    ) -> (Option<String>, String, bool) {
        let id = given.or(provided);
        (tool, self.call_id(id.map(str::to_owned)), id.is_some())
    }
}

/// A call as it enters [`Executor::execute_one`].
enum Admitted<'r> {
    /// Parsed (or not) by the general path.
    Parsed(Result<ToolCall, ParseError>),
    /// Read and guarded by the typed path.
    Typed(typed::Ready<'r>),
}

/// Every step of one call, up to its verdict.
async fn steps(cx: &StepContext<'_>, parsed: Result<ToolCall, ParseError>) -> (Verdict, Record) {
    let mut call = match admit(cx.executor, cx.session, parsed) {
        Ok(call) => call,
        Err(stop) => return (Verdict::Refused(stop), Record::new()),
    };
    let verdict = match prepare(cx, &mut call).await {
        Ok(()) => run::run(cx, &mut call).await,
        Err(stop) => Verdict::Refused(stop),
    };
    (verdict, call.record)
}

/// Steps `budget`, `parse`, `lookup`: whether the call is taken at all.
#[inline]
pub(super) fn admit<'r>(
    executor: &'r Executor,
    session: &Session,
    parsed: Result<ToolCall, ParseError>,
) -> Result<CallState<'r>, Stop> {
    budget::check(executor, session)?;
    let call = parse::accept(parsed)?;
    lookup::find(executor, call)
}

/// The checks, then step `approve`: everything before the handler may start. An approver's edit
/// sends the edited arguments down the checks again.
pub(super) async fn prepare(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    // A tool whose programs cannot be confined is refused before anyone is asked to approve it.
    if let Some(why) = cx.executor.confinement.refusal(call.tool.decl()) {
        return Err(Stop::new(
            crate::status::Step::Run,
            crate::reason::ReasonCode::SandboxUnavailable,
            why,
        ));
    }
    let mut round = 0u32;
    loop {
        check(cx, call)?;
        match approve::decide(cx, call, round).await? {
            Approval::Granted => break,
            Approval::Edited(args) => {
                round += 1;
                call.args = Value::Object(args);
            }
        }
    }
    outcome::hash_args(cx, call);
    Ok(())
}

/// Steps `filters`, `validate`, `guard`, `permissions`, `script_gate` on one version of the
/// arguments.
#[inline]
fn check(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    filters::apply(cx, call)?;
    validate::check(cx, call)?;
    guard::check(cx, call)?;
    permissions::check(cx, call)?;
    script_gate::check(cx, call)
}
