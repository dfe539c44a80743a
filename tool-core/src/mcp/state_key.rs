//! The key that signs approval states (`requestState`), shared by every replica of a fleet.
//!
//! Without a key file each server makes a fresh key at start-up: a state verifies only at the
//! replica that issued it, and a restart invalidates every state in flight. With
//! `--state-key-file FILE` (or [`StateKeys::from_file`]) every replica signs and verifies with
//! the same key, so a round can land on any of them.
//!
//! The file is text: the first non-empty line that is not a `#` comment is the current key,
//! which signs; an optional second one is the previous key, which still verifies, so a key can
//! rotate without failing calls in flight: put the new key first and the old one second on every
//! replica, and remove the old one after a state lifetime. Each key is at least
//! [`MIN_KEY_BYTES`] bytes of high-entropy text (e.g. `openssl rand -hex 32`). The file must
//! not be readable or writable by group or others.

use std::fmt;
use std::path::{Path, PathBuf};

use rmcp::model::RequestStateCodec;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The shortest key accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 32;

/// The largest key file read, in bytes.
const MAX_FILE_BYTES: u64 = 16 * 1024;

/// The signing keys of approval states: the current one and, while rotating, the previous one.
#[derive(Clone)]
pub struct StateKeys {
    current: Zeroizing<Vec<u8>>,
    previous: Option<Zeroizing<Vec<u8>>>,
    /// Where they came from, for messages: a file, or generated.
    origin: String,
}

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateKeys")
            .field("origin", &self.origin)
            .field("current", &key_id(&self.current))
            .field("previous", &self.previous.as_ref().map(|k| key_id(k)))
            .finish()
    }
}

/// Why a key file was refused.
#[derive(Debug, thiserror::Error)]
#[error("state key file {}: {reason}", path.display())]
pub struct StateKeyError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it (never the key).
    pub reason: String,
}

impl StateKeys {
    /// A fresh key from the operating system's random source: this process alone can verify
    /// its states.
    pub fn generate() -> Result<Self, String> {
        let mut key = Zeroizing::new(vec![0u8; 32]);
        getrandom::fill(&mut key).map_err(|e| format!("no random source for the key: {e}"))?;
        Ok(StateKeys {
            current: key,
            previous: None,
            origin: "generated at start-up".to_owned(),
        })
    }

    /// The keys in `path` (see the module docs for the format), refused when the file is not a
    /// regular file, is readable or writable by group or others, or holds no key, a key shorter
    /// than [`MIN_KEY_BYTES`], the same key twice, or more than two keys.
    pub fn from_file(path: &Path) -> Result<Self, StateKeyError> {
        let refuse = |reason: String| StateKeyError {
            path: path.to_owned(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| refuse(e.to_string()))?;
        if !meta.is_file() {
            return Err(refuse("not a regular file".to_owned()));
        }
        check_mode(&meta).map_err(refuse)?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(refuse(format!(
                "{} bytes; a key file has at most {MAX_FILE_BYTES}",
                meta.len()
            )));
        }
        let text = Zeroizing::new(std::fs::read(path).map_err(|e| refuse(e.to_string()))?);
        let text = std::str::from_utf8(&text).map_err(|_| refuse("not UTF-8 text".to_owned()))?;
        let keys: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let (current, previous) = match keys.as_slice() {
            [] => return Err(refuse("holds no key".to_owned())),
            [current] => (*current, None),
            [current, previous] => (*current, Some(*previous)),
            more => {
                return Err(refuse(format!(
                    "holds {} keys; at most two (the current one, then the previous one)",
                    more.len()
                )))
            }
        };
        for (which, key) in [("current", Some(current)), ("previous", previous)] {
            if let Some(key) = key {
                if key.len() < MIN_KEY_BYTES {
                    return Err(refuse(format!(
                        "the {which} key has {} bytes; at least {MIN_KEY_BYTES}",
                        key.len()
                    )));
                }
            }
        }
        if previous == Some(current) {
            return Err(refuse(
                "the previous key is the current key; remove the second line".to_owned(),
            ));
        }
        Ok(StateKeys {
            current: Zeroizing::new(current.as_bytes().to_vec()),
            previous: previous.map(|k| Zeroizing::new(k.as_bytes().to_vec())),
            origin: path.display().to_string(),
        })
    }

    /// Whether a previous key still verifies.
    pub fn rotating(&self) -> bool {
        self.previous.is_some()
    }

    /// Where the keys came from: the file's path, or "generated at start-up".
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The codec that signs with the current key and verifies with both.
    pub(crate) fn codec(&self) -> Result<RequestStateCodec, String> {
        let mut ring = vec![(key_id(&self.current), self.current.to_vec())];
        if let Some(previous) = &self.previous {
            ring.push((key_id(previous), previous.to_vec()));
        }
        RequestStateCodec::new_with_keyring(key_id(&self.current), ring).map_err(|e| e.to_string())
    }
}

/// A key's public name: the first 8 bytes of its SHA-256, in hex. The same on every replica.
fn key_id(key: &[u8]) -> String {
    let digest = Sha256::digest(key);
    format!("k{}", hex::encode(&digest[..8]))
}

#[cfg(unix)]
fn check_mode(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "mode {mode:o} lets group or others read or write it; `chmod 600` it"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef-key-a";
    const B: &str = "0123456789abcdef0123456789abcdef-key-b";

    fn file(text: &str, mode: u32) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.key");
        std::fs::write(&path, text).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        (dir, path)
    }

    fn refusal(text: &str, mode: u32) -> String {
        let (_dir, path) = file(text, mode);
        StateKeys::from_file(&path).expect_err("refused").reason
    }

    #[test]
    fn replicas_with_one_file_verify_each_others_states() {
        let (_dir, path) = file(&format!("# fleet key\n{A}\n"), 0o600);
        let one = StateKeys::from_file(&path)
            .expect("keys")
            .codec()
            .expect("codec");
        let two = StateKeys::from_file(&path)
            .expect("keys")
            .codec()
            .expect("codec");
        let state = one.seal(b"round 1");
        assert_eq!(two.open(&state).expect("verifies"), b"round 1");
        let other = StateKeys::generate().expect("key").codec().expect("codec");
        assert!(other.open(&state).is_err());
    }

    #[test]
    fn a_rotated_file_still_verifies_states_of_the_previous_key() {
        let (_d1, old) = file(A, 0o600);
        let (_d2, rotated) = file(&format!("{B}\n{A}\n"), 0o400);
        let (_d3, retired) = file(B, 0o600);
        let before = StateKeys::from_file(&old)
            .expect("old")
            .codec()
            .expect("codec");
        let during = StateKeys::from_file(&rotated).expect("rotated");
        assert!(during.rotating());
        let during = during.codec().expect("codec");
        let after = StateKeys::from_file(&retired)
            .expect("new")
            .codec()
            .expect("codec");
        let in_flight = before.seal(b"old");
        assert_eq!(during.open(&in_flight).expect("previous key"), b"old");
        let fresh = during.seal(b"new");
        assert_eq!(after.open(&fresh).expect("current key"), b"new");
        assert!(
            after.open(&in_flight).is_err(),
            "retired keys verify nothing"
        );
    }

    #[test]
    fn unsafe_or_malformed_files_are_refused() {
        assert!(refusal(A, 0o640).contains("chmod 600"));
        assert!(refusal(A, 0o604).contains("chmod 600"));
        assert!(refusal(A, 0o620).contains("chmod 600"));
        assert!(refusal("", 0o600).contains("no key"));
        assert!(refusal("# only a comment\n", 0o600).contains("no key"));
        assert!(refusal("short", 0o600).contains("at least 32"));
        assert!(refusal(&format!("{A}\n{A}"), 0o600).contains("previous key is the current"));
        assert!(refusal(&format!("{A}\n{B}\n{A}x"), 0o600).contains("at most two"));
        let dir = tempfile::tempdir().expect("tempdir");
        let e = StateKeys::from_file(dir.path()).expect_err("a directory");
        assert!(e.reason.contains("regular file"), "{e}");
        let e = StateKeys::from_file(&dir.path().join("absent")).expect_err("absent");
        assert!(e.to_string().contains("absent"), "{e}");
    }

    #[test]
    fn keys_never_appear_in_messages() {
        let (_dir, path) = file(&format!("{A}\n{B}"), 0o600);
        let keys = StateKeys::from_file(&path).expect("keys");
        let shown = format!("{keys:?}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        let e = refusal(&format!("{A}\nshort"), 0o600);
        assert!(!e.contains("0123456789abcdef"), "{e}");
    }
}
