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
            if code_flags.contains(&v)
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
