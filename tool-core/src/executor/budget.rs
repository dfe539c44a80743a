//! Step `budget`: a session whose error budget is spent takes no more calls.
//!
//! Every result other than `ok` counts as a failure, refusals included (a model that keeps
//! sending calls that cannot run is stuck as surely as one whose tools keep failing), except
//! `cancelled` (the caller's decision, not the model's) and the budget refusal itself. A success
//! resets the count (see [`outcome`](super::outcome)). When the count reaches the budget, calls are
//! refused with `error_budget_exhausted` until [`Session::reset_budget`].

use super::engine::Executor;
use super::session::Session;
use super::state::Stop;
use crate::reason::ReasonCode;
use crate::status::Step;

/// Refuse the call when the session's error budget is spent.
#[inline]
pub(super) fn check(executor: &Executor, session: &Session) -> Result<(), Stop> {
    let budget = executor.config.error_budget;
    if budget > 0 && session.consecutive_failures() >= budget {
        return Err(Stop::new(
            Step::Budget,
            ReasonCode::ErrorBudgetExhausted,
            format!(
                "{budget} consecutive calls failed in this session; no more calls run until the \
                 error budget is reset"
            ),
        ));
    }
    Ok(())
}
