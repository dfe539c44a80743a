//! Sessions: the per-conversation state the executor keeps between calls.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use tokio_util::sync::CancellationToken;

use crate::context::{ContextModifier, SessionState};

/// One conversation with the executor: its error budget, its approval grants, its state and the
/// calls in flight. Create one with [`Executor::new_session`](super::Executor::new_session); share
/// it between concurrent calls of the same conversation.
#[derive(Debug)]
pub struct Session {
    id: Arc<str>,
    inner: Mutex<Inner>,
    state: RwLock<Arc<SessionState>>,
}

#[derive(Debug, Default)]
struct Inner {
    consecutive_failures: u32,
    grants: HashSet<String>,
    cancel_all: CancellationToken,
    in_flight: Vec<(u64, Arc<str>, CancellationToken)>,
    next_seq: u64,
    output_remaining: Option<usize>,
}

/// Removes a call from the in-flight list when the call ends, however it ends.
pub(crate) struct InFlight<'a> {
    session: &'a Session,
    seq: u64,
    pub(crate) token: CancellationToken,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut inner = self.session.lock();
        inner.in_flight.retain(|(s, _, _)| *s != self.seq);
    }
}

impl Session {
    pub(crate) fn new(id: String, output_budget: Option<usize>) -> Self {
        Session {
            id: Arc::from(id),
            inner: Mutex::new(Inner {
                output_remaining: output_budget,
                ..Inner::default()
            }),
            state: RwLock::new(Arc::new(SessionState::new())),
        }
    }

    // A panic while holding the lock cannot leave `Inner` half-updated (every update is a single
    // assignment or push), so a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session id, as seen by tools and the audit log.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session id, shared (for the contexts of its calls).
    pub(crate) fn shared_id(&self) -> Arc<str> {
        Arc::clone(&self.id)
    }

    /// A snapshot of the session state.
    pub fn state(&self) -> Arc<SessionState> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Merge a context modifier into the session state (calls made later see it).
    pub fn apply_modifier(&self, modifier: &ContextModifier) {
        let mut guard = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = (**guard).clone();
        next.apply(modifier);
        *guard = Arc::new(next);
    }

    /// Failures since the last success (or reset).
    pub fn consecutive_failures(&self) -> u32 {
        self.lock().consecutive_failures
    }

    /// Reset the error budget so calls are served again.
    pub fn reset_budget(&self) {
        self.lock().consecutive_failures = 0;
    }

    /// `true` when a session grant covers `tool`.
    pub fn has_grant(&self, tool: &str) -> bool {
        self.lock().grants.contains(tool)
    }

    /// Withdraw every session grant: later calls ask again.
    pub fn revoke_grants(&self) {
        self.lock().grants.clear();
    }

    /// Cancel every call of this session now in flight. Later calls are not affected.
    pub fn cancel_all(&self) {
        let mut inner = self.lock();
        // The batches (whose calls not yet started are then refused too), then every call in
        // flight, batched or not.
        inner.cancel_all.cancel();
        inner.cancel_all = CancellationToken::new();
        for (_, _, token) in &inner.in_flight {
            token.cancel();
        }
    }

    /// Cancel the in-flight calls with this id; returns how many were cancelled.
    pub fn cancel_call(&self, call_id: &str) -> usize {
        let inner = self.lock();
        let mut n = 0;
        for (_, id, token) in &inner.in_flight {
            if **id == *call_id {
                token.cancel();
                n += 1;
            }
        }
        n
    }

    /// Output bytes this session may still return (`None`: no session budget, only per-call caps).
    pub fn output_remaining(&self) -> Option<usize> {
        self.lock().output_remaining
    }

    /// Set (or lift, with `None`) the output bytes this session may still return, e.g. at the
    /// start of a new model turn.
    pub fn set_output_budget(&self, bytes: Option<usize>) {
        self.lock().output_remaining = bytes;
    }

    /// Take up to `wanted` bytes from the output budget; returns how many may be shown.
    pub(crate) fn take_output(&self, wanted: usize) -> usize {
        let mut inner = self.lock();
        match &mut inner.output_remaining {
            None => wanted,
            Some(left) => {
                let granted = wanted.min(*left);
                *left -= granted;
                granted
            }
        }
    }

    /// A token that [`Session::cancel_all`] cancels: the parent of one batch's calls.
    pub(crate) fn batch_token(&self) -> CancellationToken {
        self.lock().cancel_all.child_token()
    }

    pub(crate) fn grant(&self, tool: &str) {
        self.lock().grants.insert(tool.to_owned());
    }

    /// Count a result against the error budget: success resets it, failure adds one.
    pub(crate) fn record(&self, success: bool) {
        let mut inner = self.lock();
        if success {
            inner.consecutive_failures = 0;
        } else {
            inner.consecutive_failures = inner.consecutive_failures.saturating_add(1);
        }
    }

    /// Register a call in flight; its token is a child of `parent` (a batch) when given, else a
    /// token of its own, which [`Session::cancel_all`] cancels through the in-flight list (a child
    /// of the session's cancel-all token would cost a lock and an entry in that token's tree per
    /// call).
    pub(crate) fn begin_call(
        &self,
        call_id: &Arc<str>,
        parent: Option<&CancellationToken>,
    ) -> InFlight<'_> {
        let mut inner = self.lock();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let token = match parent {
            Some(p) => p.child_token(),
            None => CancellationToken::new(),
        };
        inner
            .in_flight
            .push((seq, Arc::clone(call_id), token.clone()));
        drop(inner);
        InFlight {
            session: self,
            seq,
            token,
        }
    }
}
