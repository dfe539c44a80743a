//! The workspace's files as `file://` resources.

use std::path::Path;

use rmcp::model::Resource as McpResource;

use super::error::ResourceError;
use super::mime::{is_text_mime, mime_of};
use super::uri::{percent_decode, percent_encode_path, shown};
use crate::content::{EmbeddedResource, ResourceBody};
use crate::guard::path::PathGuard;
use crate::guard::workspace::{FileKind, WorkspaceFsError};

/// The workspace's files as `file://` resources, listed and read through the path guard.
#[derive(Debug, Clone)]
pub struct WorkspaceResources {
    guard: PathGuard,
    max_bytes: usize,
    max_listed: usize,
    max_depth: usize,
}

impl WorkspaceResources {
    /// The files of `guard`'s workspace: at most 1 MiB read per file, at most 1000 files listed,
    /// 8 directory levels deep, hidden files (names starting with `.`) not listed.
    pub fn new(guard: PathGuard) -> Self {
        WorkspaceResources {
            guard,
            max_bytes: 1 << 20,
            max_listed: 1000,
            max_depth: 8,
        }
    }

    /// Refuse files larger than `max_bytes`.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// List at most `max` files.
    pub fn with_max_listed(mut self, max: usize) -> Self {
        self.max_listed = max;
        self
    }

    /// The `file://` URI of a path inside the workspace.
    pub fn uri_of(&self, abs: &Path) -> Option<String> {
        abs.to_str()
            .map(|p| format!("file://{}", percent_encode_path(p)))
    }

    /// `true` when `uri` is a `file://` URI (this set answers for all of them).
    pub(super) fn claims(uri: &str) -> bool {
        uri.starts_with("file:")
    }

    /// The decoded absolute path of a `file://` URI.
    pub(super) fn path_of(uri: &str) -> Result<String, ResourceError> {
        let bad = |reason: &str| ResourceError::InvalidUri {
            uri: shown(uri),
            reason: reason.to_owned(),
        };
        let rest = uri
            .strip_prefix("file://")
            .ok_or_else(|| bad("a file URI is `file:///absolute/path`"))?;
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(bad("only local files (`file:///…`) are served"));
        }
        if rest.contains(['?', '#']) {
            return Err(bad("a file URI has no query or fragment"));
        }
        let path = percent_decode(rest).ok_or_else(|| bad("bad percent-encoding or not UTF-8"))?;
        if path.contains('\0') {
            return Err(bad("the path contains a NUL byte"));
        }
        Ok(path)
    }

    pub(super) fn read(&self, uri: &str) -> Result<EmbeddedResource, ResourceError> {
        let path = Self::path_of(uri)?;
        let checked = self
            .guard
            .check(&path)
            .map_err(|e| ResourceError::Refused {
                uri: shown(uri),
                code: e.code(),
                message: e.to_string(),
            })?;
        let fs_err = |e: WorkspaceFsError| {
            if e.is_not_found() {
                ResourceError::NotFound { uri: shown(uri) }
            } else if matches!(e, WorkspaceFsError::Io { .. }) {
                ResourceError::Failed {
                    uri: shown(uri),
                    message: e.to_string(),
                }
            } else {
                ResourceError::Refused {
                    uri: shown(uri),
                    code: e.code(),
                    message: e.to_string(),
                }
            }
        };
        let bytes = checked
            .read(self.max_bytes.saturating_add(1))
            .map_err(fs_err)?;
        if bytes.len() > self.max_bytes {
            return Err(ResourceError::TooLarge {
                uri: shown(uri),
                max: self.max_bytes,
            });
        }
        let mime = mime_of(&path);
        let body = match String::from_utf8(bytes) {
            Ok(text) if mime.is_none_or(is_text_mime) => ResourceBody::Text(text),
            Ok(text) => ResourceBody::Blob(text.into_bytes()),
            Err(e) => ResourceBody::Blob(e.into_bytes()),
        };
        let mime_type = mime.map(str::to_owned).or_else(|| {
            Some(match body {
                ResourceBody::Text(_) => "text/plain".to_owned(),
                ResourceBody::Blob(_) => "application/octet-stream".to_owned(),
            })
        });
        Ok(EmbeddedResource {
            uri: uri.to_owned(),
            mime_type,
            body,
        })
    }

    /// The regular, singly linked, non-hidden files, breadth first, sorted by name within a
    /// directory; symlinks are not followed.
    pub(super) fn list(&self) -> Vec<McpResource> {
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([(String::new(), 0usize)]);
        while let Some((dir, depth)) = queue.pop_front() {
            let Ok(checked) = self.guard.check(if dir.is_empty() { "." } else { &dir }) else {
                continue;
            };
            let Ok(mut entries) = checked.read_dir() else {
                continue;
            };
            entries.sort_by(|a, b| a.name().cmp(b.name()));
            for entry in entries {
                let Some(name) = entry.name().to_str() else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                let rel = if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                match entry.kind() {
                    FileKind::Dir if depth + 1 < self.max_depth => {
                        queue.push_back((rel, depth + 1))
                    }
                    FileKind::File => {
                        if out.len() >= self.max_listed {
                            return out;
                        }
                        let Ok(file) = self.guard.check(&rel) else {
                            continue;
                        };
                        let Ok(meta) = file.symlink_metadata() else {
                            continue;
                        };
                        if meta.kind() != FileKind::File || meta.links() > 1 {
                            continue;
                        }
                        let Some(uri) = self.uri_of(file.as_path()) else {
                            continue;
                        };
                        let mut r = McpResource::new(uri, rel.clone())
                            .with_title(rel.clone())
                            .with_size(meta.len());
                        if let Some(m) = mime_of(&rel) {
                            r = r.with_mime_type(m);
                        }
                        out.push(r);
                    }
                    _ => {}
                }
            }
        }
        out
    }
}
