//! Batches: the calls of one model turn, run as one unit.
//!
//! The calls are partitioned in order into groups: a run of consecutive calls to
//! `concurrency_safe` tools is one group, every other call (including one that did not parse or
//! names an unknown tool) is a group of its own. Groups run one after the other; inside a group,
//! every call is first taken through lookup, validation, guards, the safety gate and approval, in
//! call order, and only then do the approved calls start, at most
//! [`ExecutorConfig::max_concurrency`](super::ExecutorConfig::max_concurrency) at a time. A refused
//! call does not stop the others.
//!
//! After a group, its context modifiers are merged into the session in call order, so the next
//! group sees them and every call of one group sees the same state. Two calls of one concurrent
//! group whose modifiers touch the same key conflict: neither modifier is applied and both calls
//! fail with `modifier_conflict` (their modifiers are returned in the results, unapplied).
//!
//! The error budget is checked as each call is prepared; the calls of a concurrent group count
//! against it when the group has finished.
//!
//! Cancelling the batch (through [`BatchOptions::cancellation`] or
//! [`Session::cancel_all`]) cancels the calls running (`failed` / `cancelled`) and refuses the
//! calls not yet started (`refused` / `cancelled`); every call still gets its result.

use std::collections::BTreeMap;
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::engine::Executor;
use super::options::{CallInput, CallOptions};
use super::outcome::{self, Finished};
use super::parse;
use super::pipeline::{admit, prepare};
use super::result::CallResult;
use super::run;
use super::session::Session;
use super::state::{call_span, CallState, Record, RunEnv, StepContext, Stop, Verdict};
use crate::call::{ParseError, ToolCall};
use crate::context::{ContextModifier, LogSink, ProgressSink};
use crate::reason::ReasonCode;
use crate::status::Step;

/// How one batch runs: who may stop it and where its progress reports go.
#[derive(Clone, Default)]
pub struct BatchOptions {
    cancel: Option<CancellationToken>,
    progress: Option<ProgressSink>,
    log: Option<LogSink>,
}

impl std::fmt::Debug for BatchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchOptions")
            .field("cancel", &self.cancel)
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.as_ref().map(LogSink::min_level))
            .finish()
    }
}

impl BatchOptions {
    /// No caller token, no progress sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancelling `token` stops the batch: running calls are cancelled, the rest never start.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Every call's progress reports go here (each names its call id), in the order each tool
    /// makes them.
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Every call's log messages at the sink's level and above go here (each names its call
    /// id), instead of the configured sink.
    pub fn log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }
}

/// One call of a batch on its way through the steps.
struct Slot<'r> {
    tool: Option<String>,
    call_id: String,
    call_id_given: bool,
    start: Instant,
    span: tracing::Span,
    parsed: Option<Result<ToolCall, ParseError>>,
    /// The call once looked up; it runs when it has no verdict after the checks.
    state: Option<CallState<'r>>,
    verdict: Option<Verdict>,
    /// The modifier held back by a conflict, returned unapplied in the result.
    held: Option<ContextModifier>,
}

impl Executor {
    /// Run one model turn's calls as a batch (consecutive concurrency-safe calls run together, every other
    /// call alone, results in call order): each call is text, a
    /// parsed [`ToolCall`] or a parse result (see [`CallInput`]); a parse error is a
    /// `malformed_call` refusal in its place, audited and counted like any other, and does not
    /// stop the other calls. The results come back in call order, one per call.
    /// [`BatchOptions::default()`] sets no cancellation token and no progress sink.
    pub async fn run_batch<'a, I>(
        &self,
        session: &Session,
        calls: Vec<I>,
        options: BatchOptions,
    ) -> Vec<CallResult>
    where
        I: Into<CallInput<'a>>,
    {
        let parsed = calls
            .into_iter()
            .map(|c| parse::parse(self, c.into()))
            .collect();
        self.run_batch_inner(session, parsed, options).await
    }

    async fn run_batch_inner(
        &self,
        session: &Session,
        calls: Vec<Result<ToolCall, ParseError>>,
        options: BatchOptions,
    ) -> Vec<CallResult> {
        let batch = session.batch_token();
        let env = RunEnv {
            parent: Some(batch.clone()),
            progress: options.progress,
            log: options.log,
        };
        let work = self.run_groups(session, calls, &batch, &env);
        match options.cancel {
            None => work.await,
            Some(caller) => {
                if caller.is_cancelled() {
                    batch.cancel();
                }
                // Forward the caller's cancellation without dropping the work: every call still
                // gets its result.
                let forward = async {
                    caller.cancelled().await;
                    batch.cancel();
                    std::future::pending().await
                };
                tokio::select! {
                    results = work => results,
                    results = forward => results,
                }
            }
        }
    }

    async fn run_groups(
        &self,
        session: &Session,
        calls: Vec<Result<ToolCall, ParseError>>,
        batch: &CancellationToken,
        env: &RunEnv,
    ) -> Vec<CallResult> {
        let mut slots: Vec<Slot<'_>> = calls
            .into_iter()
            .map(|parsed| {
                let (tool, call_id, call_id_given) = self.identify(&parsed, None);
                let span = call_span(session, tool.as_deref(), &call_id);
                Slot {
                    tool,
                    call_id,
                    call_id_given,
                    start: Instant::now(),
                    span,
                    parsed: Some(parsed),
                    state: None,
                    verdict: None,
                    held: None,
                }
            })
            .collect();
        let options = CallOptions::default();
        let mut results = Vec::with_capacity(slots.len());
        for group in self.partition(&slots) {
            let group = &mut slots[group];
            self.prepare_group(session, group, batch, env, &options)
                .await;
            self.run_group(session, group, env, &options).await;
            if group.len() > 1 {
                hold_conflicts(group);
            }
            for slot in group.iter_mut() {
                results.push(self.finish_slot(session, slot));
            }
        }
        results
    }

    /// Split the calls, in order, into groups: runs of consecutive concurrency-safe calls, and
    /// every other call alone.
    fn partition(&self, slots: &[Slot<'_>]) -> Vec<std::ops::Range<usize>> {
        let safe = |slot: &Slot<'_>| match &slot.parsed {
            Some(Ok(call)) => self
                .registry
                .get(&call.name)
                .is_some_and(|t| t.decl().concurrency_safe),
            _ => false,
        };
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut open_safe = false;
        for (i, slot) in slots.iter().enumerate() {
            let is_safe = safe(slot);
            match groups.last_mut() {
                Some(g) if is_safe && open_safe => g.end = i + 1,
                _ => groups.push(i..i + 1),
            }
            open_safe = is_safe;
        }
        groups
    }

    /// Every step before `run` for every call of a group, in call order, before any of them
    /// starts.
    async fn prepare_group<'r>(
        &'r self,
        session: &Session,
        group: &mut [Slot<'r>],
        batch: &CancellationToken,
        env: &RunEnv,
        options: &CallOptions,
    ) {
        for slot in group {
            let Some(parsed) = slot.parsed.take() else {
                continue;
            };
            if batch.is_cancelled() {
                slot.verdict = Some(not_started(Step::Run));
                continue;
            }
            let mut call = match slot.span.in_scope(|| admit(self, session, parsed)) {
                Ok(call) => call,
                Err(stop) => {
                    slot.verdict = Some(Verdict::Refused(stop));
                    continue;
                }
            };
            let cx = StepContext {
                executor: self,
                session,
                call_id: &slot.call_id,
                options,
                env,
            };
            // An approval may wait on a human; cancelling the batch ends the wait.
            let prepared = async {
                tokio::select! {
                    biased;
                    () = batch.cancelled() => Err(not_started_stop(Step::Approve)),
                    r = prepare(&cx, &mut call) => r,
                }
            }
            .instrument(slot.span.clone())
            .await;
            if let Err(stop) = prepared {
                slot.verdict = Some(Verdict::Refused(stop));
            }
            slot.state = Some(call);
        }
    }

    /// Step `run` for the approved calls of a group, at most `max_concurrency` at a time.
    async fn run_group(
        &self,
        session: &Session,
        group: &mut [Slot<'_>],
        env: &RunEnv,
        options: &CallOptions,
    ) {
        let bound = self.config.max_concurrency.max(1);
        futures::stream::iter(
            group
                .iter_mut()
                .filter(|s| s.verdict.is_none() && s.state.is_some()),
        )
        .map(|slot| async move {
            let Some(call) = slot.state.as_mut() else {
                return;
            };
            let cx = StepContext {
                executor: self,
                session,
                call_id: &slot.call_id,
                options,
                env,
            };
            let verdict = run::run(&cx, call).instrument(slot.span.clone()).await;
            slot.verdict = Some(verdict);
        })
        .buffer_unordered(bound)
        .collect::<()>()
        .await;
    }

    /// Step `outcome` for one call: merge its modifier, count, audit, build the result.
    fn finish_slot(&self, session: &Session, slot: &mut Slot<'_>) -> CallResult {
        let verdict = slot.verdict.take().unwrap_or_else(|| {
            // Every slot gets a verdict from prepare or run; refuse rather than trust that.
            Verdict::Refused(Stop::new(
                Step::Run,
                ReasonCode::Cancelled,
                "the call was not run to completion".to_owned(),
            ))
        });
        let record = slot
            .state
            .take()
            .map_or_else(Record::new, |call| call.record);
        let mut result = outcome::finish(
            self,
            session,
            Finished {
                tool: slot.tool.take(),
                call_id: std::mem::take(&mut slot.call_id),
                call_id_given: slot.call_id_given,
                verdict,
                record,
                merge_modifier: true,
                start: slot.start,
                span: &slot.span,
            },
        );
        if let Some(held) = slot.held.take() {
            result.modifier = Some(held);
        }
        result
    }
}

/// The refusal of a call the batch's cancellation reached before it started.
fn not_started_stop(step: Step) -> Stop {
    Stop::new(
        step,
        ReasonCode::Cancelled,
        "the batch was cancelled before this call started".to_owned(),
    )
}

fn not_started(step: Step) -> Verdict {
    Verdict::Refused(not_started_stop(step))
}
/// Turn every successful call of a concurrent group whose modifier shares a key with another's
/// into a `modifier_conflict` failure, holding its modifier back.
fn hold_conflicts(group: &mut [Slot<'_>]) {
    let mut owners: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, slot) in group.iter().enumerate() {
        if let Some(Verdict::Ok {
            modifier: Some(m), ..
        }) = &slot.verdict
        {
            for key in m.keys() {
                owners.entry(key.to_owned()).or_default().push(i);
            }
        }
    }
    // Per conflicting call: the shared keys and the other calls sharing them.
    let mut clashes: BTreeMap<usize, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (key, who) in owners.iter().filter(|(_, who)| who.len() > 1) {
        for &i in who {
            let entry = clashes.entry(i).or_default();
            entry.0.push(key.clone());
            for &j in who.iter().filter(|&&j| j != i) {
                let other = group[j].call_id.clone();
                if !entry.1.contains(&other) {
                    entry.1.push(other);
                }
            }
        }
    }
    for (i, (keys, others)) in clashes {
        let slot = &mut group[i];
        if let Some(Verdict::Ok { modifier, .. }) = slot.verdict.take() {
            slot.held = modifier;
        }
        slot.verdict = Some(Verdict::Failed(Stop::new(
            Step::Outcome,
            ReasonCode::ModifierConflict,
            format!(
                "this call ran, but its context change touches {} which call {} of the same \
                 concurrent group also changes; neither change was applied",
                quote_list(&keys),
                quote_list(&others)
            ),
        )));
    }
}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
