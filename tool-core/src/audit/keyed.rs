//! The keyed chain of a JSONL audit log: on top of the hash chain (`seq`, `prev_sha256`), every
//! line carries its `epoch` and, last, a `mac`: HMAC-SHA256 under the epoch's key (see
//! [`key`](super::key)) of the line's bytes without the `mac` field. Since each line holds the
//! hash of the one before, the MACs chain.
//!
//! A log opens with a checkpoint line (`"checkpoint": "open"`, with the key's id), and a
//! checkpoint (`"epoch"`) closes each epoch of [`DEFAULT_EPOCH_LINES`] lines, and another
//! (`"close"`) the log when its writer shuts down. A checkpoint is MACed under the epoch it
//! closes; then the key evolves and the old one is erased. After each checkpoint the writer
//! overwrites, atomically, the state file next to the log (`<log>.state`): where the log stands
//! (epoch, next `seq`, head hash, length), MACed under the new epoch's key. The state holds no
//! key: the writer and the verifier both evolve forward from the key file.
//!
//! So with the key file a verifier detects an edit, deletion or insertion (even with the hash
//! chain recomputed), an appended forgery, an emptied log, a log cut short of its state, and a
//! log that does not end in its closing checkpoint; and whoever steals the current epoch's key
//! cannot rewrite an earlier epoch, whose key it cannot compute.

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::chain::{line_sha256, GENESIS_SHA256};
use super::key::{AuditKey, EpochKey};

/// Lines per epoch (a checkpoint and a key step after each).
pub const DEFAULT_EPOCH_LINES: u64 = 256;

/// MAC domains: a line, a state file.
const LINE: &[u8] = b"audit-line\0";
const STATE: &[u8] = b"audit-state\0";
/// `,"mac":"` + 64 hex digits + `"}`.
const MAC_SUFFIX_LEN: usize = 8 + 64 + 2;
/// Longest line read.
const MAX_LINE: u64 = 1 << 20;

/// What a checkpoint line marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CheckpointKind {
    /// The first line of a keyed log.
    Open,
    /// The end of a full epoch.
    Epoch,
    /// The writer shut down.
    Close,
}

/// How a keyed log fails to verify at the line an error names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyedBreak {
    /// The log is empty: a keyed log always holds its opening checkpoint.
    Emptied,
    /// The line is not a JSON object.
    NotJson,
    /// The last line does not end with a newline.
    Truncated,
    /// The line has no `seq`, `prev_sha256`, `epoch` and trailing `mac`.
    NotKeyed,
    /// The first line is not the opening checkpoint.
    NotOpened,
    /// The log was written with another key (its opening checkpoint names another key id).
    WrongKey,
    /// The line's `seq` is not its line number: lines before it were deleted or inserted.
    Sequence,
    /// The line's `prev_sha256` is not the hash of the line before: that line was edited, or
    /// this one does not belong here.
    Link,
    /// The line's `epoch` is not the epoch the log is in.
    Epoch,
    /// The MAC does not verify: the line was edited or forged (hash chain recomputed or not).
    Mac,
    /// The log does not end in a closing checkpoint: its tail was cut, or its writer is still
    /// running or stopped without closing it.
    UnsealedTail,
    /// The state file does not match the log: the log was cut short of it or rewritten, or the
    /// state itself was forged or belongs to another log.
    StateMismatch,
}

impl KeyedBreak {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyedBreak::Emptied => "emptied",
            KeyedBreak::NotJson => "not_json",
            KeyedBreak::Truncated => "truncated",
            KeyedBreak::NotKeyed => "not_keyed",
            KeyedBreak::NotOpened => "not_opened",
            KeyedBreak::WrongKey => "wrong_key",
            KeyedBreak::Sequence => "sequence",
            KeyedBreak::Link => "link",
            KeyedBreak::Epoch => "epoch",
            KeyedBreak::Mac => "mac",
            KeyedBreak::UnsealedTail => "unsealed_tail",
            KeyedBreak::StateMismatch => "state_mismatch",
        }
    }
}

impl std::fmt::Display for KeyedBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyedBreak::Emptied => "emptied: a keyed log holds at least its opening checkpoint",
            KeyedBreak::NotJson => "not JSON: not an audit line",
            KeyedBreak::Truncated => "truncated: the line does not end with a newline",
            KeyedBreak::NotKeyed => "no `seq`, `prev_sha256`, `epoch` and `mac`: not a keyed line",
            KeyedBreak::NotOpened => "the log does not start with its opening checkpoint",
            KeyedBreak::WrongKey => "the log was written with another key",
            KeyedBreak::Sequence => "`seq` is not the line number: lines were deleted or inserted",
            KeyedBreak::Link => {
                "`prev_sha256` does not match the line before: it was edited, or this line inserted"
            }
            KeyedBreak::Epoch => "`epoch` out of order: the line does not belong here",
            KeyedBreak::Mac => "the MAC does not verify: the line was edited or forged",
            KeyedBreak::UnsealedTail => {
                "the log does not end in its closing checkpoint: its tail was cut, or its writer \
                 is running or stopped without closing it"
            }
            KeyedBreak::StateMismatch => {
                "the state file does not match the log: cut short of it, rewritten, or the state \
                 forged"
            }
        })
    }
}

/// Why a keyed log does not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyedError {
    /// The log or its state could not be read.
    #[error("the audit log could not be read: {0}")]
    Io(#[from] io::Error),
    /// The log is broken at `line` (1-based; 0 for the log as a whole).
    #[error("line {line}: {reason}")]
    Broken {
        /// The first broken line.
        line: u64,
        /// What is wrong.
        reason: KeyedBreak,
    },
}

fn broken(line: u64, reason: KeyedBreak) -> KeyedError {
    KeyedError::Broken { line, reason }
}

/// A keyed log that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedSummary {
    /// Lines in the log, checkpoints included.
    pub lines: u64,
    /// Audit events (lines that are not checkpoints).
    pub events: u64,
    /// The epoch the log ends in (checkpoints closed the ones before).
    pub epoch: u64,
    /// SHA-256 of the last line.
    pub head_sha256: String,
    /// The last line is a closing checkpoint.
    pub closed: bool,
}

/// Where a verified log ends, for a writer that continues it.
#[derive(Debug)]
pub(crate) struct Walked {
    pub(crate) summary: KeyedSummary,
    /// The key of the epoch the next line is in.
    pub(crate) key: EpochKey,
    /// Lines of that epoch already written.
    pub(crate) lines_in_epoch: u64,
    /// Bytes in the log.
    pub(crate) len: u64,
}

/// The state file's record: where the log stood after its last checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct StateRecord {
    pub(crate) key_id: String,
    /// The epoch after the checkpoint.
    pub(crate) epoch: u64,
    /// The `seq` of the line after the checkpoint.
    pub(crate) seq: u64,
    /// SHA-256 of the checkpoint line.
    pub(crate) head_sha256: String,
    /// The log's length after the checkpoint.
    pub(crate) len: u64,
}

/// The state file of the log at `log`: `<log>.state`.
pub fn state_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".state");
    PathBuf::from(name)
}

/// `body` (a JSON object's bytes) with its `mac` under `key` appended as the last field.
pub(crate) fn seal(body: &[u8], key: &EpochKey) -> Vec<u8> {
    seal_in(LINE, body, key)
}

fn seal_in(domain: &[u8], body: &[u8], key: &EpochKey) -> Vec<u8> {
    let mac = key.mac(domain, &[body]);
    let mut line = Vec::with_capacity(body.len() + MAC_SUFFIX_LEN);
    line.extend_from_slice(body.strip_suffix(b"}").unwrap_or(body));
    line.extend_from_slice(b",\"mac\":\"");
    line.extend_from_slice(mac.as_bytes());
    line.extend_from_slice(b"\"}");
    line
}

/// A sealed line's body (as MACed) and its MAC.
fn unseal(line: &[u8]) -> Option<(Vec<u8>, &str)> {
    if line.len() < MAC_SUFFIX_LEN + 2 {
        return None;
    }
    let (head, tail) = line.split_at(line.len() - MAC_SUFFIX_LEN);
    let mac = tail.strip_prefix(b",\"mac\":\"")?.strip_suffix(b"\"}")?;
    if !mac.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut body = head.to_vec();
    body.push(b'}');
    Some((body, std::str::from_utf8(mac).ok()?))
}

/// The fields of one keyed line the verifier reads.
struct Fields {
    seq: u64,
    prev: String,
    epoch: u64,
    checkpoint: Option<String>,
    key_id: Option<String>,
}

fn fields(body: &[u8]) -> Result<Fields, KeyedBreak> {
    let v: Value = serde_json::from_slice(body).map_err(|_| KeyedBreak::NotJson)?;
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    match (
        v.get("seq").and_then(Value::as_u64),
        text("prev_sha256"),
        v.get("epoch").and_then(Value::as_u64),
    ) {
        (Some(seq), Some(prev), Some(epoch)) => Ok(Fields {
            seq,
            prev,
            epoch,
            checkpoint: text("checkpoint"),
            key_id: text("key_id"),
        }),
        _ => Err(KeyedBreak::NotKeyed),
    }
}

/// Verify a keyed log with its key and, when given, its state file's bytes. A log whose tail
/// is unsealed verifies here (`closed: false`); see [`verify_keyed`] for the strict check.
pub(crate) fn walk(
    mut reader: impl BufRead,
    key: &AuditKey,
    state: Option<&[u8]>,
) -> Result<Walked, KeyedError> {
    let state = state.map(|s| read_state(s, key)).transpose()?;
    let mut k = key.first_epoch();
    let (mut prev, mut line_no, mut events, mut len) = (GENESIS_SHA256.to_owned(), 0u64, 0u64, 0);
    let (mut lines_in_epoch, mut closed, mut state_seen) = (0u64, false, state.is_none());
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let n = reader.by_ref().take(MAX_LINE).read_until(b'\n', &mut raw)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let Some((&b'\n', line)) = raw.split_last() else {
            return Err(broken(line_no, KeyedBreak::Truncated));
        };
        let (body, mac) = unseal(line).ok_or_else(|| {
            let reason = match serde_json::from_slice::<Value>(line) {
                Ok(Value::Object(_)) => KeyedBreak::NotKeyed,
                _ => KeyedBreak::NotJson,
            };
            broken(line_no, reason)
        })?;
        let f = fields(&body).map_err(|r| broken(line_no, r))?;
        if line_no == 1 {
            if f.checkpoint.as_deref() != Some("open") || f.epoch != 0 {
                return Err(broken(1, KeyedBreak::NotOpened));
            }
            if f.key_id.as_deref() != Some(key.id().as_str()) {
                return Err(broken(1, KeyedBreak::WrongKey));
            }
        }
        if f.seq != line_no {
            return Err(broken(line_no, KeyedBreak::Sequence));
        }
        if f.prev != prev {
            return Err(broken(line_no, KeyedBreak::Link));
        }
        if f.epoch != k.epoch {
            return Err(broken(line_no, KeyedBreak::Epoch));
        }
        if !k.verify(LINE, &[&body], mac) {
            return Err(broken(line_no, KeyedBreak::Mac));
        }
        prev = line_sha256(line);
        len += n as u64;
        closed = f.checkpoint.as_deref() == Some("close");
        if f.checkpoint.is_some() {
            k.evolve();
            lines_in_epoch = 0;
            if let Some(s) = &state {
                if s.len == len {
                    state_seen =
                        s.epoch == k.epoch && s.seq == line_no + 1 && s.head_sha256 == prev;
                }
            }
        } else {
            events += 1;
            lines_in_epoch += 1;
        }
    }
    if line_no == 0 {
        return Err(broken(0, KeyedBreak::Emptied));
    }
    if !state_seen {
        return Err(broken(line_no, KeyedBreak::StateMismatch));
    }
    Ok(Walked {
        summary: KeyedSummary {
            lines: line_no,
            events,
            epoch: k.epoch,
            head_sha256: prev,
            closed,
        },
        key: k,
        lines_in_epoch,
        len,
    })
}

/// Verify a keyed log with its initial key and its state file (`None` when there is none to
/// check: a cut at a checkpoint is then not detected). The log must end in its closing
/// checkpoint.
pub fn verify_keyed(
    reader: impl BufRead,
    key: &AuditKey,
    state: Option<&[u8]>,
) -> Result<KeyedSummary, KeyedError> {
    let walked = walk(reader, key, state)?;
    if !walked.summary.closed {
        return Err(broken(walked.summary.lines, KeyedBreak::UnsealedTail));
    }
    Ok(walked.summary)
}

fn read_state(bytes: &[u8], key: &AuditKey) -> Result<StateRecord, KeyedError> {
    let bad = || broken(0, KeyedBreak::StateMismatch);
    let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let (body, mac) = unseal(text).ok_or_else(bad)?;
    let record: StateRecord = serde_json::from_slice(&body).map_err(|_| bad())?;
    if record.key_id != key.id() || !key.epoch(record.epoch).verify(STATE, &[&body], mac) {
        return Err(bad());
    }
    Ok(record)
}

/// Overwrite the state file atomically (a private temporary file, synced, renamed over it).
pub(crate) fn write_state(path: &Path, record: &StateRecord, key: &EpochKey) -> io::Result<()> {
    let body = serde_json::to_vec(record).map_err(io::Error::other)?;
    let mut sealed = seal_in(STATE, &body, key);
    sealed.push(b'\n');
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(&sealed)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// One event line of a keyed log, before its MAC.
#[derive(Serialize)]
pub(crate) struct KeyedLine<'a, E: Serialize> {
    #[serde(flatten)]
    pub(crate) event: &'a E,
    pub(crate) seq: u64,
    pub(crate) prev_sha256: &'a str,
    pub(crate) epoch: u64,
}

/// One checkpoint line, before its MAC.
#[derive(Serialize)]
pub(crate) struct CheckpointLine<'a> {
    pub(crate) checkpoint: CheckpointKind,
    pub(crate) timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key_id: Option<&'a str>,
    pub(crate) seq: u64,
    pub(crate) prev_sha256: &'a str,
    pub(crate) epoch: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_lines_unseal_to_the_bytes_that_were_maced() {
        let key = AuditKey::from_bytes(&[9; 32]).expect("key").first_epoch();
        let body = br#"{"a":1,"seq":1}"#;
        let line = seal(body, &key);
        assert!(line.starts_with(br#"{"a":1,"seq":1,"mac":""#), "{line:?}");
        let (back, mac) = unseal(&line).expect("sealed");
        assert_eq!(back, body);
        assert!(key.verify(LINE, &[&back], mac));
        assert!(unseal(body).is_none());
    }
}
