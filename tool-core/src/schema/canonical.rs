//! Canonical JSON bytes: keys sorted at every level (what is pinned and hashed).

use serde_json::{Map, Value};

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
