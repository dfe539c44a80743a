//! Step `permissions`: the tool's own hard rule, if it has one (`permission_denied`). A rule that
//! panics denies.

use std::panic::AssertUnwindSafe;

use super::state::{CallState, StepContext, Stop};
use crate::reason::ReasonCode;
use crate::status::Step;

/// Ask the tool's permission check about the final arguments.
#[inline]
pub(super) fn check(_cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    let Some(check) = call.tool.def().permission_check() else {
        return Ok(());
    };
    let args = &call.args;
    let verdict = std::panic::catch_unwind(AssertUnwindSafe(|| check(args)))
        .unwrap_or_else(|_| Err("the permission check failed".to_owned()));
    verdict.map_err(|reason| Stop::new(Step::Permissions, ReasonCode::PermissionDenied, reason))
}
