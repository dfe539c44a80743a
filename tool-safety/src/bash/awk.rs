//! `awk` programs: the commands they run (`system("…")`, `"cmd" | getline`, `print | "cmd"`)
//! and the files they write (`print > "file"`) or read (`getline < "file"`).

use tree_sitter::Node;

use crate::catalog::{finding, id};
use crate::effects::EffectKind;

use super::interp::{interp_kind, Interp};
use super::walk::*;

/// What an awk program does beyond its input and output.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AwkAction {
    /// Runs this shell command line.
    Shell(String),
    /// Runs a command built at run time.
    Dynamic,
    /// Writes or appends to this file.
    Write(String),
    /// Reads this file.
    Read(String),
}

/// A string literal of the program: where it starts and ends (exclusive), and its value.
struct Lit {
    start: usize,
    end: usize,
    value: String,
}

fn literals(p: &[u8]) -> Vec<Lit> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'"' => {
                let start = i;
                let mut v = Vec::new();
                i += 1;
                while i < p.len() && p[i] != b'"' {
                    if p[i] == b'\\' && i + 1 < p.len() {
                        i += 1;
                        v.push(match p[i] {
                            b'n' => b'\n',
                            b't' => b'\t',
                            c => c,
                        });
                    } else {
                        v.push(p[i]);
                    }
                    i += 1;
                }
                i = (i + 1).min(p.len());
                out.push(Lit {
                    start,
                    end: i,
                    value: String::from_utf8_lossy(&v).into_owned(),
                });
            }
            b'#' => {
                while i < p.len() && p[i] != b'\n' {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn skip_ws(p: &[u8], mut i: usize) -> usize {
    while i < p.len() && p[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn skip_ws_back(p: &[u8], mut i: usize) -> usize {
    while i > 0 && p[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    i
}

/// `true` when the statement holding byte `at` starts with `print` or `printf`.
fn in_print(p: &str, at: usize) -> bool {
    let head = &p[..at];
    let start = head.rfind([';', '{', '}', '\n']).map_or(0, |i| i + 1);
    let stmt = head[start..].trim_start();
    stmt.starts_with("print")
}

/// The actions of the awk program `p`.
pub(super) fn awk_actions(p: &str) -> Vec<AwkAction> {
    let b = p.as_bytes();
    let lits = literals(b);
    let in_lit = |at: usize| lits.iter().any(|l| at >= l.start && at < l.end);
    let lit_at = |at: usize| lits.iter().find(|l| l.start == at);
    let lit_ending = |at: usize| lits.iter().find(|l| l.end == at);
    let word_at = |at: usize, w: &str| {
        p[at..].starts_with(w)
            && !in_lit(at)
            && (at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_'))
            && b.get(at + w.len())
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
    };
    let mut out = Vec::new();
    for (at, _) in p.match_indices("system") {
        if !word_at(at, "system") {
            continue;
        }
        let open = skip_ws(b, at + 6);
        if b.get(open) != Some(&b'(') {
            continue;
        }
        let arg = skip_ws(b, open + 1);
        match lit_at(arg) {
            Some(l) if b.get(skip_ws(b, l.end)) == Some(&b')') => {
                out.push(AwkAction::Shell(l.value.clone()))
            }
            _ => out.push(AwkAction::Dynamic),
        }
    }
    for (at, _) in p.match_indices("getline") {
        if !word_at(at, "getline") {
            continue;
        }
        let before = skip_ws_back(b, at);
        if before > 0 && b[before - 1] == b'|' && !(before > 1 && b[before - 2] == b'|') {
            // `"cmd" | getline`: the command is what stands before the pipe.
            match lit_ending(skip_ws_back(b, before - 1)) {
                Some(l) => out.push(AwkAction::Shell(l.value.clone())),
                None => out.push(AwkAction::Dynamic),
            }
            continue;
        }
        // `getline [var] < "file"`.
        let mut j = skip_ws(b, at + 7);
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        let j = skip_ws(b, j);
        if b.get(j) == Some(&b'<') {
            if let Some(l) = lit_at(skip_ws(b, j + 1)) {
                out.push(AwkAction::Read(l.value.clone()));
            }
        }
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_lit(i) || !(c == b'|' || c == b'>') || !in_print(p, i) {
            i += 1;
            continue;
        }
        if c == b'|' && b.get(i + 1) == Some(&b'|') {
            i += 2;
            continue;
        }
        let op_end = if c == b'>' && b.get(i + 1) == Some(&b'>') {
            i + 2
        } else {
            i + 1
        };
        let target = skip_ws(b, op_end);
        let after_getline = p[target..].starts_with("getline");
        match (c, lit_at(target)) {
            (_, _) if after_getline => {}
            (b'|', Some(l)) => out.push(AwkAction::Shell(l.value.clone())),
            (b'|', None) => out.push(AwkAction::Dynamic),
            (_, Some(l)) => out.push(AwkAction::Write(l.value.clone())),
            _ => {}
        }
        i = op_end;
    }
    out
}

/// `true` for a command line that is just an interpreter reading its code from stdin (`sh`,
/// `bash -s`, `python3 -`).
fn reads_code_from_stdin(code: &str) -> bool {
    let mut words = code.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let name = first.rsplit('/').next().unwrap_or(first);
    interp_kind(name).is_some_and(|k| k != Interp::Other)
        && words.all(|w| w == "-" || w.starts_with('-') && !w.contains('c'))
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// Scan the inline program of an `awk` command: the commands it runs are scanned as bash,
    /// one built at run time needs a human, the files it writes and reads are effects.
    pub(super) fn awk_program(&mut self, program: &str, ev: &str, node: Node<'t>) {
        let at = self.base.unwrap_or(pos(node));
        for a in awk_actions(program) {
            match a {
                // `print | "sh"`: the program's output is run as shell code.
                AwkAction::Shell(code) if reads_code_from_stdin(&code) => {
                    self.push(finding(id::BASH_INDIRECT_EXEC, ev), node)
                }
                AwkAction::Shell(code) => self.nested(Interp::Shell, &code, node),
                AwkAction::Dynamic => self.push(finding(id::BASH_INDIRECT_EXEC, ev), node),
                AwkAction::Write(f) => {
                    self.check_write(&f, ev, node);
                    let t = self.str_target(&f);
                    self.sink.effect(EffectKind::FileWrite, t, at, ev);
                }
                AwkAction::Read(f) => {
                    let t = self.str_target(&f);
                    self.sink.effect(EffectKind::FileRead, t, at, ev);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_commands_and_files() {
        use AwkAction::*;
        assert_eq!(
            awk_actions(r#"BEGIN{system("rm -rf /")}"#),
            vec![Shell("rm -rf /".into())]
        );
        assert_eq!(awk_actions(r#"BEGIN{system("rm " $1)}"#), vec![Dynamic]);
        assert_eq!(
            awk_actions(r#"BEGIN{while (("cat /etc/shadow" | getline l) > 0) print l}"#),
            vec![Shell("cat /etc/shadow".into())]
        );
        assert_eq!(awk_actions(r#"{ cmd | getline x }"#), vec![Dynamic]);
        assert_eq!(
            awk_actions(r#"{print > "/etc/cron.d/x"}"#),
            vec![Write("/etc/cron.d/x".into())]
        );
        assert_eq!(
            awk_actions(r#"{printf "%s\n", $1 >> "out/log.txt"}"#),
            vec![Write("out/log.txt".into())]
        );
        assert_eq!(
            awk_actions(r#"{print $1 | "sh"}"#),
            vec![Shell("sh".into())]
        );
        assert!(reads_code_from_stdin("sh") && reads_code_from_stdin("/bin/bash -s"));
        assert!(!reads_code_from_stdin("sort -u") && !reads_code_from_stdin("sh -c 'ls'"));
        assert_eq!(
            awk_actions(r#"BEGIN{while ((getline line < "/etc/passwd") > 0) n++}"#),
            vec![Read("/etc/passwd".into())]
        );
        // Comparisons, `||` and strings that merely mention the words do nothing.
        assert!(awk_actions(r#"$3 > 10 || $2 == "system(x)" {print $1}"#).is_empty());
        assert!(awk_actions(r#"{s+=$3} END {print s}"#).is_empty());
        assert!(awk_actions(r#"-F, '{print $2}'"#).is_empty());
    }
}
