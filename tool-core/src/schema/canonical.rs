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
    let mut w = Pretty::with_capacity(256);
    w.value(v);
    w.finish()
}

/// A writer of canonical JSON: what `serde_json::to_vec_pretty` writes for the [`sorted`] copy,
/// byte for byte (two-space indent, `": "` after a key, `{}`/`[]` when empty, the same string
/// escapes), written straight into one buffer from borrowed parts.
pub(crate) struct Pretty {
    out: Vec<u8>,
    depth: usize,
}

/// Indentation, written a slice at a time.
const SPACES: &[u8; 64] = &[b' '; 64];

impl Pretty {
    /// A writer whose buffer starts with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Pretty {
            out: Vec::with_capacity(capacity),
            depth: 0,
        }
    }

    /// The bytes written, with the trailing newline.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.out.push(b'\n');
        self.out
    }

    /// Any JSON value, object keys sorted at every level.
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.out.extend_from_slice(b"null"),
            Value::Bool(true) => self.out.extend_from_slice(b"true"),
            Value::Bool(false) => self.out.extend_from_slice(b"false"),
            // serde_json's own number formatting; writing to a `Vec` cannot fail.
            Value::Number(n) => {
                let _ = serde_json::to_writer(&mut self.out, n);
            }
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.open(b'[');
                for (i, item) in items.iter().enumerate() {
                    self.item(i == 0);
                    self.value(item);
                }
                self.close(b']', !items.is_empty());
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                self.open(b'{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    self.key(i == 0, k);
                    self.value(v);
                }
                self.close(b'}', !entries.is_empty());
            }
        }
    }

    /// `{` or `[`: one level deeper.
    pub(crate) fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        self.depth += 1;
    }

    /// `}` or `]`, on its own line when anything was written inside.
    pub(crate) fn close(&mut self, bracket: u8, any: bool) {
        self.depth -= 1;
        if any {
            self.newline();
        }
        self.out.push(bracket);
    }

    /// Before an array item (`first`: the array's first).
    pub(crate) fn item(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
        self.newline();
    }

    /// An object key and its `": "` (`first`: the object's first).
    pub(crate) fn key(&mut self, first: bool, key: &str) {
        self.item(first);
        self.string(key);
        self.out.extend_from_slice(b": ");
    }

    /// A whole number.
    pub(crate) fn u64(&mut self, n: u64) {
        self.out.extend_from_slice(n.to_string().as_bytes());
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, b: bool) {
        self.out
            .extend_from_slice(if b { b"true" as &[u8] } else { b"false" });
    }

    /// An array of strings.
    pub(crate) fn strings(&mut self, items: &[String]) {
        self.open(b'[');
        for (i, s) in items.iter().enumerate() {
            self.item(i == 0);
            self.string(s);
        }
        self.close(b']', !items.is_empty());
    }

    fn newline(&mut self) {
        self.out.push(b'\n');
        let mut left = self.depth * 2;
        while left > 0 {
            let n = left.min(SPACES.len());
            self.out.extend_from_slice(&SPACES[..n]);
            left -= n;
        }
    }

    /// A string with serde_json's escapes: `\"`, `\\`, the short forms of backspace, tab,
    /// newline, form feed and carriage return, `\u00xx` for the other control characters;
    /// everything else as it is.
    pub(crate) fn string(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes = s.as_bytes();
        self.out.push(b'"');
        let mut start = 0;
        loop {
            let i = plain_until(bytes, start);
            self.out.extend_from_slice(&bytes[start..i]);
            let Some(&b) = bytes.get(i) else { break };
            start = i + 1;
            let short = match b {
                b'"' => b'"',
                b'\\' => b'\\',
                0x08 => b'b',
                0x09 => b't',
                0x0A => b'n',
                0x0C => b'f',
                0x0D => b'r',
                _ => b'u',
            };
            if short == b'u' {
                self.out.extend_from_slice(b"\\u00");
                self.out.push(HEX[usize::from(b >> 4)]);
                self.out.push(HEX[usize::from(b & 0xF)]);
            } else {
                self.out.push(b'\\');
                self.out.push(short);
            }
        }
        self.out.push(b'"');
    }
}

/// Whether `b` is written escaped in a JSON string.
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The first index from `from` on whose byte is escaped (`bytes.len()` if none), eight bytes
/// at a time: a word with none of them passes in a few instructions. The word tests may flag a
/// word that has none (never miss one that has); the byte loop then decides.
fn plain_until(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        let quote = zero_byte(x ^ (ONES * u64::from(b'"')));
        let backslash = zero_byte(x ^ (ONES * u64::from(b'\\')));
        if control | quote | backslash != 0 {
            if let Some(j) = chunk.iter().position(|&b| escaped(b)) {
                return i + j;
            }
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| escaped(b))
        .map_or(bytes.len(), |j| i + j)
}
