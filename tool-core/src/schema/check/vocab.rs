//! The words of the schemas the checker reads: which keywords only annotate, which formats it
//! leaves to the general engine, and how a keyword's value is read (shared by the compiler and
//! the walk that vouches for it).

use serde_json::{Map, Value};

/// Keywords that assert nothing about an instance.
pub(super) const ANNOTATIONS: [&str; 11] = [
    "$schema",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Formats the general engine checks; any other `format` is an annotation to it.
pub(super) const CHECKED_FORMATS: [&str; 19] = [
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "iri",
    "iri-reference",
    "json-pointer",
    "regex",
    "relative-json-pointer",
    "time",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// `v` as a count (`minLength`, `maxItems`, ...), if it is one.
pub(super) fn as_count(v: &Value) -> Option<u64> {
    // `2.0` counts as `2`, as the general engine reads it.
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15)
            .map(|f| f as u64)
    })
}

/// `map.get(key)`, found by comparing the keys of a small map in order instead of hashing them.
pub(super) fn entry<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}
