//! Interpreters a command line may start, and how they are invoked.

use super::text::Word;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Interp {
    Shell,
    Python,
    Other,
}

pub(super) fn interp_kind(name: &str) -> Option<Interp> {
    match name {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh"
        | "busybox" => Some(Interp::Shell),
        "perl" | "ruby" | "node" | "nodejs" | "php" | "lua" | "deno" | "bun" | "osascript" => {
            Some(Interp::Other)
        }
        n if is_python(n) => Some(Interp::Python),
        _ => None,
    }
}

pub(super) fn is_python(n: &str) -> bool {
    ["python", "pypy"].iter().any(|p| {
        n.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

pub(super) struct InterpUse<'w, 't> {
    pub(super) code: Option<&'w Word<'t>>,
    pub(super) stdin: bool,
    /// `-c` is the last word: the code is the next argument, given at run time (`xargs sh -c`).
    pub(super) code_missing: bool,
}

/// How an interpreter is invoked: inline code (`-c`), a script file, a module, or stdin.
pub(super) fn interp_use<'w, 't>(kind: Interp, args: &'w [Word<'t>]) -> InterpUse<'w, 't> {
    let with_arg: &[&str] = match kind {
        Interp::Shell => &["-o", "-O", "+o", "+O", "--rcfile", "--init-file"],
        Interp::Python => &["-W", "-X", "-Q"],
        Interp::Other => &["-I", "-r", "--require", "-M"],
    };
    let code_flags: &[&str] = match kind {
        Interp::Shell | Interp::Python => &["-c"],
        Interp::Other => &["-e", "-E", "--eval", "-p", "--print", "-r"],
    };
    let mut want_code = false;
    let mut i = 0;
    while i < args.len() {
        let v = args[i].val();
        if want_code {
            return InterpUse {
                code: Some(&args[i]),
                stdin: false,
                code_missing: false,
            };
        }
        if v == "--" {
            return InterpUse {
                code: None,
                stdin: i + 1 >= args.len(),
                code_missing: false,
            };
        }
        if v == "-" || v == "-s" {
            return InterpUse {
                code: None,
                stdin: true,
                code_missing: false,
            };
        }
        if kind == Interp::Python && (v == "-m" || v.starts_with("-m")) {
            return InterpUse {
                code: None,
                stdin: false,
                code_missing: false,
            };
        }
        if v.starts_with('-') || v.starts_with('+') {
            // `perl -pe`, `-ne`, `-lne`: options bundled with the code flag.
            let bundled_e = kind == Interp::Other
                && !v.starts_with("--")
                && v.len() > 2
                && v.ends_with('e')
                && v[1..].chars().all(|c| c.is_ascii_alphabetic());
            if code_flags.contains(&v)
                || bundled_e
                || (kind != Interp::Other
                    && !v.starts_with("--")
                    && v.starts_with('-')
                    && v.contains('c'))
            {
                want_code = true;
            } else if with_arg.contains(&v) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return InterpUse {
            code: None,
            stdin: false,
            code_missing: false,
        };
    }
    InterpUse {
        code: None,
        stdin: !want_code,
        code_missing: want_code,
    }
}

/// `true` for perl code that only substitutes or transliterates text (`s/a/b/g; tr/a-z/A-Z/`):
/// no flag that evaluates the replacement (`e`), nothing else that could run or open anything.
pub(super) fn trivial_perl(code: &str) -> bool {
    code.split(';').all(|part| {
        let p = part.trim();
        if p.is_empty() {
            return true;
        }
        // Code run from inside a pattern or an interpolation.
        if ["(?{", "(??{", "@{[", "${\\"].iter().any(|k| p.contains(k)) {
            return false;
        }
        let (rest, parts) = if let Some(r) = p.strip_prefix("tr") {
            (r, 3)
        } else if let Some(r) = p.strip_prefix('s').or_else(|| p.strip_prefix('y')) {
            (r, 3)
        } else {
            return false;
        };
        let mut chars = rest.chars();
        let Some(d) = chars
            .next()
            .filter(|d| d.is_ascii_punctuation() && !"({[<#$@%&;".contains(*d))
        else {
            return false;
        };
        let (mut seen, mut escaped) = (1, false);
        let mut flags = String::new();
        for c in chars {
            if seen == parts {
                flags.push(c);
            } else if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == d {
                seen += 1;
            }
        }
        seen == parts && flags.chars().all(|f| "gimsxrcdu".contains(f))
    })
}
