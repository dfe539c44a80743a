//! Masking secrets in evidence: the workspace's one redactor ([`tool_rules::redact`]), and the
//! bound on how much evidence a finding keeps.

pub use tool_rules::redact::redact;

/// Longest evidence kept in a finding, in characters (an ellipsis marks a cut).
pub const EVIDENCE_MAX_CHARS: usize = 120;

/// Redact then cut to [`EVIDENCE_MAX_CHARS`].
pub(crate) fn redact_bounded(text: &str) -> (String, bool) {
    let (masked, changed) = redact(text.trim());
    let mut out: String = masked
        .chars()
        .map(|c| {
            if c == '\n' || c == '\r' || c == '\t' {
                ' '
            } else {
                c
            }
        })
        .take(EVIDENCE_MAX_CHARS)
        .collect();
    if masked.chars().count() > EVIDENCE_MAX_CHARS {
        out.pop();
        out.push('…');
    }
    (out, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_is_bounded() {
        let (out, _) = redact_bounded(&"a ".repeat(500));
        assert!(out.chars().count() <= EVIDENCE_MAX_CHARS);
    }
}
