//! Commands on files: readers, listers, creators, deleters, mode setters, copies and links,
//! `tee`, `truncate`, `dd`; the operands and options of each.

use tree_sitter::Node;

use crate::effects::{url_host, Direction, EffectKind, EffectTarget};
use crate::judge::join_norm;

use super::cmd::Cmd;
use super::text::Word;
use super::walk::Bash;

/// Commands whose operands are files they read.
pub(super) const READERS: &[&str] = &[
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "nl",
    "base64",
    "base32",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "wc",
    "sort",
    "uniq",
    "cut",
    "file",
    "stat",
    "source",
    ".",
    "diff",
    "cmp",
    "gzip",
    "zcat",
    "bzip2",
    "xz",
    "tar",
    "zip",
    "openssl",
    "gpg",
    "jq",
    "yq",
    "sed",
    "awk",
];
pub(super) const LISTERS: &[&str] = &["ls", "find", "tree", "du", "dir", "locate"];
pub(super) const CREATORS: &[&str] = &["touch", "mkdir", "mkfifo", "mknod"];
pub(super) const DELETERS: &[&str] = &["rm", "rmdir", "unlink", "shred", "srm", "wipe"];
pub(super) const MODE_SETTERS: &[&str] = &["chmod", "chown", "chgrp", "chattr", "setfacl"];

/// `true` for the commands [`Bash::file_command`] knows.
pub(super) fn is_file_command(name: &str) -> bool {
    [READERS, LISTERS, CREATORS, DELETERS, MODE_SETTERS]
        .iter()
        .any(|l| l.contains(&name))
        || matches!(
            name,
            "grep"
                | "egrep"
                | "fgrep"
                | "rg"
                | "cp"
                | "mv"
                | "install"
                | "rsync"
                | "scp"
                | "ln"
                | "tee"
                | "truncate"
                | "dd"
        )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// The effects of a command on files; `false` when `c` is not one.
    pub(super) fn file_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (inv, name, at, ev) = (c.inv, c.name, c.at, c.ev);
        let (vals, operands) = (&c.vals, &c.operands);
        match name {
            n if READERS.contains(&n) => {
                let operands = operands_of(n, &inv.args);
                // The program is the first operand unless an option gives it (`sed -e`, `awk -f`).
                let program_in_option = vals.iter().any(|v| {
                    matches!(*v, "-e" | "-f" | "--expression" | "--file")
                        || v.starts_with("--expression=")
                        || v.starts_with("--file=")
                });
                let skip = usize::from(
                    matches!(n, "sed" | "awk" | "openssl" | "jq" | "yq")
                        && !(matches!(n, "sed" | "awk") && program_in_option),
                );
                // `sed -i` edits its files in place; `sort -o FILE` writes FILE.
                let in_place = n == "sed"
                    && vals
                        .iter()
                        .any(|v| v.starts_with("--in-place") || is_short_flag(v, 'i'));
                for w in operands.iter().skip(skip) {
                    self.file_effect(EffectKind::FileRead, w, at, ev);
                    if in_place {
                        self.file_effect(EffectKind::FileWrite, w, at, ev);
                    }
                }
                if n == "sort" {
                    if let Some(i) = vals.iter().position(|v| *v == "-o") {
                        if let Some(w) = inv.args.get(i + 1) {
                            self.file_effect(EffectKind::FileWrite, w, at, ev);
                        }
                    }
                }
                if matches!(n, "source" | ".") {
                    if let Some(w) = operands.first() {
                        let target = self.path_target(w);
                        self.run_written(&target, inv.node);
                        self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
                    }
                }
            }
            "grep" | "egrep" | "fgrep" | "rg" => {
                let has_e = vals.iter().any(|v| *v == "-e" || *v == "-f");
                for w in operands.iter().skip(usize::from(!has_e)) {
                    self.file_effect(EffectKind::FileRead, w, at, ev);
                }
            }
            n if LISTERS.contains(&n) => {
                let roots: Vec<&Word<'t>> = if n == "find" {
                    inv.args
                        .iter()
                        .take_while(|a| !a.val().starts_with(['-', '(', '!']))
                        .collect()
                } else {
                    operands.clone()
                };
                let delete = n == "find" && vals.contains(&"-delete");
                if roots.is_empty() && self.cwd.is_some() {
                    // No operand: the working directory (`.` where the script starts).
                    let c = join_norm(self.cwd.as_deref().unwrap_or_default(), ".");
                    let kind = if delete {
                        EffectKind::FileDelete
                    } else {
                        EffectKind::DirList
                    };
                    self.sink.effect(kind, EffectTarget::Resolved(c), at, ev);
                }
                let listed: Vec<String> = roots
                    .iter()
                    .flat_map(|w| self.path_target(w).values().to_vec())
                    .collect();
                self.last_listed = match listed.len() {
                    0 => self
                        .cwd
                        .clone()
                        .filter(|c| c.starts_with('/'))
                        .map(EffectTarget::Resolved),
                    1 => Some(EffectTarget::Resolved(listed[0].clone())),
                    _ => Some(EffectTarget::Set(listed)),
                };
                for w in roots {
                    self.file_effect(EffectKind::DirList, w, at, ev);
                    if delete {
                        self.file_effect(EffectKind::FileDelete, w, at, ev);
                    }
                }
            }
            n if CREATORS.contains(&n) => {
                for w in operands {
                    self.file_effect(EffectKind::FileCreate, w, at, ev);
                }
            }
            n if DELETERS.contains(&n) => {
                for w in operands {
                    self.file_effect(EffectKind::FileDelete, w, at, ev);
                }
            }
            n if MODE_SETTERS.contains(&n) => {
                for w in operands.iter().skip(1) {
                    self.file_effect(EffectKind::Chmod, w, at, ev);
                }
            }
            "cp" | "mv" | "install" | "rsync" | "scp" | "ln" => {
                let Some((dest, srcs)) = operands.split_last() else {
                    return true;
                };
                let remote = |w: &Word<'_>| {
                    let v = w.val();
                    v.split_once(':')
                        .is_some_and(|(h, _)| !h.contains('/') && !h.is_empty())
                };
                for w in srcs {
                    if remote(w) {
                        continue;
                    }
                    let kind = if name == "mv" {
                        EffectKind::FileDelete
                    } else {
                        EffectKind::FileRead
                    };
                    let symbolic = name == "ln"
                        && vals.iter().any(|v| {
                            *v == "--symbolic"
                                || (v.starts_with('-') && !v.starts_with("--") && v.contains('s'))
                        });
                    let relative = w.lit.as_deref().is_some_and(|v| !v.starts_with(['/', '~']));
                    if symbolic && relative {
                        // A relative link target is taken from the link's own directory.
                        if let EffectTarget::Resolved(d) = self.path_target(dest) {
                            let dir = d.rsplit_once('/').map_or("", |(h, _)| h);
                            let src = w.lit.clone().unwrap_or_default();
                            let target = EffectTarget::Resolved(join_norm(dir, &src));
                            self.sink.effect(kind, target, at, ev);
                            continue;
                        }
                    }
                    self.file_effect(kind, w, at, ev);
                    if remote(dest) {
                        let (host, port) = url_host(&format!("x://{}", dest.val()));
                        let sends = Some(w.val().to_owned());
                        self.sink
                            .network(None, host, port, Direction::Upload, sends, at, ev);
                    }
                }
                if !remote(dest) {
                    let kind = if name == "ln" {
                        EffectKind::Link
                    } else {
                        EffectKind::FileWrite
                    };
                    self.file_effect(kind, dest, at, ev);
                }
            }
            "tee" | "truncate" => {
                for w in operands {
                    self.file_effect(EffectKind::FileWrite, w, at, ev);
                }
            }
            "dd" => {
                for w in &inv.args {
                    let v = w.val();
                    let kind = if v.starts_with("if=") {
                        EffectKind::FileRead
                    } else if v.starts_with("of=") {
                        EffectKind::FileWrite
                    } else {
                        continue;
                    };
                    let target = match self.path_target(w) {
                        EffectTarget::Resolved(p) => EffectTarget::Resolved(
                            p.split_once('=').map_or(p.clone(), |(_, r)| r.to_owned()),
                        ),
                        t => t,
                    };
                    self.sink.effect(kind, target, at, ev);
                }
            }
            _ => return false,
        }
        true
    }

    /// The roots of the `find` command `node` (the words after `find` before its first test).
    pub(super) fn find_roots(&self, node: Node<'t>) -> EffectTarget {
        let mut cursor = node.walk();
        let words: Vec<Word<'t>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "variable_assignment" && c.kind() != "file_redirect")
            .map(|c| {
                self.word(
                    c.named_child(0)
                        .filter(|_| c.kind() == "command_name")
                        .unwrap_or(c),
                )
            })
            .collect();
        let Some(start) = words.iter().position(|w| w.val() == "find") else {
            return EffectTarget::Unknown;
        };
        let mut out: Vec<String> = Vec::new();
        for w in words[start + 1..]
            .iter()
            .take_while(|w| !w.val().starts_with(['-', '(', '!']))
        {
            match self.path_target(w) {
                EffectTarget::Unknown => return EffectTarget::Unknown,
                t => out.extend(t.values().iter().cloned()),
            }
        }
        match out.len() {
            0 => self
                .cwd
                .clone()
                .filter(|c| c.starts_with('/'))
                .map_or(EffectTarget::Unknown, EffectTarget::Resolved),
            1 => EffectTarget::Resolved(out.remove(0)),
            _ => EffectTarget::Set(out),
        }
    }
}

/// `true` when `v` is a bundle of short options holding `c` (`-i`, `-ni`, not `--in`).
pub(super) fn is_short_flag(v: &str, c: char) -> bool {
    v.strip_prefix('-').is_some_and(|b| {
        !b.starts_with('-')
            && !b.is_empty()
            && b.chars().all(|x| x.is_ascii_alphabetic())
            && b.contains(c)
    })
}

/// The short options of a reader that take the next word as their value (`head -n 20`).
fn value_options(name: &str) -> &'static [&'static str] {
    match name {
        "head" | "tail" => &["-n", "-c"],
        "sort" => &["-k", "-t", "-o", "-S", "-T"],
        "cut" => &["-d", "-f", "-c", "-b"],
        "uniq" => &["-f", "-s", "-w"],
        "xxd" => &["-l", "-s", "-c", "-g"],
        "od" => &["-N", "-j", "-t", "-A", "-w"],
        "base64" | "base32" => &["-w"],
        "nl" => &["-w", "-s", "-b"],
        "strings" => &["-n", "-t"],
        "awk" => &["-F", "-v", "-f"],
        "sed" => &["-e", "-f"],
        "diff" => &["-U", "-C"],
        "zip" => &["-x", "-i", "-P"],
        _ => &[],
    }
}

/// The operands of command `name`: its words without options and the values they take.
pub(super) fn operands_of<'a, 't>(name: &str, args: &'a [Word<'t>]) -> Vec<&'a Word<'t>> {
    let takes = value_options(name);
    let mut out = Vec::new();
    let (mut done, mut skip) = (false, false);
    for a in args {
        let v = a.val();
        if skip {
            skip = false;
            continue;
        }
        if !done && v == "--" {
            done = true;
            continue;
        }
        if done || !v.starts_with('-') || v == "-" {
            out.push(a);
        } else if takes.contains(&v) {
            skip = true;
        }
    }
    out
}
