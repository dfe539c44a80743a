//! The hash chain of a JSONL audit log: every line carries `seq` (its 1-based line number) and
//! `prev_sha256` (the SHA-256, lowercase hex, of the previous line's bytes without the `\n`; the
//! first line carries [`GENESIS_SHA256`]). An edit, deletion, reordering or insertion anywhere
//! but in the last line breaks the chain at a line [`verify_chain`] names; anchor the last line
//! elsewhere ([`ChainSummary::head_sha256`]) to protect it too.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev_sha256` of a log's first line.
pub const GENESIS_SHA256: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Longest line read; a longer one is not an audit event.
const MAX_LINE: usize = 1 << 20;
/// Lines read past a break to tell what happened there.
const LOOKAHEAD: usize = 100_000;

/// SHA-256 (lowercase hex) of one line's bytes, without its `\n`.
pub fn line_sha256(line: &[u8]) -> String {
    hex::encode(Sha256::digest(line))
}

/// Where a writer is in its chain: what the next line carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainHead {
    /// The next line's `seq`.
    pub(crate) seq: u64,
    /// The next line's `prev_sha256`.
    pub(crate) prev_sha256: String,
}

impl ChainHead {
    /// The head of an empty log.
    pub(crate) fn genesis() -> Self {
        ChainHead {
            seq: 1,
            prev_sha256: GENESIS_SHA256.to_owned(),
        }
    }

    /// Step past a line just written.
    pub(crate) fn advance(&mut self, line: &[u8]) {
        self.seq += 1;
        self.prev_sha256 = line_sha256(line);
    }

    /// The head after the last line of an existing log, read from its end, and whether that
    /// line is keyed (carries a `mac`). Fails closed (`InvalidData`) when the log ends in a torn
    /// line or its last line is not a chained event: chaining onto it would hide the damage.
    pub(crate) fn of_file(file: &mut File) -> io::Result<(Self, bool)> {
        let len = file.seek(SeekFrom::End(0))?;
        if len == 0 {
            return Ok((ChainHead::genesis(), false));
        }
        let bad = |what: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the audit log {what}; check it with `verify-audit` and start a new file"),
            )
        };
        let mut tail: Vec<u8> = Vec::new();
        let mut pos = len;
        let line = loop {
            let step = pos.min(8192);
            pos -= step;
            file.seek(SeekFrom::Start(pos))?;
            let mut chunk = vec![0; usize::try_from(step).map_err(io::Error::other)?];
            file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&tail);
            tail = chunk;
            let Some((&b'\n', body)) = tail.split_last() else {
                return Err(bad("ends in an incomplete line"));
            };
            if let Some(i) = body.iter().rposition(|&b| b == b'\n') {
                break body[i + 1..].to_vec();
            }
            if pos == 0 {
                break body.to_vec();
            }
            if tail.len() > MAX_LINE {
                return Err(bad("ends in an overlong line"));
            }
        };
        let Some(entry) = Entry::parse(&line) else {
            return Err(bad("does not end in a chained audit event"));
        };
        Ok((
            ChainHead {
                seq: entry.seq + 1,
                prev_sha256: entry.hash,
            },
            entry.keyed,
        ))
    }
}

/// How a chain is broken at the line an error names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChainBreak {
    /// The line is not a JSON object.
    NotJson,
    /// The line is JSON but has no `seq` and `prev_sha256`.
    NotChained,
    /// The last line does not end with a newline: it was cut.
    Truncated,
    /// The line was changed after it was written: the next line's `prev_sha256` disagrees.
    Edited,
    /// This many lines before this one are missing.
    Deleted {
        /// How many.
        count: u64,
    },
    /// The line is out of place: it chains onto a line that comes after it, or its `seq` goes
    /// backwards.
    Reordered,
    /// The line was not written by the chain: the line after it chains onto the line before it.
    Inserted,
}

impl ChainBreak {
    /// The stable snake_case name (`not_json`, `not_chained`, `truncated`, `edited`, `deleted`,
    /// `reordered`, `inserted`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChainBreak::NotJson => "not_json",
            ChainBreak::NotChained => "not_chained",
            ChainBreak::Truncated => "truncated",
            ChainBreak::Edited => "edited",
            ChainBreak::Deleted { .. } => "deleted",
            ChainBreak::Reordered => "reordered",
            ChainBreak::Inserted => "inserted",
        }
    }
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainBreak::NotJson => f.write_str("not JSON: not an audit event"),
            ChainBreak::NotChained => {
                f.write_str("no `seq` and `prev_sha256`: not a chained audit event")
            }
            ChainBreak::Truncated => f.write_str("truncated: the line does not end with a newline"),
            ChainBreak::Edited => {
                f.write_str("edited: the next line's `prev_sha256` does not match this line")
            }
            ChainBreak::Deleted { count } => {
                write!(f, "deleted: {count} line(s) missing before this line")
            }
            ChainBreak::Reordered => f.write_str("reordered: this line is out of place"),
            ChainBreak::Inserted => f.write_str("inserted: this line is not part of the chain"),
        }
    }
}

/// Why an audit log does not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// The log could not be read.
    #[error("the audit log could not be read: {0}")]
    Io(#[from] io::Error),
    /// The chain is broken; `line` (1-based) is the first broken line.
    #[error("line {line}: {reason}")]
    Broken {
        /// The first broken line, counted from 1.
        line: u64,
        /// What is wrong with it.
        reason: ChainBreak,
    },
}

/// A log that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainSummary {
    /// How many events it holds.
    pub events: u64,
    /// SHA-256 of its last line ([`GENESIS_SHA256`] when empty): record it elsewhere to detect a
    /// later deletion or edit of the last line, which the chain alone cannot.
    pub head_sha256: String,
}

/// Check the chain of a JSONL audit log; the number of events when it holds.
pub fn verify_chain(reader: impl BufRead) -> Result<usize, ChainError> {
    let summary = verify_chain_summary(reader)?;
    usize::try_from(summary.events).map_err(|e| ChainError::Io(io::Error::other(e)))
}

/// [`verify_chain`], returning the event count and the head hash.
pub fn verify_chain_summary(mut reader: impl BufRead) -> Result<ChainSummary, ChainError> {
    // Hashes of the two lines before the current one (what `prev_sha256` may point at).
    let mut before_prev: Option<String> = None;
    let mut prev = GENESIS_SHA256.to_owned();
    let mut line_no: u64 = 0;
    while let Some(raw) = read_line(&mut reader)? {
        line_no += 1;
        let entry = Entry::check(&raw).map_err(|reason| ChainError::Broken {
            line: line_no,
            reason,
        })?;
        if entry.prev != prev || entry.seq != line_no {
            let later = lookahead(&mut reader)?;
            let (line, reason) = classify(line_no, &entry, &prev, before_prev.as_deref(), &later);
            return Err(ChainError::Broken { line, reason });
        }
        before_prev = Some(std::mem::replace(&mut prev, entry.hash));
    }
    Ok(ChainSummary {
        events: line_no,
        head_sha256: prev,
    })
}

/// Tell what happened at the first line `i` whose link does not hold.
fn classify(
    i: u64,
    entry: &Entry,
    expected: &str,
    expected_before: Option<&str>,
    later: &[Option<Entry>],
) -> (u64, ChainBreak) {
    let later_hashes = || later.iter().flatten().map(|e| e.hash.as_str());
    if later_hashes().any(|h| h == entry.prev) {
        return (i, ChainBreak::Reordered);
    }
    if let Some(Some(next)) = later.first() {
        if next.prev == expected {
            return (i, ChainBreak::Inserted);
        }
    }
    if i >= 2 && expected_before == Some(entry.prev.as_str()) {
        return (i - 1, ChainBreak::Inserted);
    }
    if entry.seq > i {
        return (
            i,
            ChainBreak::Deleted {
                count: entry.seq - i,
            },
        );
    }
    if entry.seq < i {
        return (i, ChainBreak::Reordered);
    }
    (i.saturating_sub(1).max(1), ChainBreak::Edited)
}

/// One chained line: its link and its own hash.
#[derive(Debug)]
struct Entry {
    seq: u64,
    prev: String,
    hash: String,
    /// The line carries a `mac` (a keyed log's line).
    keyed: bool,
}

impl Entry {
    /// A line read with its `\n` (when it has one).
    fn check(raw: &[u8]) -> Result<Entry, ChainBreak> {
        let Some((&b'\n', line)) = raw.split_last() else {
            return Err(ChainBreak::Truncated);
        };
        let value: Value = serde_json::from_slice(line).map_err(|_| ChainBreak::NotJson)?;
        if !value.is_object() {
            return Err(ChainBreak::NotJson);
        }
        let seq = value.get("seq").and_then(Value::as_u64);
        let prev = value
            .get("prev_sha256")
            .and_then(Value::as_str)
            .filter(|p| p.len() == 64 && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        match (seq, prev) {
            (Some(seq), Some(prev)) => Ok(Entry {
                seq,
                prev: prev.to_owned(),
                hash: line_sha256(line),
                keyed: value.get("mac").is_some(),
            }),
            _ => Err(ChainBreak::NotChained),
        }
    }

    /// A line without its `\n`.
    fn parse(line: &[u8]) -> Option<Entry> {
        let mut raw = line.to_vec();
        raw.push(b'\n');
        Entry::check(&raw).ok()
    }
}

/// The lines after a break, for [`classify`]; a line that is not a chained event is `None`.
fn lookahead(reader: &mut impl BufRead) -> io::Result<Vec<Option<Entry>>> {
    let mut out = Vec::new();
    while out.len() < LOOKAHEAD {
        let Some(raw) = read_line(reader)? else { break };
        out.push(Entry::check(&raw).ok());
    }
    Ok(out)
}

/// One line with its `\n`; a line over [`MAX_LINE`] is cut there (and so fails to parse).
fn read_line(reader: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX);
    let n = reader.by_ref().take(limit).read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && buf.len() >= MAX_LINE {
        // Skip the rest of the overlong line and mark it broken.
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            if let Some(i) = chunk.iter().position(|&b| b == b'\n') {
                reader.consume(i + 1);
                break;
            }
            let n = chunk.len();
            reader.consume(n);
        }
        return Ok(Some(b"\x00\n".to_vec()));
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn chained(seq: u64, prev: &str, pad: usize) -> String {
        serde_json::json!({"pad": "x".repeat(pad), "seq": seq, "prev_sha256": prev}).to_string()
    }

    #[test]
    fn the_head_of_a_file_is_read_from_its_last_line_across_chunks() {
        for pad in [0, 10, 8190, 20_000] {
            let first = chained(1, GENESIS_SHA256, 9000);
            let last = chained(2, &line_sha256(first.as_bytes()), pad);
            let mut f = tempfile::tempfile().expect("tempfile");
            write!(f, "{first}\n{last}\n").expect("write");
            let (head, _) = ChainHead::of_file(&mut f).expect("head");
            assert_eq!(head.seq, 3, "pad {pad}");
            assert_eq!(head.prev_sha256, line_sha256(last.as_bytes()), "pad {pad}");
        }
        let mut empty = tempfile::tempfile().expect("tempfile");
        assert_eq!(
            ChainHead::of_file(&mut empty).expect("head"),
            (ChainHead::genesis(), false)
        );
    }

    #[test]
    fn a_line_moved_far_away_is_reordered_and_an_edit_of_the_first_line_is_named() {
        let mut lines = Vec::new();
        let mut prev = GENESIS_SHA256.to_owned();
        for seq in 1..=8 {
            let l = chained(seq, &prev, 1);
            prev = line_sha256(l.as_bytes());
            lines.push(l);
        }
        let text = |ls: &[String]| ls.join("\n") + "\n";
        let moved = {
            let mut ls = lines.clone();
            let l = ls.remove(1);
            ls.insert(6, l);
            ls
        };
        let err = verify_chain(text(&moved).as_bytes()).expect_err("broken");
        assert!(
            matches!(
                err,
                ChainError::Broken {
                    line: 2,
                    reason: ChainBreak::Reordered
                }
            ),
            "{err:?}"
        );
        let mut edited = lines.clone();
        edited[0] = edited[0].replace("\"pad\":\"x\"", "\"pad\":\"y\"");
        let err = verify_chain(text(&edited).as_bytes()).expect_err("broken");
        assert!(
            matches!(
                err,
                ChainError::Broken {
                    line: 1,
                    reason: ChainBreak::Edited
                }
            ),
            "{err:?}"
        );
    }
}
