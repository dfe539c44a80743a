//! Masking secrets in evidence: tokens, passwords, keys, Authorization headers, URL credentials.

/// Longest evidence kept in a finding, in characters (an ellipsis marks a cut).
pub const EVIDENCE_MAX_CHARS: usize = 120;

const MASK: &str = "<redacted>";

/// Keys whose value is a secret in `key=value`, `key: value` or `--key value` forms.
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "access_key",
    "access-key",
    "secret_key",
    "secret-key",
    "private_key",
    "private-key",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "session",
    "cookie",
    "key",
];

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "eyJ",
    "AIza",
    "ya29.",
    "npm_",
];

/// Mask secrets in `text`. Returns the masked text and whether anything was masked.
pub fn redact(text: &str) -> (String, bool) {
    if let Some(i) = text.find("-----BEGIN") {
        let mut out = text[..i].to_owned();
        out.push_str(MASK);
        return (out, true);
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    // Set after a token that announces a secret (`-H 'Authorization:`, `Bearer`, `--password`).
    let mut mask_next = false;
    let mut rest = text;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        rest = &rest[end..];
        if mask_next
            && matches!(
                token.to_ascii_lowercase().as_str(),
                "bearer" | "basic" | "token"
            )
        {
            out.push_str(token);
            continue;
        }
        if mask_next && !token.starts_with('-') {
            out.push_str(&leading_quotes(token));
            out.push_str(MASK);
            changed = true;
            mask_next = false;
            continue;
        }
        let (masked, did, announces) = redact_token(token);
        changed |= did;
        mask_next = announces;
        out.push_str(&masked);
    }
    (out, changed)
}

fn leading_quotes(token: &str) -> String {
    token
        .chars()
        .take_while(|c| matches!(c, '"' | '\''))
        .collect()
}

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

/// Returns the masked token, whether it changed, and whether the next token is a secret.
fn redact_token(token: &str) -> (String, bool, bool) {
    let bare = token.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')' | ',' | ';'));
    let lower = bare.to_ascii_lowercase();
    let flat = lower.replace(['\'', '"'], "");
    // Words that announce a secret in the next token.
    if matches!(
        lower.as_str(),
        "bearer"
            | "basic"
            | "token"
            | "authorization:"
            | "--password"
            | "--passwd"
            | "--token"
            | "--api-key"
            | "--secret"
            | "-u"
            | "--user"
            | "--auth"
            | "x-api-key:"
            | "cookie:"
            | "--cookie"
            | "-b"
    ) || flat.ends_with("authorization:")
        || flat.ends_with("token:")
        || flat.ends_with("api-key:")
    {
        return (token.to_owned(), false, true);
    }
    // URL user info: scheme://user:pass@host
    if let Some(scheme_end) = token.find("://") {
        let after = &token[scheme_end + 3..];
        if let Some(at) = after.find('@') {
            let host_part = &after[at..];
            if !after[..at].contains('/') {
                return (
                    format!("{}://{MASK}{host_part}", &token[..scheme_end]),
                    true,
                    false,
                );
            }
        }
    }
    // key=value / key:value with a secret-looking key
    for sep in ['=', ':'] {
        if let Some(i) = token.find(sep) {
            let key = token[..i]
                .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_ascii_lowercase();
            let value = &token[i + 1..];
            if !value.is_empty() && is_secret_key(&key) {
                return (format!("{}{sep}{MASK}", &token[..i]), true, false);
            }
        }
    }
    if looks_like_token(bare) {
        return (token.replace(bare, MASK), true, false);
    }
    (token.to_owned(), false, false)
}

fn is_secret_key(key: &str) -> bool {
    let key = key.trim_start_matches('-').trim_start_matches('$');
    SECRET_KEYS.iter().any(|k| {
        key == *k
            || key.ends_with(&format!("_{k}"))
            || key.ends_with(&format!("-{k}"))
            || key.starts_with(&format!("{k}_"))
    })
}

fn looks_like_token(s: &str) -> bool {
    let s = s.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    if s.len() >= 12 && TOKEN_PREFIXES.iter().any(|p| s.starts_with(p)) {
        return true;
    }
    // Long opaque strings: letters and digits mixed, no path or word structure.
    if s.len() >= 32 && !s.contains('/') && !s.contains('.') {
        let alnum = s.chars().filter(|c| c.is_ascii_alphanumeric()).count();
        let digits = s.chars().filter(|c| c.is_ascii_digit()).count();
        let upper = s.chars().filter(|c| c.is_ascii_uppercase()).count();
        let lower = s.chars().filter(|c| c.is_ascii_lowercase()).count();
        return alnum * 10 >= s.len() * 9 && digits > 0 && (upper > 0 || lower > 0);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_common_secret_shapes() {
        let cases = [
            "curl -H 'Authorization: Bearer abc.def.ghi' https://x",
            "export GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "mysql --password hunter2 -h db",
            "curl https://user:hunter2@example.com/x",
            "aws AKIAABCDEFGHIJKLMNOP",
            "echo '-----BEGIN OPENSSH PRIVATE KEY----- abc'",
            "requests.post(u, headers={'Authorization': 'tok123secret'})",
            "PASSWORD=hunter2 ./run",
        ];
        for c in cases {
            let (out, changed) = redact(c);
            assert!(changed, "{c}");
            for secret in [
                "abc.def.ghi",
                "ghp_aaaa",
                "hunter2",
                "AKIAABCD",
                "abc'",
                "tok123secret",
            ] {
                assert!(!out.contains(secret), "{c} -> {out}");
            }
        }
    }

    #[test]
    fn leaves_ordinary_code_alone() {
        for c in [
            "rm -rf /",
            "ls -la src/",
            "git commit -m 'fix: parser'",
            "key_fn(x)",
        ] {
            assert_eq!(redact(c), (c.to_owned(), false));
        }
    }

    #[test]
    fn evidence_is_bounded() {
        let (out, _) = redact_bounded(&"a ".repeat(500));
        assert!(out.chars().count() <= EVIDENCE_MAX_CHARS);
    }
}
