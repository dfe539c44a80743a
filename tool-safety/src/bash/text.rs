//! Pure text helpers of the bash scanner: words, option splitting, unescaping, look-alikes.

use tree_sitter::Node;

/// A shell word after quote removal: the literal value when fully static, an approximation
/// (`$HOME` → `~`, other expansions kept as `$NAME`) otherwise.
#[derive(Debug, Clone)]
pub(super) struct Word<'t> {
    pub(super) node: Node<'t>,
    pub(super) lit: Option<String>,
    /// Only filled once the word turns out dynamic (`lit` is `None`): the common static word
    /// then costs one string, not two.
    pub(super) approx: String,
    /// Quotes, ANSI-C strings or inner backslashes: how names get disguised.
    pub(super) disguised: bool,
}

impl Word<'_> {
    pub(super) fn val(&self) -> &str {
        self.lit.as_deref().unwrap_or(&self.approx)
    }
}

/// Options (before `--`) and operands of an argument list.
pub(super) fn split_opts<'v>(vals: &[&'v str]) -> (Vec<&'v str>, Vec<&'v str>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut done = false;
    for v in vals {
        if !done && *v == "--" {
            done = true;
        } else if !done && v.starts_with('-') && v.len() > 1 {
            opts.push(*v);
        } else {
            operands.push(*v);
        }
    }
    (opts, operands)
}

/// `of=/x`, `-d@/x`, `file=@/x`, `--data-binary=@/x` → the path.
pub(super) fn strip_assign_prefix(v: &str) -> &str {
    if let Some(i) = v.find('@') {
        return &v[i + 1..];
    }
    if let Some((k, rest)) = v.split_once('=') {
        if !k.contains('/') {
            return rest;
        }
    }
    v
}

pub(super) fn is_setuid_mode(mode: &str) -> bool {
    if mode.chars().all(|c| c.is_ascii_digit()) && mode.len() == 4 {
        return mode
            .as_bytes()
            .first()
            .is_some_and(|d| matches!(d, b'2' | b'4' | b'6' | b'3' | b'5' | b'7'));
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(_, perms)| perms.contains('s'))
    })
}

/// Backslash removal for an unquoted word: `\r` → `r`, `\\` → `\`.
pub(super) fn unescape_bare(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                if n != '\n' {
                    out.push(n);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Backslash removal inside double quotes: only before `$`, `` ` ``, `"`, `\` and newline.
pub(super) fn unescape_dq(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decode the body of a `$'...'` string.
pub(super) fn decode_ansi_c(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    let take_digits =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('e' | 'E') => out.push('\u{1b}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('x') => {
                let (v, n) = take_digits(&mut chars, 16, 2);
                if n > 0 {
                    out.extend(char::from_u32(v));
                }
            }
            Some('u') => {
                let (v, _) = take_digits(&mut chars, 16, 4);
                out.extend(char::from_u32(v));
            }
            Some('U') => {
                let (v, _) = take_digits(&mut chars, 16, 8);
                out.extend(char::from_u32(v));
            }
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v));
            }
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Map look-alike letters (Cyrillic, Greek, full-width) to ASCII and drop invisible characters.
pub(super) fn deconfuse(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(c);
    }
    let m = match c {
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' => return None,
        'а' | 'α' => 'a',
        'в' => 'b',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'ɡ' => 'g',
        'һ' => 'h',
        'і' | 'ι' => 'i',
        'ј' => 'j',
        'к' | 'κ' => 'k',
        'ⅼ' | 'ӏ' => 'l',
        'м' => 'm',
        'п' | 'η' => 'n',
        'о' | 'ο' | 'σ' => 'o',
        'р' | 'ρ' => 'p',
        'ѕ' => 's',
        'т' | 'τ' => 't',
        'υ' => 'u',
        'ν' => 'v',
        'ѡ' | 'ω' => 'w',
        'х' | 'χ' => 'x',
        'у' | 'γ' => 'y',
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        other => other,
    };
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c_decoding() {
        assert_eq!(decode_ansi_c("\\x72\\x6d"), "rm");
        assert_eq!(decode_ansi_c("\\162\\155"), "rm");
        assert_eq!(decode_ansi_c("\\u0072m"), "rm");
    }

    #[test]
    fn setuid_modes() {
        for m in ["4755", "u+s", "g+s", "+s", "2755", "u=rwxs"] {
            assert!(is_setuid_mode(m), "{m}");
        }
        for m in ["755", "0644", "u+x", "go-w"] {
            assert!(!is_setuid_mode(m), "{m}");
        }
    }
}
