//! JSON Schema: compiling validators and validating arguments ([`compile`], [`violations`]),
//! canonical bytes ([`canonical_bytes`]), provider exports ([`export`]).

pub(crate) mod assembled;
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

    /// The hand-written writer against serde_json's pretty printer of the sorted copy: escapes
    /// (every control character, quotes, backslashes, non-ASCII), empty and nested containers,
    /// numbers of each kind, and nesting deeper than one slice of indentation.
    #[test]
    fn canonical_bytes_are_serde_jsons_pretty_bytes() {
        let controls: String = (0u8..0x20).map(char::from).collect();
        let mut deep = json!({"leaf": [1, {}]});
        for i in 0..40 {
            deep = json!({format!("k{i}"): [deep, []], "a": {}});
        }
        let v = json!({
            "s": format!("{controls}\"\\/\u{7f}é😀 end"),
            "keys": {"b": 1, "a": -2, "\u{1}k\"": 1.5e300, "": 0.1, "z": u64::MAX, "n": i64::MIN},
            "empty": [{}, [], [[]], {"x": {}}],
            "scalars": [null, true, false, 0, -0.0, 1e-7],
            "deep": deep,
            // Keys alike in their first bytes, and objects past the size sorted on the stack.
            "prefixes": {"ab": 1, "a": 2, "abc": 3, "b\u{e9}": 4, "B": 5, "b": 6, "aa": 7, "\u{e9}": 8},
            "eight": (0..8).map(|i| (format!("k{}", 7 - i), json!(i))).collect::<serde_json::Map<_, _>>(),
            "nine": (0..9).map(|i| (format!("k{}", 8 - i), json!(i))).collect::<serde_json::Map<_, _>>(),
            "forty": (0..40).map(|i| (format!("{}", (i * 7) % 40), json!(i))).collect::<serde_json::Map<_, _>>(),
        });
        let mut expected = serde_json::to_vec_pretty(&sorted(&v)).expect("serializes");
        expected.push(b'\n');
        assert_eq!(
            String::from_utf8(canonical_bytes(&v)).expect("utf8"),
            String::from_utf8(expected).expect("utf8")
        );
        // Each escaped byte at each place of strings across the eight-byte words.
        for len in 0..20 {
            for at in 0..len {
                for c in ['"', '\\', '\n', '\u{1f}', '\u{0}', 'é'] {
                    let mut text: Vec<char> = "abcdefghijklmnopqrstu".chars().take(len).collect();
                    text[at] = c;
                    let v = serde_json::Value::String(text.into_iter().collect());
                    let mut expected = serde_json::to_vec_pretty(&v).expect("serializes");
                    expected.push(b'\n');
                    assert_eq!(canonical_bytes(&v), expected, "{v}");
                }
            }
        }
        for v in [json!({}), json!([]), json!("x"), json!(null)] {
            let mut expected = serde_json::to_vec_pretty(&v).expect("serializes");
            expected.push(b'\n');
            assert_eq!(canonical_bytes(&v), expected, "{v}");
        }
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
