//! Store URLs as they may be printed: without their password.

/// `url` with the password (and a user given alone, which Redis reads as the password) replaced
/// by `***`, for logs, errors and `doctor`. Text that is not a URL with an authority is
/// returned as `<store url>`, since it may be a mistyped secret.
///
/// ```
/// use tool_core::store::redact_url;
/// assert_eq!(redact_url("redis://:hunter2@10.0.0.5:6379/0"), "redis://:***@10.0.0.5:6379/0");
/// assert_eq!(redact_url("rediss://app:hunter2@cache:6380/1"), "rediss://app:***@cache:6380/1");
/// assert_eq!(redact_url("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
/// assert_eq!(redact_url("hunter2"), "<store url>");
/// ```
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<store url>".to_owned();
    };
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+')
    {
        return "<store url>".to_owned();
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some(at) = authority.rfind('@') else {
        return url.to_owned();
    };
    let (userinfo, host) = (&authority[..at], &authority[at..]);
    let user = match userinfo.split_once(':') {
        Some((user, _password)) => format!("{user}:***"),
        None => "***".to_owned(),
    };
    format!("{scheme}://{user}{host}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_survive() {
        for url in [
            "redis://:s3cret@h:1/0",
            "redis://u:s3cret@h:1/0",
            "redis://s3cret@h:1",
            "rediss://u:s3c:ret@h:1/2?x=1",
            "redis://u:s3cret@[::1]:6379",
            "redis://u:p@ss@s3cret@h",
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains("s3c"), "{url} -> {shown}");
            assert!(shown.contains("***"), "{url} -> {shown}");
        }
    }

    #[test]
    fn what_is_not_a_url_is_not_shown() {
        for text in ["s3cret", "://s3cret", "re dis://s3cret@h"] {
            assert_eq!(redact_url(text), "<store url>");
        }
    }
}
