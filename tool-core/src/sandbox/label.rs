//! The labels of what enforced a call, as `&'static str`.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The audit label of a call whose handler never started.
pub(crate) const NOT_RUN: &str = "not_run";
/// The audit label of a handler the kernel did not confine.
pub(crate) const NONE: &str = "none";

/// A label as a `&'static str`: labels come from a handful of combinations (per kernel, class and
/// mode), so each distinct one is leaked once and shared by every call and result after it.
pub(crate) fn intern(label: &str) -> &'static str {
    match label {
        NOT_RUN => return NOT_RUN,
        NONE => return NONE,
        _ => {}
    }
    static LABELS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = LABELS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = set.get(label) {
        return known;
    }
    let leaked: &'static str = Box::leak(label.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}
