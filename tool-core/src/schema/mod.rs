//! JSON Schema: compiling validators and validating arguments ([`compile`], [`violations`]),
//! canonical bytes ([`canonical_bytes`]), provider exports ([`export`]).

pub(crate) mod canonical;
pub(crate) mod check;
#[cfg(feature = "jsonschema")]
mod compare;
pub mod export;
#[cfg(feature = "jsonschema")]
pub(crate) mod general;
pub(crate) mod integers;
pub(crate) mod validate;
mod violation;

pub use canonical::{canonical_bytes, sorted};
#[cfg(feature = "jsonschema")]
pub use compare::{compare_compiled, compare_engines, Agreement};
pub use validate::{compile, violations, Validator, Violation};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_bytes_sort_keys_at_every_level() {
        let a = canonical_bytes(&json!({"b": 1, "a": {"d": 2, "c": [ {"z": 1, "y": 2} ]}}));
        let b = canonical_bytes(&json!({"a": {"c": [ {"y": 2, "z": 1} ], "d": 2}, "b": 1}));
        assert_eq!(a, b);
        assert!(String::from_utf8(a)
            .expect("utf8")
            .starts_with("{\n  \"a\""));
    }

    #[test]
    fn canonical_bytes_match_the_sorted_copy() {
        let v =
            json!({"z": [{"b": null, "a": 1.5}], "a": {"y": "x", "b": [true, {"d": 1, "c": 2}]}});
        let mut expected = serde_json::to_vec_pretty(&sorted(&v)).expect("serializes");
        expected.push(b'\n');
        assert_eq!(canonical_bytes(&v), expected);
    }

    #[test]
    fn no_coercion_and_paths_are_reported() {
        let v = compile(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "items": {"type": "array", "items": {"type": "boolean"}}},
            "required": ["n"],
            "additionalProperties": false
        }))
        .expect("compiles");
        assert!(violations(&v, &json!({"n": 42})).is_empty());
        let errs = violations(&v, &json!({"n": "42", "items": [true, 1]}));
        let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["/items/1", "/n"]);
    }

    #[test]
    fn external_refs_are_not_fetched() {
        let r = compile(&json!({"$ref": "https://example.com/schema.json"}));
        assert!(r.is_err());
    }
}
