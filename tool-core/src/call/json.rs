//! Strict JSON: serde_json's tokenizer with a checking visitor, behind a linear pre-scan.
//!
//! The pre-scan refuses deep nesting and out-of-range integers without recursing, so a 100 000-deep
//! document costs one pass and no stack. The visitor then builds the `Value` and refuses what
//! serde_json would silently accept: duplicate keys (serde_json keeps the last one) and strings
//! over the length limit. serde_json itself refuses lone surrogates, control characters in
//! strings, trailing text and non-finite numbers.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::types::{quoted, ParseError, ParseLimits};

/// Parse one JSON document under `limits`.
pub(super) fn parse(doc: &str, limits: &ParseLimits) -> Result<Value, ParseError> {
    parse_nested(doc, limits, 0)
}

/// Parse a JSON document that sits `base` levels deep in a call (the arguments string of an
/// OpenAI call sits inside the call object), so depth means the same in every shape.
pub(super) fn parse_nested(
    doc: &str,
    limits: &ParseLimits,
    base: usize,
) -> Result<Value, ParseError> {
    prescan(doc, base, limits.depth())?;
    let mut de = serde_json::Deserializer::from_str(doc);
    let mut state = State {
        path: Vec::new(),
        depth: base,
        max_depth: limits.depth(),
        max_string_len: limits.max_string_len,
        fast: false,
    };
    let value = ValueSeed { st: &mut state }
        .deserialize(&mut de)
        .map_err(|e| ParseError::new(format!("invalid JSON: {e}")))?;
    de.end()
        .map_err(|e| ParseError::new(format!("invalid JSON: {e}")))?;
    Ok(value)
}

/// The `{"tool": NAME, "args": {...}}` call read straight from the document, without building the
/// outer object: the name and the arguments, exactly as the general path would make them from
/// this document. `None` for anything else (another shape, another key, a duplicate, an empty or
/// non-string name, arguments that are not an object, any JSON error or limit, and any
/// non-integer number): the caller then takes the general path, pre-scan included, which
/// refuses with the precise reason.
///
/// No pre-scan is needed here: depth is checked level by level before descending (so recursion
/// stays bounded), and the one thing only the pre-scan sees, an integer too large for 64 bits
/// that serde_json would read as a float, cannot get through because any float gives up.
pub(super) fn tool_args_call(
    doc: &str,
    limits: &ParseLimits,
) -> Option<(String, Map<String, Value>)> {
    let mut de = serde_json::Deserializer::from_str(doc);
    let mut state = State {
        path: Vec::new(),
        depth: 0,
        max_depth: limits.depth(),
        max_string_len: limits.max_string_len,
        fast: true,
    };
    let call = CallSeed { st: &mut state }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(call)
}

/// One pass over the bytes: nesting depth and integer range, outside strings.
fn prescan(doc: &str, base: usize, max_depth: usize) -> Result<(), ParseError> {
    let bytes = doc.as_bytes();
    let mut depth = base;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string; an unterminated one is left for serde_json to report.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += escape_len(bytes, i)?;
                    } else {
                        i += 1;
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return Err(ParseError::new(format!(
                        "nesting deeper than {max_depth} levels at byte {i}"
                    )));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1).max(base),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i + 1 < bytes.len()
                    && matches!(bytes[i + 1], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                check_integer(&doc[start..=i], start)?;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Length of the escape at `at`, refusing a `\\uXXXX` surrogate that is not the high half of a
/// high-low pair (a valid pair is skipped whole). serde_json refuses lone surrogates too, but with
/// a message that does not say so.
fn escape_len(bytes: &[u8], at: usize) -> Result<usize, ParseError> {
    let unit = |i: usize| -> Option<u16> {
        let hex = bytes.get(i..i + 6)?;
        if &hex[..2] != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let lone = || {
        let text = String::from_utf8_lossy(&bytes[at..at + 6]).into_owned();
        ParseError::new(format!("lone surrogate {text} at byte {at}"))
    };
    match unit(at) {
        Some(0xD800..=0xDBFF) => match unit(at + 6) {
            Some(0xDC00..=0xDFFF) => Ok(12),
            _ => Err(lone()),
        },
        Some(0xDC00..=0xDFFF) => Err(lone()),
        _ => Ok(2),
    }
}

/// Refuse an integer token that serde_json would silently turn into a rounded float.
fn check_integer(token: &str, at: usize) -> Result<(), ParseError> {
    let digits = token.strip_prefix('-').unwrap_or(token);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // A float, or malformed: serde_json decides.
        return Ok(());
    }
    let fits = if token.starts_with('-') {
        token.parse::<i64>().is_ok()
    } else {
        token.parse::<u64>().is_ok()
    };
    if fits {
        Ok(())
    } else {
        Err(ParseError::new(format!(
            "integer {} at byte {at} does not fit in 64 bits",
            quoted(token)
        )))
    }
}

/// A step of the JSON path, for messages.
enum Seg {
    Key(String),
    Index(usize),
}

struct State {
    path: Vec<Seg>,
    depth: usize,
    max_depth: usize,
    max_string_len: usize,
    /// Reading for the `{"tool", "args"}` fast path: errors are never shown (so no JSON path is
    /// kept), and floats give up (see [`tool_args_call`]).
    fast: bool,
}

impl State {
    fn path(&self) -> String {
        let mut out = String::from("$");
        for seg in &self.path {
            match seg {
                Seg::Key(k) if is_plain_key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Seg::Key(k) => {
                    out.push('[');
                    out.push_str(&quoted(k));
                    out.push(']');
                }
                Seg::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn check_len<E: de::Error>(&self, what: &str, s: &str) -> Result<(), E> {
        if s.len() > self.max_string_len {
            return Err(E::custom(format!(
                "{what} at {} is {} bytes; the limit is {}",
                self.path(),
                s.len(),
                self.max_string_len
            )));
        }
        Ok(())
    }

    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(E::custom(format!(
                "nesting deeper than {} levels at {}",
                self.max_depth,
                self.path()
            )));
        }
        Ok(())
    }
}

fn is_plain_key(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

struct ValueSeed<'s> {
    st: &'s mut State,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if self.st.fast {
            return Err(not_fast());
        }
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("non-finite number at {}", self.st.path())))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.st.check_len("string", v)?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.st.check_len("string", &v)?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.st.enter()?;
        let mut items = Vec::new();
        loop {
            let item = if self.st.fast {
                seq.next_element_seed(ValueSeed { st: &mut *self.st })
            } else {
                self.st.path.push(Seg::Index(items.len()));
                let item = seq.next_element_seed(ValueSeed { st: &mut *self.st });
                self.st.path.pop();
                item
            };
            match item? {
                Some(v) => items.push(v),
                None => break,
            }
        }
        self.st.depth -= 1;
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.st.enter()?;
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.st.check_len("key", &key)?;
            // A short scan beats hashing for the few keys calls usually have; large objects hash.
            let duplicate = if obj.len() < SCAN_KEYS {
                obj.keys().any(|k| *k == key)
            } else {
                obj.contains_key(&key)
            };
            if duplicate {
                return Err(de::Error::custom(format!(
                    "duplicate key {} in the object at {}",
                    quoted(&key),
                    self.st.path()
                )));
            }
            if self.st.fast {
                let value = map.next_value_seed(ValueSeed { st: &mut *self.st })?;
                obj.insert(key, value);
                continue;
            }
            self.st.path.push(Seg::Key(key));
            let value = map.next_value_seed(ValueSeed { st: &mut *self.st });
            let Some(Seg::Key(key)) = self.st.path.pop() else {
                // The push above is the only one since the call; the pop cannot see anything else.
                return Err(de::Error::custom("internal error: JSON path out of step"));
            };
            obj.insert(key, value?);
        }
        self.st.depth -= 1;
        Ok(Value::Object(obj))
    }
}

/// Below this many keys, a duplicate is looked for by comparing keys rather than by hashing.
const SCAN_KEYS: usize = 8;

/// Reads the outer object of a `{"tool", "args"}` call; any error only means "not this fast
/// path", so its messages are never shown.
struct CallSeed<'s> {
    st: &'s mut State,
}

fn not_fast<E: de::Error>() -> E {
    E::custom("not a plain {\"tool\", \"args\"} call")
}

impl<'de> DeserializeSeed<'de> for CallSeed<'_> {
    type Value = (String, Map<String, Value>);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for CallSeed<'_> {
    type Value = (String, Map<String, Value>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a {\"tool\", \"args\"} call")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        self.st.enter()?;
        // The general path checks key lengths too; both keys are this long.
        if self.st.max_string_len < "tool".len() {
            return Err(not_fast());
        }
        let mut name: Option<String> = None;
        let mut args: Option<Map<String, Value>> = None;
        while let Some(key) = map.next_key_seed(CallKeySeed)? {
            match key {
                CallKey::Tool if name.is_none() => {
                    name = Some(map.next_value_seed(NameSeed {
                        max_len: self.st.max_string_len,
                    })?);
                }
                CallKey::Args if args.is_none() => {
                    match map.next_value_seed(ValueSeed { st: &mut *self.st })? {
                        Value::Object(m) => args = Some(m),
                        _ => return Err(not_fast()),
                    }
                }
                _ => return Err(not_fast()),
            }
        }
        self.st.depth -= 1;
        match (name, args) {
            (Some(name), Some(args)) if !name.is_empty() => Ok((name, args)),
            _ => Err(not_fast()),
        }
    }
}

enum CallKey {
    Tool,
    Args,
    Other,
}

struct CallKeySeed;

impl<'de> DeserializeSeed<'de> for CallKeySeed {
    type Value = CallKey;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<CallKey, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for CallKeySeed {
    type Value = CallKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<CallKey, E> {
        Ok(match v {
            "tool" => CallKey::Tool,
            "args" => CallKey::Args,
            _ => CallKey::Other,
        })
    }
}

/// The tool name: a string within the length limit (the general path's string check).
struct NameSeed {
    max_len: usize,
}

impl<'de> DeserializeSeed<'de> for NameSeed {
    type Value = String;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for NameSeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a tool name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        if v.len() > self.max_len {
            return Err(not_fast());
        }
        Ok(v.to_owned())
    }
}
