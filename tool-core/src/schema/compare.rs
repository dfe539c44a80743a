//! The built-in checker against the general engine, on one schema and one instance: the
//! comparison the differential tests and the fuzz target run.

use serde_json::Value;

use super::validate::{violations, with_fragments, Validator};

/// How the two engines answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    /// The built-in checker does not cover the schema (or the general engine does not compile
    /// it): nothing to compare.
    NotCovered,
    /// Both say the same: whether the instance is valid, and every violation (path, message,
    /// subschema and its fragment).
    Same {
        /// Whether the instance matches.
        valid: bool,
    },
}

/// Compare the engines on `instance` against `schema`; `Err` describes the first difference.
pub fn compare_engines(schema: &Value, instance: &Value) -> Result<Agreement, String> {
    let Ok(builtin) = Validator::builtin(schema) else {
        return Ok(Agreement::NotCovered);
    };
    let Ok(general) = Validator::general(schema) else {
        return Err(format!(
            "the built-in checker compiles a schema the general engine refuses: {schema}"
        ));
    };
    compare_compiled(&builtin, &general, schema, instance)
}

/// [`compare_engines`] with both validators compiled once.
pub fn compare_compiled(
    builtin: &Validator,
    general: &Validator,
    schema: &Value,
    instance: &Value,
) -> Result<Agreement, String> {
    let valid = general.is_valid(instance);
    if builtin.is_valid(instance) != valid {
        return Err(format!(
            "valid: built-in {}, general {valid}\nschema: {schema}\ninstance: {instance}",
            !valid
        ));
    }
    let ours = with_fragments(violations(builtin, instance), schema);
    let theirs = with_fragments(violations(general, instance), schema);
    if ours != theirs {
        return Err(format!(
            "violations differ\nschema: {schema}\ninstance: {instance}\nbuilt-in: {ours:#?}\ngeneral: {theirs:#?}"
        ));
    }
    if valid != theirs.is_empty() {
        return Err(format!(
            "the general engine says valid={valid} with {} violations\ninstance: {instance}",
            theirs.len()
        ));
    }
    Ok(Agreement::Same { valid })
}
