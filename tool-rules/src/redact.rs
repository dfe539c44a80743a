//! Masking secrets in text: provider tokens, `key=value` secrets, Authorization headers, URL
//! credentials and private keys, wherever they sit in a string (inside a path or a URL too).
//!
//! One function, [`redact`], serves the script scanner's evidence and every string the audit log
//! records, so what counts as a secret is decided in one place.

/// What a masked secret is replaced with.
pub const MASK: &str = "<redacted>";

/// Keys whose value is a secret in `key=value`, `key: value` or `--key value` forms, also as the
/// last part of a longer name (`GITHUB_TOKEN`, `x-api-key`, `db.password`).
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
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
    "signature",
    "sig",
    "jwt",
    "key",
];

/// Prefixes of well-known token formats, with the shortest tail after the prefix that makes a
/// token of that shape (shorter ones are words: `sk-learn`, `AKIA` alone).
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    // AWS access key ids: 16 more upper-case letters and digits.
    ("AKIA", 12),
    ("ASIA", 12),
    // GitHub.
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("github_pat_", 20),
    // GitLab.
    ("glpat-", 16),
    // Slack.
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxa-", 10),
    ("xoxe-", 10),
    ("xoxs-", 10),
    ("xapp-", 10),
    // OpenAI (`sk-`, `sk-proj-`), Anthropic (`sk-ant-`), OpenRouter and others.
    ("sk-", 16),
    // Stripe.
    ("sk_live_", 12),
    ("sk_test_", 12),
    ("rk_live_", 12),
    ("rk_test_", 12),
    ("whsec_", 16),
    // JWTs (`{"` base64url-encoded).
    ("eyJ", 10),
    // Google API keys and OAuth access tokens.
    ("AIza", 20),
    ("ya29.", 16),
    // npm, PyPI, Hugging Face, Groq, xAI, Replicate, Shopify, SendGrid, age.
    ("npm_", 20),
    ("pypi-", 20),
    ("hf_", 20),
    ("gsk_", 20),
    ("xai-", 20),
    ("r8_", 20),
    ("shpat_", 20),
    ("shpss_", 20),
    ("SG.", 20),
    ("AGE-SECRET-KEY-", 20),
];

/// Mask secrets in `text`. Returns the masked text and whether anything was masked.
///
/// Masked: a private key (from its `BEGIN` line to the end of the text); a token of a known
/// provider shape anywhere in the text, including as a segment of a path or URL
/// (`/tmp/sk-proj-…/x`); the value of a secret-named key (`token=…`, `?api_key=…`,
/// `GITHUB_TOKEN=…`, `"password": "…"`); the word after `Bearer`, `--password` and the like; the
/// user info of a URL (`https://user:pass@host`); and long opaque strings of mixed letters and
/// digits.
pub fn redact(text: &str) -> (String, bool) {
    if let Some(i) = private_key_start(text) {
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

/// Where a private key block starts: its `-----BEGIN` (any dashes before `BEGIN`), or a `BEGIN`
/// later followed by `PRIVATE KEY`.
fn private_key_start(text: &str) -> Option<usize> {
    if let Some(i) = text.find("-----BEGIN") {
        return Some(i);
    }
    let upper = text.to_ascii_uppercase();
    let key = upper.find("PRIVATE KEY")?;
    let begin = upper[..key].rfind("BEGIN")?;
    Some(begin - (upper[..begin].len() - upper[..begin].trim_end_matches('-').len()))
}

fn leading_quotes(token: &str) -> String {
    token
        .chars()
        .take_while(|c| matches!(c, '"' | '\''))
        .collect()
}

/// Returns the masked token, whether it changed, and whether the next token is a secret.
fn redact_token(token: &str) -> (String, bool, bool) {
    if announces_secret(token) {
        return (token.to_owned(), false, true);
    }
    let (token, userinfo) = mask_userinfo(token);
    let (token, segments) = mask_segments(&token);
    (token, userinfo || segments, false)
}

/// Words that announce a secret in the next token: `Bearer`, `--password`, a secret-named key
/// with its separator and nothing after it (`Authorization:`, `"token":`, `PASSWORD=`).
fn announces_secret(token: &str) -> bool {
    let bare = token.trim_matches(|c| matches!(c, '"' | '\'' | '(' | ')' | ',' | ';' | '{'));
    let lower = bare.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "bearer"
            | "basic"
            | "token"
            | "--password"
            | "--passwd"
            | "--token"
            | "--api-key"
            | "--secret"
            | "-u"
            | "--user"
            | "--auth"
            | "--cookie"
            | "-b"
    ) {
        return true;
    }
    let flat = lower.replace(['\'', '"'], "");
    let Some(key) = flat.strip_suffix(':').or_else(|| flat.strip_suffix('=')) else {
        return false;
    };
    let key = key.rsplit(|c: char| !is_segment(c)).next().unwrap_or(key);
    is_secret_key(key)
}

/// Mask the user info of every URL in `token` (`scheme://user:pass@host`).
fn mask_userinfo(token: &str) -> (String, bool) {
    let mut out = String::with_capacity(token.len());
    let mut changed = false;
    let mut rest = token;
    while let Some(i) = rest.find("://") {
        let (head, after) = rest.split_at(i + 3);
        out.push_str(head);
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(at) if at > 0 => {
                out.push_str(MASK);
                out.push_str(&authority[at..]);
                changed |= &authority[..at] != MASK;
            }
            _ => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    (out, changed)
}

/// A character of a segment: what tokens are made of. Everything else (`/`, `?`, `&`, `=`, `:`,
/// `@`, quotes, brackets) separates segments, so a token inside a path or URL is found.
fn is_segment(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '~')
}

/// Where the value of a `key=value` pair ends. Not at `/`: base64 values hold it.
fn ends_value(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'&' | b';'
                | b','
                | b'#'
                | b'\''
                | b'"'
                | b')'
                | b']'
                | b'}'
                | b'|'
                | b'<'
                | b'>'
                | b'`'
        )
}

/// Mask token-shaped segments and the values of secret-named keys.
fn mask_segments(token: &str) -> (String, bool) {
    let bytes = token.as_bytes();
    let mut out = String::with_capacity(token.len());
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        let Some(c) = token[i..].chars().next() else {
            break;
        };
        if !is_segment(c) {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let start = i;
        while i < bytes.len() && is_segment(char::from(bytes[i])) {
            i += 1;
        }
        let segment = &token[start..i];
        if i < bytes.len() && matches!(bytes[i], b'=' | b':') && is_secret_key(segment) {
            let mut value = i + 1;
            while value < bytes.len() && matches!(bytes[value], b'"' | b'\'') {
                value += 1;
            }
            let mut end = value;
            while end < bytes.len() && !ends_value(bytes[end]) {
                end += 1;
            }
            if end > value {
                out.push_str(segment);
                out.push_str(&token[i..value]);
                out.push_str(MASK);
                changed = true;
                i = end;
                continue;
            }
        }
        if looks_like_token(segment) {
            out.push_str(MASK);
            changed = true;
        } else {
            out.push_str(segment);
        }
    }
    (out, changed)
}

fn is_secret_key(key: &str) -> bool {
    let key = key
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase();
    SECRET_KEYS.iter().any(|k| {
        key == *k
            || key
                .strip_suffix(k)
                .is_some_and(|head| head.ends_with(['_', '-', '.']))
            || key
                .strip_prefix(k)
                .is_some_and(|tail| tail.starts_with('_'))
    })
}

fn looks_like_token(segment: &str) -> bool {
    let s = segment
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim_end_matches('.');
    for (prefix, min_tail) in TOKEN_PREFIXES {
        if let Some(tail) = s.strip_prefix(prefix) {
            // A real token's tail is long, or random enough to hold a digit.
            if tail.len() >= *min_tail
                && (tail.len() >= 16 || tail.bytes().any(|b| b.is_ascii_digit()))
            {
                return true;
            }
        }
    }
    // Long opaque strings: letters and digits mixed, no word structure.
    if s.len() >= 32 && !s.contains('.') {
        let alnum = s.chars().filter(char::is_ascii_alphanumeric).count();
        let digits = s.chars().filter(char::is_ascii_digit).count();
        let letters = s.chars().filter(char::is_ascii_alphabetic).count();
        return alnum * 10 >= s.len() * 9 && digits > 0 && letters > 0;
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
            "/home/user/.ssh/id_ed25519",
            "https://example.com/a/b?page=2&sort=asc",
            "/tmp/sk-learn-notes.txt",
            "123e4567-e89b-12d3-a456-426614174000",
        ] {
            assert_eq!(redact(c), (c.to_owned(), false));
        }
    }

    #[test]
    fn masks_tokens_inside_paths_urls_and_names() {
        let key = "sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9";
        let cases = [
            format!("/tmp/{key}/x"),
            format!("/tmp/{key}"),
            format!("./{key}.txt"),
            format!("https://api.example.com/v1?token={}", "a1b2c3"),
            format!("https://api.example.com/v1?x=1&api_key={}", "a1b2c3"),
            format!("https://a1b2c3:{}@example.com/x", "p"),
            "GITHUB_TOKEN=a1b2c3".to_owned(),
            "db.password:a1b2c3".to_owned(),
            format!("\"{key}\""),
            "/run/BEGIN RSA PRIVATE KEY a1b2c3".to_owned(),
        ];
        for c in cases {
            let (out, changed) = redact(&c);
            assert!(changed, "{c}");
            assert!(
                !out.contains("a1b2c3") && !out.contains(key),
                "{c} -> {out}"
            );
        }
        assert_eq!(redact(&format!("/tmp/{key}/x")).0, "/tmp/<redacted>/x");
    }

    #[test]
    fn redaction_is_idempotent() {
        let (once, _) = redact("cat /tmp/sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3/x?token=abc");
        assert_eq!(redact(&once), (once.clone(), false));
    }
}
