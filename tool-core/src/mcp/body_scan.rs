//! One pass over an incoming JSON-RPC message for [`super::http_guard`]: it checks that the body
//! is JSON with no key twice in any object, and keeps only what the checks read (the `id`, the
//! `method`, and the kind of `params.arguments`) instead of building the whole document. A body
//! it refuses is read again by the slower checks, which tell a parse error from a duplicate key
//! and say where the duplicate is.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// What the checks read of a message that is JSON and has no duplicate key.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Scanned {
    /// The top-level `id` (`Null` when absent or when the message is not an object).
    pub(super) id: Value,
    /// The top-level `method`, when it is a string.
    pub(super) method: Option<String>,
    /// The kind of `params.arguments`, when `params` is an object that has it.
    pub(super) arguments: Option<Kind>,
}

/// The kind of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// Scan `bytes`; `Err` when it is not one JSON document or an object in it has a key twice.
pub(super) fn scan(bytes: &[u8]) -> Result<Scanned, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut found = Scanned::default();
    Walk {
        at: At::Message,
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

/// Where in the message a value is: only these places are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Message,
    Method,
    Params,
    Arguments,
    Elsewhere,
}

/// Visits a value at `at`, checking every object in it for duplicate keys; returns its kind.
struct Walk<'a> {
    at: At,
    found: &'a mut Scanned,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = Kind;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Bool)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
        if self.at == At::Method {
            self.found.method = Some(v.to_owned());
        }
        Ok(Kind::String)
    }
    fn visit_string<E>(self, v: String) -> Result<Kind, E> {
        if self.at == At::Method {
            self.found.method = Some(v);
        }
        Ok(Kind::String)
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq
            .next_element_seed(Walk {
                at: At::Elsewhere,
                found: &mut *self.found,
            })?
            .is_some()
        {}
        Ok(Kind::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut keys = Keys::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let at = match (self.at, &*key) {
                (At::Message, "id") => None,
                (At::Message, "method") => Some(At::Method),
                (At::Message, "params") => Some(At::Params),
                (At::Params, "arguments") => Some(At::Arguments),
                _ => Some(At::Elsewhere),
            };
            keys.insert(key)?;
            let Some(at) = at else {
                self.found.id = map.next_value_seed(Unique)?;
                continue;
            };
            let kind = map.next_value_seed(Walk {
                at,
                found: &mut *self.found,
            })?;
            if at == At::Arguments {
                self.found.arguments = Some(kind);
            }
        }
        Ok(Kind::Object)
    }
}

/// The keys of one object so far. Most objects have a few keys, compared in a list; a large
/// one gets a set, so a body of many keys is not quadratic.
#[derive(Default)]
struct Keys<'de> {
    list: Vec<Cow<'de, str>>,
    set: HashSet<Cow<'de, str>>,
}

/// Keys compared in the list before they move to the set.
const LISTED_KEYS: usize = 16;

impl<'de> Keys<'de> {
    /// Add `key`; `Err` when the object already has it.
    fn insert<E: de::Error>(&mut self, key: Cow<'de, str>) -> Result<(), E> {
        let new = if self.set.is_empty() && self.list.len() < LISTED_KEYS {
            let new = !self.list.contains(&key);
            self.list.push(key);
            new
        } else {
            self.set.extend(self.list.drain(..));
            self.set.insert(key)
        };
        match new {
            true => Ok(()),
            false => Err(E::custom("duplicate key")),
        }
    }
}

/// An object key, borrowed from the body when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// Builds a [`Value`] as serde_json's own visitor does (for the `id`), refusing a key an object
/// already has.
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Unique)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Unique)?;
            if object.insert(key, value).is_some() {
                return Err(de::Error::custom("duplicate key"));
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the checks read, from the whole document (the reference the scan must agree with).
    fn reference(bytes: &[u8]) -> Scanned {
        let v: Value = serde_json::from_slice(bytes).expect("JSON");
        let kind = |v: &Value| match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        };
        Scanned {
            id: v.get("id").cloned().unwrap_or(Value::Null),
            method: v.get("method").and_then(Value::as_str).map(str::to_owned),
            arguments: v.get("params").and_then(|p| p.get("arguments")).map(kind),
        }
    }

    #[test]
    fn the_scan_reads_what_the_whole_document_says() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[{"b":1},{"b":-2.5e3}]}}}"#[..],
            br#"{"params":{"arguments":[1]},"method":"tools/call","id":"x"}"#,
            br#"{"id":{"deep":[1,{"x":null}]},"method":"tools/\u0063all","params":{"arguments":"s"}}"#,
            br#"{"id":null,"method":7,"params":{"arguments":3}}"#,
            br#"{"method":{"method":"tools/call"},"params":[{"arguments":1}]}"#,
            br#"{"method":"tools/call","params":{"x":{"arguments":1},"arguments":true}}"#,
            br#"{"method":"tools/call","params":{"arguments":null},"id":18446744073709551615}"#,
            br#"{"method":"tools/call","params":"p","id":-0.5}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 0.1, [], {}]"#,
            br#" "x" "#,
            b"null",
        ] {
            let text = String::from_utf8_lossy(body);
            assert_eq!(scan(body).expect(&text), reference(body), "{text}");
        }
    }

    #[test]
    fn a_key_twice_is_refused_at_any_depth_and_size() {
        let many = (0..40)
            .map(|i| format!(r#""k{i}":{i}"#))
            .collect::<Vec<_>>();
        let last_twice = format!(r#"{{"params":{{{},"k3":0}}}}"#, many.join(","));
        let all_once = format!(r#"{{"params":{{{}}}}}"#, many.join(","));
        for body in [
            &br#"{"id":1,"id":2,"method":"ping"}"#[..],
            br#"{"method":"a","method":"b"}"#,
            br#"{"params":{"arguments":{},"arguments":{}}}"#,
            br#"{"params":{"arguments":{"a":{"b":1,"b":2}}}}"#,
            br#"{"id":{"a":1,"a":1}}"#,
            br#"[{"a":1},{"a":1,"a":1}]"#,
            br#"{"a":1,"\u0061":2}"#,
            br#"{"method":{"x":1,"x":1}}"#,
            last_twice.as_bytes(),
        ] {
            let text = String::from_utf8_lossy(body);
            assert!(scan(body).is_err(), "{text}");
        }
        assert!(scan(all_once.as_bytes()).is_ok());
    }

    #[test]
    fn what_is_not_one_json_document_is_refused() {
        for body in [
            &br#"{"id":1"#[..],
            br#"{"id":1} trailing"#,
            br#"{"id":1} {"id":2}"#,
            b"",
            br#"{"a":nul}"#,
        ] {
            assert!(scan(body).is_err(), "{}", String::from_utf8_lossy(body));
        }
        assert_eq!(scan(br#" {"id":[1]} "#).expect("JSON").id, json!([1]));
    }
}
