//! [`JsonlAuditSink`]: the audit log as a file of JSON lines, hash-chained, and keyed when opened
//! with a key (see [`keyed`](super::keyed)).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use serde::Serialize;

use super::chain::ChainHead;
use super::event::{timestamp_now, AuditEvent, AuditSink};
use super::key::{AuditKey, AuditKeyError, EpochKey};
use super::keyed::{
    self, seal, state_path, CheckpointKind, CheckpointLine, KeyedBreak, KeyedError, KeyedLine,
    StateRecord,
};
use crate::reason::ReasonCode;

/// Why a keyed audit log could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditLogError {
    /// The log or its state file could not be read or written.
    #[error("the audit log {path} could not be used: {source}")]
    Io {
        /// The log.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The key file was refused.
    #[error(transparent)]
    Key(#[from] AuditKeyError),
    /// The log does not match its key, its chain or its last checkpoint (`audit_tampered`):
    /// nothing is appended to it.
    #[error(
        "audit_tampered: the audit log {path} was changed since it was written (line {line}: \
         {reason}); nothing is appended to it: check it with `verify-audit --key` and start a \
         new file"
    )]
    Tampered {
        /// The log.
        path: PathBuf,
        /// The first broken line (0: the log as a whole).
        line: u64,
        /// What is wrong.
        reason: KeyedBreak,
    },
    /// The file is open in this process already, with another key or without one.
    #[error("the audit log {path} is open in this process with another key or without one")]
    KeyMismatch {
        /// The log.
        path: PathBuf,
    },
}

impl AuditLogError {
    /// The stable reason code: `audit_tampered` for a log that was changed, `None` otherwise.
    pub fn reason_code(&self) -> Option<ReasonCode> {
        matches!(self, AuditLogError::Tampered { .. }).then_some(ReasonCode::AuditTampered)
    }
}

/// Appends one JSON line per event to a file, flushed before `record` returns, each line chained
/// to the one before it (`seq`, `prev_sha256`; see [`verify_chain`](super::verify_chain)).
///
/// Opened with [`open_keyed`](Self::open_keyed), each line also carries an `epoch` and a `mac`,
/// checkpoints close each epoch and the log (when the last sink of the file is dropped, or on
/// [`close`](Self::close)), and a log that was changed since its last checkpoint is refused
/// (`audit_tampered`); see [`verify_keyed`](super::verify_keyed).
///
/// Opening an existing log continues its chain from its last line, and refuses a log that ends
/// in a torn line or an unchained one. Sinks of one process on the same file share one writer, so
/// their lines form one chain. Writers in other processes are not coordinated: give each process
/// its own file.
#[derive(Debug)]
pub struct JsonlAuditSink {
    writer: Arc<Mutex<ChainWriter>>,
}

/// The file and where its chain stands; a failed write stops the chain (fail closed).
#[derive(Debug)]
struct ChainWriter {
    path: PathBuf,
    file: File,
    head: ChainHead,
    failed: bool,
    keyed: Option<Keyed>,
}

/// The keyed part of a writer: the current epoch key (the only one it holds) and its position.
#[derive(Debug)]
struct Keyed {
    key: EpochKey,
    key_id: String,
    lines_in_epoch: u64,
    epoch_lines: u64,
    /// The log's length as this writer left it: any other length means someone else wrote.
    len: u64,
    state: PathBuf,
    /// The last line is a closing checkpoint.
    closed: bool,
}

/// The chained logs this process has open, by canonical path.
static OPEN_LOGS: LazyLock<Mutex<HashMap<PathBuf, Weak<Mutex<ChainWriter>>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// One line as written: the event's fields, then its place in the chain.
#[derive(Serialize)]
struct ChainedLine<'a> {
    #[serde(flatten)]
    event: &'a AuditEvent,
    seq: u64,
    prev_sha256: &'a str,
}

impl JsonlAuditSink {
    /// Open `path` for appending, creating it when missing, and continue its chain. A keyed log
    /// is refused: open it with its key.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref();
        let mut open = OPEN_LOGS
            .lock()
            .map_err(|_| io::Error::other("audit log table lock poisoned"))?;
        let mut file = append(path)?;
        let canonical = path.canonicalize()?;
        open.retain(|_, w| w.strong_count() > 0);
        if let Some(writer) = open.get(&canonical).and_then(Weak::upgrade) {
            let keyed = writer
                .lock()
                .map_err(|_| io::Error::other("audit log lock poisoned"))?
                .keyed
                .is_some();
            if keyed {
                return Err(io::Error::other(AuditLogError::KeyMismatch {
                    path: path.to_owned(),
                }));
            }
            return Ok(JsonlAuditSink { writer });
        }
        let (head, keyed) = ChainHead::of_file(&mut file)?;
        if keyed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the audit log is keyed: open it with its key (`--audit-key`)",
            ));
        }
        let writer = Arc::new(Mutex::new(ChainWriter {
            path: path.to_owned(),
            file,
            head,
            failed: false,
            keyed: None,
        }));
        open.insert(canonical, Arc::downgrade(&writer));
        Ok(JsonlAuditSink { writer })
    }

    /// Open `path` as a keyed log under `key`, with a checkpoint every `epoch_lines` lines
    /// ([`DEFAULT_EPOCH_LINES`](super::DEFAULT_EPOCH_LINES) is the CLI's). A new log starts
    /// with its opening checkpoint; an existing one is verified from its first line and against
    /// its state file (`<path>.state`) and refused (`audit_tampered`) unless both hold. Only the
    /// current epoch's key is kept.
    pub fn open_keyed(
        path: impl AsRef<Path>,
        key: &AuditKey,
        epoch_lines: u64,
    ) -> Result<Self, AuditLogError> {
        let path = path.as_ref();
        let io_err = |source| AuditLogError::Io {
            path: path.to_owned(),
            source,
        };
        let mut open = OPEN_LOGS
            .lock()
            .map_err(|_| io_err(io::Error::other("audit log table lock poisoned")))?;
        let mut file = append(path).map_err(io_err)?;
        let canonical = path.canonicalize().map_err(io_err)?;
        open.retain(|_, w| w.strong_count() > 0);
        let key_id = key.id();
        if let Some(writer) = open.get(&canonical).and_then(Weak::upgrade) {
            let same = writer
                .lock()
                .map_err(|_| io_err(io::Error::other("audit log lock poisoned")))?
                .keyed
                .as_ref()
                .is_some_and(|k| k.key_id == key_id);
            if !same {
                return Err(AuditLogError::KeyMismatch {
                    path: path.to_owned(),
                });
            }
            return Ok(JsonlAuditSink { writer });
        }
        let state = state_path(path);
        let len = file.seek(SeekFrom::End(0)).map_err(io_err)?;
        let state_bytes = match std::fs::read(&state) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(e)),
        };
        let tampered = |line, reason| AuditLogError::Tampered {
            path: path.to_owned(),
            line,
            reason,
        };
        let mut writer = match (len, state_bytes) {
            (0, None) => ChainWriter {
                path: path.to_owned(),
                file,
                head: ChainHead::genesis(),
                failed: false,
                keyed: Some(Keyed {
                    key: key.first_epoch(),
                    key_id: key_id.clone(),
                    lines_in_epoch: 0,
                    epoch_lines: epoch_lines.max(1),
                    len: 0,
                    state,
                    closed: false,
                }),
            },
            // A keyed log that was written has a state; a log emptied, or one whose state was
            // removed, is not continued.
            (0, Some(_)) => return Err(tampered(0, KeyedBreak::Emptied)),
            (_, None) => {
                let (_, was_keyed) = ChainHead::of_file(&mut file).map_err(io_err)?;
                if !was_keyed {
                    return Err(io_err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "not a keyed audit log: give a keyed log its own file",
                    )));
                }
                return Err(tampered(0, KeyedBreak::StateMismatch));
            }
            (_, Some(bytes)) => {
                file.seek(SeekFrom::Start(0)).map_err(io_err)?;
                let walked = match keyed::walk(BufReader::new(&mut file), key, Some(&bytes)) {
                    Ok(w) => w,
                    Err(KeyedError::Broken { line, reason }) => return Err(tampered(line, reason)),
                    Err(KeyedError::Io(e)) => return Err(io_err(e)),
                };
                ChainWriter {
                    path: path.to_owned(),
                    file,
                    head: ChainHead {
                        seq: walked.summary.lines + 1,
                        prev_sha256: walked.summary.head_sha256.clone(),
                    },
                    failed: false,
                    keyed: Some(Keyed {
                        key: walked.key,
                        key_id: key_id.clone(),
                        lines_in_epoch: walked.lines_in_epoch,
                        epoch_lines: epoch_lines.max(1),
                        len: walked.len,
                        state,
                        closed: walked.summary.closed,
                    }),
                }
            }
        };
        if len == 0 {
            writer.checkpoint(CheckpointKind::Open).map_err(io_err)?;
        }
        let writer = Arc::new(Mutex::new(writer));
        open.insert(canonical, Arc::downgrade(&writer));
        Ok(JsonlAuditSink { writer })
    }

    /// Write a closing checkpoint now (a keyed log; nothing for an unkeyed one). Lines recorded
    /// later start a new epoch, closed again when the last sink of the file is dropped.
    pub fn close(&self) -> io::Result<()> {
        let mut w = self
            .writer
            .lock()
            .map_err(|_| io::Error::other("audit log lock poisoned"))?;
        if w.keyed.as_ref().is_some_and(|k| !k.closed) {
            w.checkpoint(CheckpointKind::Close)?;
        }
        Ok(())
    }
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .create(true)
        .append(true)
        .open(path)
}

impl ChainWriter {
    /// Write one line (without `\n`) and step the chain past it; a failure stops the chain.
    fn write_line(&mut self, mut line: Vec<u8>) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other(
                "an earlier audit write failed; the chain is stopped",
            ));
        }
        if let Some(k) = &self.keyed {
            // Someone else wrote, cut or emptied the file since our last line: fail closed.
            let len = self.file.metadata().map(|m| m.len());
            if len.as_ref().ok() != Some(&k.len) {
                self.failed = true;
                return Err(io::Error::other(AuditLogError::Tampered {
                    path: self.path.clone(),
                    line: self.head.seq,
                    reason: KeyedBreak::StateMismatch,
                }));
            }
        }
        // One write of the whole line under the lock: concurrent calls never interleave, and
        // the chain follows the file's order.
        line.push(b'\n');
        let written = self.file.write_all(&line).and_then(|()| self.file.flush());
        if let Err(e) = written {
            self.failed = true;
            return Err(e);
        }
        self.head.advance(&line[..line.len() - 1]);
        if let Some(k) = &mut self.keyed {
            k.len += line.len() as u64;
        }
        Ok(())
    }

    /// Close the current epoch with a checkpoint, step the key (erasing the old one) and record
    /// the new position in the state file.
    fn checkpoint(&mut self, kind: CheckpointKind) -> io::Result<()> {
        let Some(k) = &self.keyed else {
            return Ok(());
        };
        let body = serde_json::to_vec(&CheckpointLine {
            checkpoint: kind,
            timestamp: timestamp_now(),
            key_id: (kind == CheckpointKind::Open).then_some(k.key_id.as_str()),
            seq: self.head.seq,
            prev_sha256: &self.head.prev_sha256,
            epoch: k.key.epoch,
        })
        .map_err(io::Error::other)?;
        let line = seal(&body, &k.key);
        self.write_line(line)?;
        let synced = self.file.sync_data();
        let Some(k) = &mut self.keyed else {
            return Ok(());
        };
        if let Err(e) = synced {
            self.failed = true;
            return Err(e);
        }
        k.key.evolve();
        k.lines_in_epoch = 0;
        k.closed = kind == CheckpointKind::Close;
        let record = StateRecord {
            key_id: k.key_id.clone(),
            epoch: k.key.epoch,
            seq: self.head.seq,
            head_sha256: self.head.prev_sha256.clone(),
            len: k.len,
        };
        if let Err(e) = keyed::write_state(&k.state, &record, &k.key) {
            self.failed = true;
            return Err(e);
        }
        Ok(())
    }
}

impl Drop for ChainWriter {
    fn drop(&mut self) {
        if self.failed || self.keyed.as_ref().is_none_or(|k| k.closed) {
            return;
        }
        if let Err(e) = self.checkpoint(CheckpointKind::Close) {
            tracing::error!(error = %e, "the audit log's closing checkpoint could not be written");
        }
    }
}

impl AuditSink for JsonlAuditSink {
    fn record(&self, event: &AuditEvent) -> io::Result<()> {
        let mut w = self
            .writer
            .lock()
            .map_err(|_| io::Error::other("audit log lock poisoned"))?;
        let line = match &w.keyed {
            None => serde_json::to_vec(&ChainedLine {
                event,
                seq: w.head.seq,
                prev_sha256: &w.head.prev_sha256,
            })
            .map_err(io::Error::other)?,
            Some(k) => {
                let body = serde_json::to_vec(&KeyedLine {
                    event,
                    seq: w.head.seq,
                    prev_sha256: &w.head.prev_sha256,
                    epoch: k.key.epoch,
                })
                .map_err(io::Error::other)?;
                seal(&body, &k.key)
            }
        };
        w.write_line(line)?;
        let full = w.keyed.as_mut().is_some_and(|k| {
            k.closed = false;
            k.lines_in_epoch += 1;
            k.lines_in_epoch >= k.epoch_lines
        });
        if full {
            w.checkpoint(CheckpointKind::Epoch)?;
        }
        Ok(())
    }
}

#[cfg(test)]
impl JsonlAuditSink {
    /// The writer's current epoch key, as an attacker who stole it from memory would have it.
    pub(crate) fn current_key(&self) -> Option<EpochKey> {
        let w = self.writer.lock().ok()?;
        let k = w.keyed.as_ref()?;
        Some(EpochKey::from_raw(k.key.epoch, k.key.raw()))
    }
}
