//! Pinning: the tool list committed as `tools.schema.json` (the canonical dump, exact bytes) next
//! to `tools.schema.sha256` (64 lowercase hex digits and a newline, over those bytes).
//!
//! The hash is taken over the bytes on disk, never over a value rebuilt in memory. A program
//! refuses to start when the files are missing or malformed, when the schema file does not hash to
//! the committed hash (someone edited it by hand), or when the registry no longer produces those
//! exact bytes (someone changed a tool without re-pinning); [`Registry::verify_pin`] is the
//! start-up check, [`assert_pinned`] the test helper.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::registry::Registry;

/// File name of the pinned canonical dump.
pub const SCHEMA_FILE: &str = "tools.schema.json";
/// File name of the pinned SHA-256.
pub const HASH_FILE: &str = "tools.schema.sha256";
/// Environment variable that makes [`assert_pinned`] rewrite the files instead of failing.
pub const UPDATE_ENV: &str = "TOOLS_PIN_UPDATE";

/// What changed between the pinned tool list and the registry's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinDiff {
    /// Tools the registry has and the pin does not.
    pub added: Vec<String>,
    /// Tools the pin has and the registry does not.
    pub removed: Vec<String>,
    /// Tools in both whose declarations differ, with the top-level fields that differ.
    pub changed: BTreeMap<String, Vec<String>>,
    /// Differences outside the tool list (`schema_version`, layout of the file).
    pub other: Vec<String>,
}

impl PinDiff {
    /// `true` when nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.other.is_empty()
    }
}

impl fmt::Display for PinDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("added: {}", self.added.join(", ")));
        }
        if !self.removed.is_empty() {
            parts.push(format!("removed: {}", self.removed.join(", ")));
        }
        if !self.changed.is_empty() {
            let c = self
                .changed
                .iter()
                .map(|(name, fields)| format!("{name} ({})", fields.join(", ")))
                .collect::<Vec<_>>()
                .join(", ");
            parts.push(format!("changed: {c}"));
        }
        parts.extend(self.other.iter().cloned());
        f.write_str(&parts.join("; "))
    }
}

/// Why a pin could not be written or does not hold.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// A pin file does not exist. Code `pin_missing`.
    #[error("pin file {} is missing", path.display())]
    Missing {
        /// The missing file.
        path: PathBuf,
    },
    /// A pin file exists but cannot be read. Code `pin_unreadable`.
    #[error("pin file {} cannot be read: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The hash file is not 64 lowercase hex digits and a newline. Code `pin_hash_malformed`.
    #[error("hash file {} is malformed: {reason}", path.display())]
    MalformedHash {
        /// The hash file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The schema file does not hash to the committed hash. Code `pin_hash_mismatch`.
    #[error(
        "{} does not match {}: its SHA-256 is {actual}, the hash file says {expected} \
         (the schema file was edited without re-pinning)",
        SCHEMA_FILE,
        HASH_FILE
    )]
    HashMismatch {
        /// The hash in the hash file.
        expected: String,
        /// The hash of the schema file's bytes.
        actual: String,
    },
    /// The registry no longer produces the pinned bytes. Code `pin_drift`.
    #[error("the tools changed since they were pinned in {}: {diff}", dir.display())]
    Drift {
        /// The pin directory.
        dir: PathBuf,
        /// What changed.
        diff: PinDiff,
    },
    /// Writing the pin failed. Code `pin_write_failed`.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl PinError {
    /// The stable reason code.
    pub fn code(&self) -> &'static str {
        match self {
            PinError::Missing { .. } => "pin_missing",
            PinError::Unreadable { .. } => "pin_unreadable",
            PinError::MalformedHash { .. } => "pin_hash_malformed",
            PinError::HashMismatch { .. } => "pin_hash_mismatch",
            PinError::Drift { .. } => "pin_drift",
            PinError::Write { .. } => "pin_write_failed",
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Write `DIR/tools.schema.json` (the registry's canonical dump) and `DIR/tools.schema.sha256`,
/// creating `DIR` if needed. Each file is written to a temporary name and renamed into place.
pub fn write(registry: &Registry, dir: impl AsRef<Path>) -> Result<(), PinError> {
    let dir = dir.as_ref();
    std::fs::create_dir_all(dir).map_err(|source| PinError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let bytes = registry.canonical_dump();
    write_atomic(&dir.join(SCHEMA_FILE), bytes)?;
    write_atomic(
        &dir.join(HASH_FILE),
        format!("{}\n", sha256_hex(bytes)).as_bytes(),
    )
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PinError> {
    let err = |source| PinError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// Check the pin in `dir` against the registry: both files present, the hash file well formed,
/// the schema file's bytes hashing to it, and the registry producing exactly those bytes.
///
/// The schema file is read a piece at a time into a buffer on the stack, each piece hashed and
/// compared with the registry's dump, so the file is never held whole (a fresh process would
/// otherwise map and fault in memory for all of it); when the pin holds, its hash is the
/// registry's [`fingerprint`](Registry::fingerprint).
pub fn verify(registry: &Registry, dir: impl AsRef<Path>) -> Result<(), PinError> {
    let dir = dir.as_ref();
    let schema_path = dir.join(SCHEMA_FILE);
    let hash_path = dir.join(HASH_FILE);
    // Opened, and its first piece read, before the hash file: a schema file that cannot be read
    // is refused first.
    let mut pinned =
        PinnedFile::open(&schema_path, PIECE).map_err(|e| read_error(&schema_path, e))?;
    let hash_text = read(&hash_path)?;
    let expected = parse_hash(&hash_path, &hash_text)?;
    pinned.compare(registry.canonical_dump());
    let (actual, same) = pinned.finish().map_err(|e| read_error(&schema_path, e))?;
    if actual != expected {
        return Err(PinError::HashMismatch { expected, actual });
    }
    if !same {
        return Err(PinError::Drift {
            dir: dir.to_path_buf(),
            diff: diff(&read(&schema_path)?, registry.canonical_dump()),
        });
    }
    registry.know_fingerprint(expected);
    Ok(())
}

/// How much of the pinned schema file is read at a time (on the stack).
const PIECE: usize = 32 * 1024;

/// The pinned schema file, read a piece at a time: every byte hashed once, and compared with
/// the dump handed to [`PinnedFile::compare`] until the first difference.
struct PinnedFile {
    file: std::fs::File,
    /// How much to read at a time (all of `buf` but in tests).
    piece: usize,
    buf: [u8; PIECE],
    /// The part of `buf` read and not yet compared.
    start: usize,
    end: usize,
    sha: Sha256,
    /// No difference found so far.
    same: bool,
    error: Option<std::io::Error>,
}

impl PinnedFile {
    /// The file at `path`, opened and its first piece read, to be read at most `piece` bytes at
    /// a time.
    fn open(path: &Path, piece: usize) -> std::io::Result<PinnedFile> {
        let mut pinned = PinnedFile {
            file: open_regular(path)?,
            piece: piece.min(PIECE),
            buf: [0; PIECE],
            start: 0,
            end: 0,
            sha: Sha256::new(),
            same: true,
            error: None,
        };
        pinned.fill();
        match pinned.error.take() {
            Some(e) => Err(e),
            None => Ok(pinned),
        }
    }

    /// Compare the next bytes of the dump with the file's.
    fn compare(&mut self, mut piece: &[u8]) {
        while self.same && !piece.is_empty() {
            if self.start == self.end && !self.fill() {
                // The file ended (or failed) before the dump.
                self.same = false;
                break;
            }
            let n = piece.len().min(self.end - self.start);
            if piece[..n] != self.buf[self.start..self.start + n] {
                self.same = false;
            }
            self.start += n;
            piece = &piece[n..];
        }
    }

    /// Read and hash the next piece of the file; `false` at its end or on an error.
    fn fill(&mut self) -> bool {
        use std::io::Read;
        loop {
            match self.file.read(&mut self.buf[..self.piece]) {
                Ok(0) => return false,
                Ok(n) => {
                    self.sha.update(&self.buf[..n]);
                    (self.start, self.end) = (0, n);
                    return true;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    return false;
                }
            }
        }
    }

    /// The file's SHA-256 (lowercase hex), read to its end, and whether it held exactly the
    /// dump: nothing left over after it.
    fn finish(mut self) -> Result<(String, bool), std::io::Error> {
        if self.start != self.end {
            self.same = false;
        }
        while self.fill() {
            self.same = false;
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok((hex::encode(self.sha.finalize()), self.same)),
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, PinError> {
    let read = |path: &Path| {
        use std::io::Read;
        let mut bytes = Vec::new();
        open_regular(path)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    read(path).map_err(|e| read_error(path, e))
}

/// `path` opened for reading, when it is a regular file (a symbolic link is followed). Anything
/// else is refused before a byte is read: a FIFO would block start-up until a writer came (it is
/// opened without waiting for one), a device such as `/dev/zero` would never end.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Without effect on a regular file's reads.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

/// A pin file that cannot be read: missing, or unreadable for another reason.
fn read_error(path: &Path, source: std::io::Error) -> PinError {
    if source.kind() == std::io::ErrorKind::NotFound {
        PinError::Missing {
            path: path.to_path_buf(),
        }
    } else {
        PinError::Unreadable {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Exactly 64 lowercase hex digits followed by one `\n`.
fn parse_hash(path: &Path, text: &[u8]) -> Result<String, PinError> {
    let bad = |reason: &str| PinError::MalformedHash {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    };
    let Some(digits) = text.strip_suffix(b"\n") else {
        return Err(bad("it must end with a single newline"));
    };
    if digits.len() != 64 {
        return Err(bad(&format!(
            "expected 64 hex digits, found {} bytes",
            digits.len()
        )));
    }
    if !digits
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    {
        return Err(bad("only lowercase hex digits 0-9 a-f are allowed"));
    }
    // Checked above: all bytes are ASCII.
    Ok(String::from_utf8_lossy(digits).into_owned())
}

/// Compare a pinned dump with the current one, by tool name and top-level declaration field.
pub fn diff(pinned: &[u8], current: &[u8]) -> PinDiff {
    let mut d = PinDiff::default();
    let parsed = |b: &[u8]| serde_json::from_slice::<Value>(b).ok();
    let (Some(old), Some(new)) = (parsed(pinned), parsed(current)) else {
        d.other
            .push(format!("{SCHEMA_FILE} is not a valid JSON tool list"));
        return d;
    };
    if old.get("schema_version") != new.get("schema_version") {
        d.other.push(format!(
            "schema_version {} -> {}",
            old.get("schema_version").unwrap_or(&Value::Null),
            new.get("schema_version").unwrap_or(&Value::Null)
        ));
    }
    let (Some(old_tools), Some(new_tools)) = (tools_by_name(&old), tools_by_name(&new)) else {
        d.other
            .push(format!("{SCHEMA_FILE} has no valid `tools` list"));
        return d;
    };
    for (name, new_decl) in &new_tools {
        match old_tools.get(name) {
            None => d.added.push((*name).to_owned()),
            Some(old_decl) => {
                let fields = changed_fields(old_decl, new_decl);
                if !fields.is_empty() {
                    d.changed.insert((*name).to_owned(), fields);
                }
            }
        }
    }
    d.removed = old_tools
        .keys()
        .filter(|n| !new_tools.contains_key(*n))
        .map(|n| (*n).to_owned())
        .collect();
    if d.is_empty() {
        d.other.push(format!(
            "{SCHEMA_FILE} holds the same tools but not the canonical bytes (key order, \
             whitespace or numbers were changed)"
        ));
    }
    d
}

fn tools_by_name(doc: &Value) -> Option<BTreeMap<&str, &Value>> {
    doc.get("tools")?
        .as_array()?
        .iter()
        .map(|t| Some((t.get("name")?.as_str()?, t)))
        .collect()
}

fn changed_fields(old: &Value, new: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let o = old.as_object().unwrap_or(&empty);
    let n = new.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| o.get(*k) != n.get(*k))
        .cloned()
        .collect()
}

impl Registry {
    /// Refuse to start on drift: `Ok` only when `dir` holds a valid pin of exactly this registry
    /// (see [`verify`]).
    pub fn verify_pin(&self, dir: impl AsRef<Path>) -> Result<(), PinError> {
        verify(self, dir)
    }
}

/// Test helper: panic with the difference when the pin in `dir` does not hold; with
/// `TOOLS_PIN_UPDATE=1` in the environment, rewrite the pin instead (and panic only if that
/// fails).
pub fn assert_pinned(registry: &Registry, dir: impl AsRef<Path>) {
    let dir = dir.as_ref();
    if std::env::var(UPDATE_ENV).is_ok_and(|v| v == "1") {
        if let Err(e) = write(registry, dir) {
            panic!("could not update the tool pin in {}: {e}", dir.display());
        }
        return;
    }
    if let Err(e) = verify(registry, dir) {
        panic!(
            "tool pin check failed [{}]: {e}\nIf the change is intended, re-pin with \
             {UPDATE_ENV}=1 (e.g. `{UPDATE_ENV}=1 cargo test`) and commit both files.",
            e.code()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_file_must_be_exact() {
        let p = Path::new("h");
        let good = format!("{}\n", "a".repeat(64));
        assert!(parse_hash(p, good.as_bytes()).is_ok());
        for bad in [
            "a".repeat(64),
            format!("{}\n\n", "a".repeat(64)),
            format!("{}\n", "A".repeat(64)),
            format!("{}\n", "a".repeat(63)),
            format!(" {}\n", "a".repeat(63)),
        ] {
            assert!(parse_hash(p, bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    /// Whether a file of `file` bytes read `piece` bytes at a time holds exactly `pieces`
    /// concatenated, and its hash.
    fn pinned(file: &[u8], piece: usize, pieces: &[&[u8]]) -> (String, bool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, file).expect("write");
        let mut pinned = PinnedFile::open(&path, piece).expect("read");
        for p in pieces {
            pinned.compare(p);
        }
        pinned.finish().expect("read")
    }

    #[test]
    fn a_pinned_file_is_compared_and_hashed_whatever_the_pieces() {
        let file = b"abcdefghij";
        let splits: [&[&[u8]]; 4] = [
            &[b"abcdefghij"],
            &[b"abc", b"", b"defg", b"hij"],
            &[b"a", b"bcdefghi", b"j"],
            &[b"abcd", b"efgh", b"ij"],
        ];
        for piece in [1, 3, 4, 5, 10, 64] {
            for split in splits {
                assert_eq!(
                    pinned(file, piece, split),
                    (sha256_hex(file), true),
                    "{piece} {split:?}"
                );
            }
            // Longer than the dump (also when the dump ends where a read does), shorter, or
            // different: never the same, and the hash is always the whole file's.
            for (dump, case) in [
                (&b"abcdefgh"[..], "file longer"),
                (b"abcd", "file longer from a read's edge"),
                (b"abcdefghijk", "file shorter"),
                (b"abcdefghiJ", "last byte differs"),
                (b"Abcdefghij", "first byte differs"),
                (b"", "empty dump"),
            ] {
                assert_eq!(
                    pinned(file, piece, &[dump]),
                    (sha256_hex(file), false),
                    "{piece} {case}"
                );
            }
        }
        assert_eq!(pinned(b"", 4, &[b""]), (sha256_hex(b""), true));
        assert_eq!(pinned(b"", 4, &[b"a"]), (sha256_hex(b""), false));
    }

    #[test]
    fn diff_names_added_removed_and_changed_fields() {
        let old = br#"{"schema_version":1,"tools":[{"name":"a","risk":"safe"},{"name":"b"}]}"#;
        let new = br#"{"schema_version":1,"tools":[{"name":"a","risk":"mutation"},{"name":"c"}]}"#;
        let d = diff(old, new);
        assert_eq!(d.added, vec!["c"]);
        assert_eq!(d.removed, vec!["b"]);
        assert_eq!(d.changed.get("a"), Some(&vec!["risk".to_owned()]));
        assert_eq!(d.to_string(), "added: c; removed: b; changed: a (risk)");
    }
}
