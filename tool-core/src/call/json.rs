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

use super::{quoted, ParseError, ParseLimits};

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
    };
    let value = ValueSeed { st: &mut state }
        .deserialize(&mut de)
        .map_err(|e| ParseError::new(format!("invalid JSON: {e}")))?;
    de.end()
        .map_err(|e| ParseError::new(format!("invalid JSON: {e}")))?;
    Ok(value)
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
            self.st.path.push(Seg::Index(items.len()));
            let item = seq.next_element_seed(ValueSeed { st: &mut *self.st });
            self.st.path.pop();
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
            if obj.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key {} in the object at {}",
                    quoted(&key),
                    self.st.path()
                )));
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
