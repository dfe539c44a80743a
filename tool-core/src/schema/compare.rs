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

#[cfg(test)]
#[cfg(feature = "jsonschema")]
mod tests {
    use super::*;
    use serde_json::json;

    /// Found by the `validator_diff` fuzz target: a closed object without `properties` is
    /// refused by the general engine as the `false` schema refusing its first value, not as
    /// a list of unexpected names; the checker words it the same way.
    #[test]
    fn a_closed_object_without_properties_is_refused_in_the_same_words() {
        let open_lists =
            json!({"oneOf": [false], "additionalProperties": false, "$defs": {"d": false}});
        for (schema, instance) in [
            (open_lists, json!({"a/b": null, "a": null})),
            (
                json!({"additionalProperties": false}),
                json!({"a": 1, "b": 2}),
            ),
            (
                json!({"type": "object", "additionalProperties": false}),
                json!({"b": "x"}),
            ),
            (
                json!({"additionalProperties": false, "properties": {}}),
                json!({"a": 1}),
            ),
            (
                json!({"additionalProperties": false, "properties": {"x": true}}),
                json!({"a": 1, "x": 2}),
            ),
        ] {
            assert_eq!(
                compare_engines(&schema, &instance),
                Ok(Agreement::Same { valid: false }),
                "{schema}"
            );
        }
        let valid = compare_engines(&json!({"additionalProperties": false}), &json!({}));
        assert_eq!(valid, Ok(Agreement::Same { valid: true }));
    }
}
