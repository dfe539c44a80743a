//! The key of a keyed audit log and the epoch keys evolved from it.
//!
//! The key file holds the initial key (at least 32 bytes, readable by its owner only). Epoch 0's
//! key is `HMAC(file bytes, "epoch-0")`; each next one is `HMAC(previous, "evolve")`, a one-way
//! step: whoever holds the key of epoch N can compute every later key but no earlier one. The
//! writer keeps only its current epoch key and erases the one before on each step.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use zeroize::{Zeroize, Zeroizing};

/// The shortest key file accepted, in bytes.
pub const MIN_KEY_BYTES: usize = 32;
/// The longest key file read, in bytes (a longer file is not a key).
const MAX_KEY_BYTES: u64 = 4096;

type HmacSha256 = Hmac<Sha256>;

/// Why a key file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditKeyError {
    /// The file could not be read.
    #[error("cannot read the audit key {path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file holds fewer than [`MIN_KEY_BYTES`] bytes, or more than a key file holds.
    #[error(
        "the audit key {path} holds {len} bytes; a key is 32 to 4096 bytes (make one with \
         `head -c 32 /dev/urandom > FILE && chmod 600 FILE`)"
    )]
    Length {
        /// The key file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// Group or others may read or write the file.
    #[error(
        "the audit key {path} has mode {mode:o}: group and others must have no access (`chmod 600 \
         {path}`)"
    )]
    Permissions {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Not a regular file.
    #[error("the audit key {path} is not a regular file")]
    NotAFile {
        /// The key file.
        path: PathBuf,
    },
}

/// The initial key of a keyed audit log, read from a key file. Never printed (its `Debug` shows
/// only its id).
pub struct AuditKey {
    bytes: Zeroizing<Vec<u8>>,
}

impl fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuditKey")
            .field("id", &self.id())
            .finish_non_exhaustive()
    }
}

impl AuditKey {
    /// Read a key file: at least [`MIN_KEY_BYTES`] bytes, a regular file, and (on Unix) no
    /// access for group or others.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, AuditKeyError> {
        let path = path.as_ref();
        let io = |source| AuditKeyError::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(AuditKeyError::NotAFile {
                path: path.to_owned(),
            });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(AuditKeyError::Permissions {
                    path: path.to_owned(),
                    mode,
                });
            }
        }
        let mut bytes = Zeroizing::new(Vec::new());
        file.take(MAX_KEY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        let len = bytes.len() as u64;
        if bytes.len() < MIN_KEY_BYTES || len > MAX_KEY_BYTES {
            return Err(AuditKeyError::Length {
                path: path.to_owned(),
                len,
            });
        }
        Ok(AuditKey { bytes })
    }

    /// A key from bytes (at least [`MIN_KEY_BYTES`]), for hosts that keep keys elsewhere.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        (bytes.len() >= MIN_KEY_BYTES).then(|| AuditKey {
            bytes: Zeroizing::new(bytes.to_vec()),
        })
    }

    /// A public name of the key (hex, 16 bytes of an HMAC under it): tells which key a log was
    /// written with, and nothing of the key.
    pub fn id(&self) -> String {
        hex::encode(&hmac(&self.bytes, &[b"key-id"])[..16])
    }

    /// The key of epoch 0.
    pub(crate) fn first_epoch(&self) -> EpochKey {
        EpochKey {
            epoch: 0,
            key: Zeroizing::new(hmac(&self.bytes, &[b"epoch-0"])),
        }
    }

    /// The key of `epoch`, evolved forward from epoch 0.
    pub(crate) fn epoch(&self, epoch: u64) -> EpochKey {
        let mut k = self.first_epoch();
        while k.epoch < epoch {
            k.evolve();
        }
        k
    }
}

/// The key of one epoch. Erased from memory when dropped or evolved.
pub(crate) struct EpochKey {
    pub(crate) epoch: u64,
    key: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for EpochKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EpochKey")
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl EpochKey {
    /// An epoch key from its bytes (what a stolen current key is, in tests of forward security).
    #[cfg(test)]
    pub(crate) fn from_raw(epoch: u64, key: [u8; 32]) -> Self {
        EpochKey {
            epoch,
            key: Zeroizing::new(key),
        }
    }

    /// The raw key, for tests that play the attacker who stole it.
    #[cfg(test)]
    pub(crate) fn raw(&self) -> [u8; 32] {
        *self.key
    }

    /// Step to the next epoch: `K' = HMAC(K, "evolve")`; the old key is overwritten.
    pub(crate) fn evolve(&mut self) {
        let mut next = hmac(&*self.key, &[b"evolve"]);
        self.key.copy_from_slice(&next);
        next.zeroize();
        self.epoch += 1;
    }

    /// The MAC (hex) of `parts` under this epoch's key, in the domain `domain`.
    pub(crate) fn mac(&self, domain: &[u8], parts: &[&[u8]]) -> String {
        let mut all: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
        all.push(domain);
        all.extend_from_slice(parts);
        hex::encode(hmac(&*self.key, &all))
    }

    /// `true` when `mac_hex` is the MAC of `parts`, compared in constant time.
    pub(crate) fn verify(&self, domain: &[u8], parts: &[&[u8]], mac_hex: &str) -> bool {
        let Ok(tag) = hex::decode(mac_hex) else {
            return false;
        };
        let Ok(mut m) = HmacSha256::new_from_slice(&*self.key) else {
            return false;
        };
        m.update(domain);
        for p in parts {
            m.update(p);
        }
        m.verify_slice(&tag).is_ok()
    }
}

/// HMAC-SHA256 of the concatenation of `parts`.
fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let mut m = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable_invalid_length(),
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

#[cold]
fn unreachable_invalid_length() -> ! {
    unreachable!("HMAC accepts keys of every length")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_keys_evolve_one_way_and_differ() {
        let key = AuditKey::from_bytes(&[7; 32]).expect("key");
        let k0 = key.first_epoch();
        let mut k = key.first_epoch();
        k.evolve();
        assert_eq!(k.epoch, 1);
        assert_ne!(k.raw(), k0.raw());
        assert_eq!(key.epoch(1).raw(), k.raw());
        let mac = k.mac(b"line\0", &[b"x"]);
        assert!(k.verify(b"line\0", &[b"x"], &mac));
        assert!(!k0.verify(b"line\0", &[b"x"], &mac));
        assert!(!k.verify(b"line\0", &[b"y"], &mac));
        assert!(AuditKey::from_bytes(&[1; 31]).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn key_files_must_be_long_enough_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k");
        std::fs::write(&path, [3; 32]).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let err = AuditKey::from_file(&path).expect_err("group-readable");
        assert!(
            matches!(err, AuditKeyError::Permissions { mode: 0o640, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 600"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let key = AuditKey::from_file(&path).expect("private key file");
        assert_eq!(key.id().len(), 32);
        assert!(!format!("{key:?}").contains("3, 3"));
        std::fs::write(&path, [3; 31]).expect("write");
        assert!(matches!(
            AuditKey::from_file(&path),
            Err(AuditKeyError::Length { len: 31, .. })
        ));
    }
}
