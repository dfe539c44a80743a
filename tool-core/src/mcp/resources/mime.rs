//! MIME types by file extension, and which of them are text.
//!
//! A short table rather than `mime_guess`: it names only the kinds a workspace resource is
//! expected to be, and an unknown extension stays without a type (read as text when it is
//! UTF-8), where `mime_guess`'s ~1,000-entry table would type files this server has no reason
//! to label (and change what `resources/list` reports).

use std::path::Path;

/// `true` for the MIME types read as text.
pub(super) fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json" | "application/toml" | "application/yaml" | "image/svg+xml"
        )
}

/// The MIME type a file name's extension implies, for the common kinds.
pub(super) fn mime_of(name: &str) -> Option<&'static str> {
    let ext = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "zip" => "application/zip",
        _ => return None,
    })
}
