//! Lexical path arithmetic on absolute `/`-separated strings, and shell glob matching.

/// Lexically fold `rel` onto `base` (`.`, `..`, repeated slashes).
pub fn join(base: &str, rel: &str) -> String {
    let full = if rel.starts_with('/') {
        rel.to_owned()
    } else {
        format!("{base}/{rel}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in full.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `path` is `dir` or lies below it (segment-wise: `/a/bc` is not under `/a/b`).
pub fn under(path: &str, dir: &str) -> bool {
    path == dir || dir == "/" || (path.starts_with(dir) && path[dir.len()..].starts_with('/'))
}

/// Shell glob match of a whole path (`*` and `?` stay within a segment).
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let (ps, ss): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    ps.len() <= ss.len()
        && ps
            .iter()
            .zip(&ss)
            .all(|(p, s)| seg_match(p.as_bytes(), s.as_bytes()))
}

/// `true` when `path` is a directory a match of `pattern` lies in (`src` for `src/*.py`).
pub fn glob_prefix_matches(pattern: &str, path: &str) -> bool {
    let (ps, ss): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    ss.len() < ps.len()
        && ps
            .iter()
            .zip(&ss)
            .all(|(p, s)| seg_match(p.as_bytes(), s.as_bytes()))
}

fn seg_match(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => seg_match(&p[1..], s) || (!s.is_empty() && seg_match(p, &s[1..])),
        (Some(b'?'), Some(_)) => seg_match(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => seg_match(&p[1..], &s[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_folds_dots_and_slashes_and_keeps_absolute_operands() {
        assert_eq!(join("/w", "a/./b//c"), "/w/a/b/c");
        assert_eq!(join("/w/sub", "../x"), "/w/x");
        assert_eq!(join("/w", "../../.."), "/");
        assert_eq!(join("/w", "/etc/passwd"), "/etc/passwd");
        assert_eq!(join("/", ""), "/");
    }

    #[test]
    fn under_compares_whole_segments() {
        assert!(under("/a/b", "/a/b"));
        assert!(under("/a/b/c", "/a/b"));
        assert!(!under("/a/bc", "/a/b"));
        assert!(under("/anything", "/"));
        assert!(!under("/a", "/a/b"));
    }

    #[test]
    fn globs_stay_within_a_segment() {
        assert!(glob_matches("/w/out/*.tmp", "/w/out/a.tmp"));
        assert!(!glob_matches("/w/out/*.tmp", "/w/out/a.txt"));
        assert!(glob_matches("/w/?.rs", "/w/a.rs"));
        assert!(!glob_matches("/w/?.rs", "/w/ab.rs"));
        assert!(!glob_matches("/w/*", "/w"));
        // A match of the pattern's segments covers what lies below it.
        assert!(glob_matches("/w/*", "/w/a/b"));
        assert!(!glob_matches("/w/*.py", "/w/sub/a.rs"));
    }

    #[test]
    fn a_glob_prefix_is_a_directory_a_match_lies_in() {
        assert!(glob_prefix_matches("/w/src/*.py", "/w/src"));
        assert!(glob_prefix_matches("/w/*/x", "/w/any"));
        assert!(!glob_prefix_matches("/w/src/*.py", "/w/src/a.py"));
        assert!(!glob_prefix_matches("/w/src/*.py", "/w/lib"));
    }
}
