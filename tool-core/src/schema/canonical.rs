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

    /// A writer of a value that sits `depth` levels deep in a document (its lines indented to
    /// match), for text copied in there with [`Pretty::raw`].
    pub(crate) fn at_depth(depth: usize, capacity: usize) -> Self {
        Pretty {
            out: Vec::with_capacity(capacity),
            depth,
        }
    }

    /// The text written, without a trailing newline.
    pub(crate) fn into_text(self) -> String {
        // Only `str`s and ASCII are ever written.
        String::from_utf8(self.out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
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
            Value::Object(map) if map.len() <= SMALL => {
                // Sorted on the stack: nearly every object of a schema is this small.
                let mut entries: [(&str, &Value); SMALL] = [("", &NULL); SMALL];
                for (slot, (k, v)) in entries.iter_mut().zip(map) {
                    *slot = (k.as_str(), v);
                }
                let entries = &mut entries[..map.len()];
                insertion_sort(entries);
                self.entries(entries);
            }
            Value::Object(map) => {
                let mut entries: Vec<(&str, &Value)> =
                    map.iter().map(|(k, v)| (k.as_str(), v)).collect();
                entries.sort_unstable_by(|a, b| key_order(a.0, b.0));
                self.entries(&entries);
            }
        }
    }

    /// How deep the next value is written (0 at the top).
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// A value already written canonically for this depth (no trailing newline), copied.
    pub(crate) fn raw(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    /// An object's entries, in the order given.
    fn entries(&mut self, entries: &[(&str, &Value)]) {
        self.open(b'{');
        for (i, (k, v)) in entries.iter().enumerate() {
            self.key(i == 0, k);
            self.value(v);
        }
        self.close(b'}', !entries.is_empty());
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
    pub(crate) fn strings<S: AsRef<str>>(&mut self, items: impl IntoIterator<Item = S>) {
        self.open(b'[');
        let mut any = false;
        for s in items {
            self.item(!any);
            self.string(s.as_ref());
            any = true;
        }
        self.close(b']', any);
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
        let bytes = s.as_bytes();
        if plain(bytes) {
            // Nearly every string: copied whole.
            self.out.reserve(bytes.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(bytes);
            self.out.push(b'"');
        } else {
            self.escaped_string(bytes);
        }
    }

    /// A string with at least one byte to escape (kept out of line: the common path of
    /// [`Pretty::string`] stays short).
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self, bytes: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.push(b'"');
        let mut start = 0;
        loop {
            let i = bytes[start..]
                .iter()
                .position(|&b| escaped(b))
                .map_or(bytes.len(), |j| start + j);
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

/// Objects of at most this many entries are sorted in place on the stack.
const SMALL: usize = 8;

/// The filler of unused stack slots.
static NULL: Value = Value::Null;

/// The order of object keys: by bytes, as `str::cmp`, with the first byte compared inline
/// (it tells most keys of a schema apart).
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// Sort a few entries by key (keys of one object are distinct, so stability is moot).
fn insertion_sort(entries: &mut [(&str, &Value)]) {
    for i in 1..entries.len() {
        let mut j = i;
        while j > 0 && key_order(entries[j - 1].0, entries[j].0).is_gt() {
            entries.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Whether `b` is written escaped in a JSON string.
fn escaped(b: u8) -> bool {
    ESCAPED[usize::from(b)]
}

/// [`escaped`] of each byte: the control characters, `"` and `\\`.
static ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Whether no byte of `bytes` is escaped, eight bytes at a time without a branch per word (a
/// word test may flag a word that has none, never misses one that has; a flagged string is
/// then decided byte by byte). The last word overlaps the one before; a string shorter than a
/// word is read byte by byte.
fn plain(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    let flags = |x: u64| {
        let control = x.wrapping_sub(ONES * 0x20) & !x;
        let quote = zero_byte(x ^ (ONES * u64::from(b'"')));
        let backslash = zero_byte(x ^ (ONES * u64::from(b'\\')));
        (control | quote | backslash) & HIGH
    };
    let word = |chunk: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        u64::from_le_bytes(w)
    };
    if bytes.len() < 8 {
        return !bytes.iter().any(|&b| escaped(b));
    }
    let mut chunks = bytes.chunks_exact(8);
    let mut found = 0;
    for chunk in &mut chunks {
        found |= flags(word(chunk));
    }
    if !chunks.remainder().is_empty() {
        found |= flags(word(&bytes[bytes.len() - 8..]));
    }
    found == 0 || !bytes.iter().any(|&b| escaped(b))
}
