//! Whether [`Checker::compile`](super::Checker::compile) cannot fail on a schema, decided by one
//! walk that allocates nothing.
//!
//! A registry may then compile a `#[tool]` schema on first use and still refuse at start-up
//! everything a compile would refuse: a schema this walk does not vouch for is compiled at
//! start-up as before. The walk is conservative: it accepts a subset of what compiles (the
//! keywords of the schemas `#[tool]` and schemars write, `$ref` only to a root `$defs` entry),
//! checking for each keyword what the compiler's arm for it checks.

use serde_json::{Map, Value};

use super::tree::TYPES;
use super::vocab::{as_count, entry, ANNOTATIONS, CHECKED_FORMATS};

/// `true` only when `Checker::compile(schema)` succeeds (a `false` says nothing either way).
pub(crate) fn compiles_surely(schema: &Value) -> bool {
    let Value::Object(root) = schema else {
        return false;
    };
    let defs = match root.iter().find(|(k, _)| *k == "$defs") {
        None => None,
        Some((_, Value::Object(defs))) => Some(defs),
        Some(_) => return false,
    };
    // Every entry is compiled, referred to or not. A `$ref` leads only to an entry whose own
    // value has no `$ref` (see `Walk::def_top`), so no chain of them comes back to itself.
    defs.is_none_or(|defs| {
        defs.iter().all(|(name, s)| {
            plain_name(name)
                && Walk {
                    defs: Some(defs),
                    def_top: true,
                }
                .schema(s)
        })
    }) && Walk {
        defs,
        def_top: false,
    }
    .keywords(root, true)
}

/// A `$defs` name that is its own JSON pointer segment and needs no percent-decoding.
fn plain_name(name: &str) -> bool {
    !name.contains(['~', '/', '%'])
}

#[derive(Clone, Copy)]
struct Walk<'a> {
    /// The root's `$defs`.
    defs: Option<&'a Map<String, Value>>,
    /// Applied to the same value as a `$defs` entry (its top or a combinator of it): no `$ref`.
    def_top: bool,
}

impl Walk<'_> {
    fn schema(self, s: &Value) -> bool {
        match s {
            Value::Bool(_) => true,
            Value::Object(map) => self.keywords(map, false),
            _ => false,
        }
    }

    /// The walk of schemas applied to a part of the value: a `$ref` there descends.
    fn parts(self) -> Self {
        Walk {
            def_top: false,
            ..self
        }
    }

    fn part(self, s: &Value) -> bool {
        self.parts().schema(s)
    }

    fn list(self, v: &Value) -> bool {
        matches!(v, Value::Array(a) if !a.is_empty() && a.iter().all(|s| self.schema(s)))
    }

    fn keywords(self, map: &Map<String, Value>, root: bool) -> bool {
        map.iter().all(|(key, value)| match key.as_str() {
            // Only the root's, walked by `compiles_surely`.
            "$defs" => root,
            "definitions" | "$id" | "pattern" => false,
            k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => true,
            "type" => match value {
                Value::String(s) => TYPES.contains(&s.as_str()),
                Value::Array(a) => {
                    !a.is_empty()
                        && a.iter().enumerate().all(|(i, n)| {
                            n.as_str().is_some_and(|n| TYPES.contains(&n)) && !a[..i].contains(n)
                        })
                }
                _ => false,
            },
            "enum" => value.is_array(),
            "const" => true,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
            "multipleOf" => value.as_f64().is_some_and(|m| m > 0.0 && m.is_finite()),
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" => as_count(value).is_some(),
            "format" => value
                .as_str()
                .is_some_and(|f| !CHECKED_FORMATS.contains(&f)),
            "prefixItems" => self.parts().list(value),
            "items" => !value.is_array() && self.part(value),
            "uniqueItems" => value.is_boolean(),
            "properties" => {
                matches!(value, Value::Object(props) if props.values().all(|s| self.part(s)))
            }
            "required" => matches!(value, Value::Array(names) if names
                .iter()
                .enumerate()
                .all(|(i, n)| n.is_string() && !names[..i].contains(n))),
            "additionalProperties" => self.part(value),
            "allOf" | "anyOf" | "oneOf" => self.list(value),
            "not" => self.schema(value),
            "$ref" => {
                !self.def_top
                    && value
                        .as_str()
                        .and_then(|r| r.strip_prefix("#/$defs/"))
                        .is_some_and(|name| {
                            plain_name(name) && self.defs.and_then(|d| entry(d, name)).is_some()
                        })
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::check::Checker;
    use serde_json::json;

    /// Every schema the walk vouches for compiles; each one here that it refuses is refused for
    /// a reason a compile may have (or one it does not vouch for).
    #[test]
    fn what_the_walk_vouches_for_compiles() {
        let vouched = [
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"p": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "maximum": 4294967295u64}},
                   "required": ["p"], "description": "d", "x-k": 1}),
            json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/S", "description": "x"},
                   "f": {"type": "array", "items": {"$ref": "#/$defs/F"}}},
                   "$defs": {"S": {"oneOf": [{"const": "a", "type": "string"}, {"enum": ["b"]}]},
                             "F": {"type": "object", "properties": {"op": {"$ref": "#/$defs/S"},
                                   "kids": {"type": "array", "items": {"$ref": "#/$defs/F"}}},
                                   "additionalProperties": false, "required": ["op"]}}}),
            json!({"minLength": 2.0, "maxItems": 3, "multipleOf": 0.5, "uniqueItems": true,
                   "prefixItems": [true], "not": {"type": "null"}, "allOf": [{}], "anyOf": [false],
                   "minProperties": 0, "maxProperties": 1, "exclusiveMinimum": 1, "exclusiveMaximum": 2.5,
                   "format": "double", "default": 3, "examples": [], "$schema": "x"}),
            json!({"properties": {"o": {"anyOf": [{"$ref": "#/$defs/F"}, {"type": "null"}]}},
                   "$defs": {"F": {"type": "object"}}}),
        ];
        for s in &vouched {
            assert!(compiles_surely(s), "vouched for: {s}");
            assert!(Checker::compile(s).is_ok(), "compiles: {s}");
        }
        let refused = [
            json!(1),
            json!({"type": "text"}),
            json!({"type": ["null", "null"]}),
            json!({"type": []}),
            json!({"enum": 1}),
            json!({"minimum": "0"}),
            json!({"multipleOf": 0}),
            json!({"minLength": -1}),
            json!({"maxItems": 1.5}),
            json!({"format": "email"}),
            json!({"format": 1}),
            json!({"pattern": "a"}),
            json!({"prefixItems": []}),
            json!({"items": [true]}),
            json!({"uniqueItems": 1}),
            json!({"properties": {"p": 1}}),
            json!({"properties": []}),
            json!({"required": ["a", "a"]}),
            json!({"required": [1]}),
            json!({"additionalProperties": 1}),
            json!({"anyOf": []}),
            json!({"not": 1}),
            json!({"$ref": "#/$defs/missing"}),
            json!({"$ref": "#"}),
            json!({"$ref": "#/$defs/a~1b", "$defs": {"a/b": true}}),
            json!({"$ref": "other.json"}),
            json!({"$defs": 1}),
            json!({"$defs": {"d": {"type": 5}}}),
            json!({"properties": {"p": {"$defs": {}}}}),
            json!({"definitions": {}}),
            json!({"$id": "x"}),
            json!({"unknownKeyword": 1}),
            json!({"$defs": {"d": {"$ref": "#/$defs/d"}}}),
            json!({"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/e"}]}, "e": true}}),
        ];
        for s in &refused {
            assert!(!compiles_surely(s), "not vouched for: {s}");
        }
    }
}
