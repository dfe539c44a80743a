//! Step `validate`: the arguments against the tool's full JSON Schema (`invalid_arguments`,
//! every violation named by its JSON path).

use super::state::{CallState, StepContext, Stop};
use crate::reason::ReasonCode;
use crate::schema::validate::{violations, with_fragments};
use crate::status::Step;

/// Refuse arguments that do not match the schema.
#[inline]
pub(super) fn check(_cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    let tool = call.tool;
    if tool.validator().is_valid(&call.args) {
        return Ok(());
    }
    let found = with_fragments(
        violations(tool.validator(), &call.args),
        &tool.decl().input_schema,
    );
    let list: Vec<String> = found.iter().map(ToString::to_string).collect();
    let mut stop = Stop::new(
        Step::Validate,
        ReasonCode::InvalidArguments,
        format!(
            "the arguments do not match the schema of `{}`: {}",
            tool.decl().name,
            list.join("; ")
        ),
    );
    stop.violations = found;
    Err(stop)
}
