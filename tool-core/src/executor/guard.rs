//! Step `guard`: every declared path argument (and the path-named fields of dynamic tools)
//! resolved against the workspace by [`PathGuard`](crate::guard::path::PathGuard); one bad path
//! refuses the whole call (`path_outside_workspace`). The handler gets the normalized paths.

use serde_json::Value;

use super::state::{CallState, StepContext, Stop};
use crate::reason::ReasonCode;
use crate::status::Step;

/// Check all the path arguments, then refuse if any is bad.
#[inline]
pub(super) fn check(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    let guard = &cx.executor.guard;
    // A fresh list for this version of the arguments (an approver's edit checks them again).
    call.paths.clear();
    let paths = &mut call.paths;
    let mut bad = Vec::new();
    if let Value::Object(map) = &mut call.args {
        for name in call.tool.def().guarded_path_names() {
            // A call has a few arguments: comparing names costs less than hashing one.
            let arg = if map.len() < SCAN_ARGS {
                map.iter_mut().find(|(k, _)| *k == name).map(|(_, v)| v)
            } else {
                map.get_mut(name)
            };
            match arg {
                None | Some(Value::Null) => {}
                Some(Value::String(raw)) => match guard.check(raw) {
                    Ok(wp) => {
                        match wp.as_path().to_str() {
                            // Reuse the argument's buffer for its normalized form when it fits
                            // (a fresh one costs less than growing it).
                            Some(norm) if norm.len() <= raw.capacity() => {
                                raw.clear();
                                raw.push_str(norm);
                            }
                            Some(norm) => *raw = norm.to_owned(),
                            None => *raw = wp.as_path().to_string_lossy().into_owned(),
                        }
                        // A name listed twice is checked twice but kept once: both checks give
                        // the same path.
                        if !paths.iter().any(|(n, _): &(String, _)| n == name) {
                            paths.push((name.to_owned(), wp));
                        }
                    }
                    Err(e) => bad.push(format!("`{name}`: {e}")),
                },
                Some(_) => {
                    return Err(Stop::new(
                        Step::Guard,
                        ReasonCode::InvalidArguments,
                        format!("path argument `{name}` must be a string"),
                    ))
                }
            }
        }
    }
    if !bad.is_empty() {
        return Err(Stop::new(
            Step::Guard,
            ReasonCode::PathOutsideWorkspace,
            bad.join("; "),
        ));
    }
    Ok(())
}

/// Below this many arguments, a path argument is found by comparing names rather than by hashing.
const SCAN_ARGS: usize = 8;
