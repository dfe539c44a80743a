//! Step `filters`: caller-supplied argument transforms, then the trusted overrides and defaults
//! of the configuration. The checks after this step judge the final arguments.

use serde_json::Value;

use super::state::{CallState, StepContext, Stop};
use crate::reason::ReasonCode;
use crate::status::Step;

/// Run the filters (a refusal is `invalid_arguments`), then merge overrides and defaults.
#[inline]
pub(super) fn apply(cx: &StepContext<'_>, call: &mut CallState<'_>) -> Result<(), Stop> {
    let config = &cx.executor.config;
    let decl = call.tool.decl();
    // The arguments are an object from the parser on; the schema refuses anything else.
    let Value::Object(args) = &mut call.args else {
        return Ok(());
    };
    for f in &config.filters {
        if let Err(reason) = f(decl, args) {
            return Err(Stop::new(
                Step::Filters,
                ReasonCode::InvalidArguments,
                reason,
            ));
        }
    }
    for rule in config.overrides.iter().filter(|r| r.applies(decl)) {
        args.insert(rule.key.clone(), rule.value.clone());
    }
    for rule in config.defaults.iter().filter(|r| r.applies(decl)) {
        args.entry(rule.key.clone())
            .or_insert_with(|| rule.value.clone());
    }
    // A dynamic tool's handler reads the JSON itself: it receives what its schema states, as a
    // `#[tool]`'s adapter does. A top-level property's `default` fills it when the call leaves it
    // out, and an integral number (`1.0`, `1e2`), which `integer` accepts, arrives as an integer.
    if call.tool.def().is_dynamic() {
        if let Some(Value::Object(props)) = decl.input_schema.get("properties") {
            for (name, prop) in props {
                if let Some(default) = prop.get("default") {
                    args.entry(name.clone()).or_insert_with(|| default.clone());
                }
            }
        }
        for value in args.values_mut() {
            crate::schema::integers::integral_numbers_as_integers(value);
        }
    }
    Ok(())
}
