//! JSON Schema: compiling validators, validating arguments, canonical bytes, provider exports.

use serde_json::{Map, Value};

pub mod export;

/// Compile a Draft 2020-12 validator. Remote `$ref` retrieval is compiled out; local `#/...`
/// references work. No type coercion: `"42"` is not `42`.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// One schema violation: where (JSON pointer into the arguments) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`""` for the root).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            self.path.as_str()
        };
        write!(f, "at `{path}`: {}", self.message)
    }
}

/// Validate `args` and list every violation (empty when valid), in a stable order.
pub fn violations(validator: &jsonschema::Validator, args: &Value) -> Vec<Violation> {
    let mut out: Vec<Violation> = validator
        .iter_errors(args)
        .map(|e| Violation {
            path: e.instance_path().to_string(),
            message: e.to_string(),
        })
        .collect();
    out.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    out.dedup();
    out
}

/// Rebuild a JSON value with every object's keys sorted.
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Canonical bytes: keys sorted at every level, two-space indent, one trailing newline.
pub fn canonical_bytes(v: &Value) -> Vec<u8> {
    canonical_bytes_of(&SortedKeys(v))
}

/// [`canonical_bytes`] of anything that serializes its object keys in sorted order (a
/// [`SortedKeys`] view, or a hand-written impl that emits its fields sorted), so a document can
/// be written from borrowed parts without first being copied into one `Value`.
pub(crate) fn canonical_bytes_of<T: serde::Serialize>(v: &T) -> Vec<u8> {
    // Serializing to a `Vec` cannot fail for these: every key is a string.
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Serializes a value as [`sorted`] would rebuild it, without copying it first.
pub(crate) struct SortedKeys<'a>(pub(crate) &'a Value);

impl serde::Serialize for SortedKeys<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &SortedKeys(v))?;
                }
                map.end()
            }
            Value::Array(a) => s.collect_seq(a.iter().map(SortedKeys)),
            other => other.serialize(s),
        }
    }
}

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
