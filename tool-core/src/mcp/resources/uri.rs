//! URI checks and percent-encoding.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::error::ResourceError;

/// The longest URI accepted, in a registration or a request.
pub const MAX_URI_LEN: usize = 2048;

/// A URI cut to [`MAX_URI_LEN`] bytes (at a character boundary), for error messages.
pub(super) fn shown(uri: &str) -> String {
    let mut end = uri.len().min(MAX_URI_LEN);
    while !uri.is_char_boundary(end) {
        end -= 1;
    }
    uri[..end].to_owned()
}

/// Check a URI's shape: bounded length, no whitespace or control characters, a scheme.
pub fn check_uri(uri: &str) -> Result<(), ResourceError> {
    let bad = |reason: &str| ResourceError::InvalidUri {
        uri: shown(uri),
        reason: reason.to_owned(),
    };
    if uri.is_empty() {
        return Err(bad("empty"));
    }
    if uri.len() > MAX_URI_LEN {
        return Err(bad("too long"));
    }
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("contains whitespace or control characters"));
    }
    let Some((scheme, _)) = uri.split_once(':') else {
        return Err(bad("no scheme"));
    };
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return Err(bad("the scheme is not valid"));
    }
    Ok(())
}

/// Decode `%XX` escapes; `None` on a bad escape (a `%` not followed by two hex digits) or bytes
/// that are not UTF-8.
pub(super) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let well_formed = bytes.iter().enumerate().all(|(i, &b)| {
        b != b'%'
            || bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_decode_str(s).decode_utf8().ok().map(String::from)
}

/// Everything but unreserved characters (RFC 3986) and `/`.
const PATH_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Percent-encode a path for a `file://` URI: everything but unreserved characters and `/`.
pub(super) fn percent_encode_path(path: &str) -> String {
    utf8_percent_encode(path, PATH_ESCAPED).to_string()
}
