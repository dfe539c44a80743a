//! What each command will touch, with its words resolved by constant propagation: variables
//! assigned literal values, `$(echo …)` of literals, brace expansion, and the tracked `cd`.

use tree_sitter::Node;

use crate::effects::{
    brace_expand, glob_candidates, has_glob, is_secret_env, is_url, url_host, Direction,
    EffectKind, EffectTarget,
};
use crate::judge::join_norm;

use super::text::*;
use super::walk::*;

/// Most values a word may stand for before it counts as unknown.
const MAX_VALUES: usize = 32;

/// Commands whose operands are files they read.
const READERS: &[&str] = &[
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
const LISTERS: &[&str] = &["ls", "find", "tree", "du", "dir", "locate"];
const CREATORS: &[&str] = &["touch", "mkdir", "mkfifo", "mknod"];
const DELETERS: &[&str] = &["rm", "rmdir", "unlink", "shred", "srm", "wipe"];
const MODE_SETTERS: &[&str] = &["chmod", "chown", "chgrp", "chattr", "setfacl"];
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "python", "python3", "perl", "ruby", "node",
];

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// The values word `n` may stand for; `None` when computed at run time.
    pub(super) fn values(&self, n: Node<'t>) -> Option<Vec<String>> {
        let t = self.text(n);
        let out = match n.kind() {
            "word" | "number" => {
                let v = if t.contains('\\') {
                    unescape_bare(t)
                } else {
                    t.to_owned()
                };
                brace_expand(&v)
            }
            "raw_string" => vec![t.trim_start_matches('\'').trim_end_matches('\'').to_owned()],
            "string" => {
                let mut acc = vec![String::new()];
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    let part = match c.kind() {
                        "string_content" => vec![unescape_dq(self.text(c))],
                        _ => self.values(c)?,
                    };
                    acc = product(&acc, &part)?;
                }
                acc
            }
            "concatenation" => {
                let mut acc = vec![String::new()];
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    acc = product(&acc, &self.values(c)?)?;
                }
                // `{a,b}` split over several nodes.
                acc.iter().flat_map(|v| brace_expand(v)).collect()
            }
            "simple_expansion" | "expansion" => {
                let var = n
                    .named_child(0)
                    .filter(|v| matches!(v.kind(), "variable_name" | "special_variable_name"))?;
                if n.named_child_count() != 1 {
                    return None;
                }
                match self.text(var) {
                    "HOME" => vec!["~".to_owned()],
                    "PWD" => vec![self.cwd.clone().filter(|c| !c.is_empty())?],
                    name => self.vars.get(name)?.clone(),
                }
            }
            "command_substitution" => {
                // `$(echo /)`, `$(printf %s /etc)`: a literal printed.
                let cmd = n.named_child(0).filter(|c| c.kind() == "command")?;
                if n.named_child_count() != 1 {
                    return None;
                }
                let inv = self.invocations(cmd).into_iter().next()?;
                let args: Vec<&str> = inv
                    .args
                    .iter()
                    .map(|a| a.lit.as_deref())
                    .collect::<Option<_>>()?;
                match inv.name.as_deref()? {
                    "echo" => vec![args
                        .iter()
                        .filter(|a| !a.starts_with('-'))
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" ")],
                    "printf" if args.len() == 2 && args[0] == "%s" => vec![args[1].to_owned()],
                    "printf" if args.len() == 1 && !args[0].contains('%') => {
                        vec![args[0].to_owned()]
                    }
                    "pwd" => vec![self.cwd.clone().filter(|c| !c.is_empty())?],
                    _ => return None,
                }
            }
            _ => return None,
        };
        (out.len() <= MAX_VALUES).then_some(out)
    }

    /// The target of word `w` as a path, joined onto the tracked working directory.
    fn path_target(&self, w: &Word<'t>) -> EffectTarget {
        let Some(vals) = self.values(w.node) else {
            return EffectTarget::Unknown;
        };
        let mut out: Vec<String> = Vec::new();
        for v in vals {
            let p = if v.starts_with('/') || v.starts_with('~') {
                join_norm("", &v)
            } else {
                match &self.cwd {
                    Some(c) => join_norm(c, &v),
                    None => return EffectTarget::Unknown,
                }
            };
            let quoted = matches!(w.node.kind(), "string" | "raw_string");
            let globbed = if !quoted && has_glob(&p) {
                glob_candidates(&p)
            } else {
                Vec::new()
            };
            for p in std::iter::once(p).chain(globbed) {
                if !out.contains(&p) && out.len() < MAX_VALUES {
                    out.push(p);
                }
            }
        }
        match out.len() {
            0 => EffectTarget::Unknown,
            1 => EffectTarget::Resolved(out.remove(0)),
            _ => EffectTarget::Set(out),
        }
    }

    /// A literal path joined onto the tracked working directory.
    pub(super) fn str_target(&self, p: &str) -> EffectTarget {
        if p.contains('$') {
            return EffectTarget::Unknown;
        }
        if p.starts_with('/') || p.starts_with('~') {
            return EffectTarget::Resolved(join_norm("", p));
        }
        match &self.cwd {
            Some(c) => EffectTarget::Resolved(join_norm(c, p)),
            None => EffectTarget::Unknown,
        }
    }

    fn file_effect(&mut self, kind: EffectKind, w: &Word<'t>, at: (u32, u32), ev: &str) {
        let target = self.path_target(w);
        self.sink.effect(kind, target, at, ev);
    }

    /// Record an assignment for constant propagation (`X=/etc`, `local X=…`, `export X=…`).
    pub(super) fn bind(&mut self, name: &str, value: Option<Node<'t>>) {
        let vals = match value {
            None => Some(vec![String::new()]),
            Some(v) if self.text(v) == "$!" => {
                self.own_pids.push(name.to_owned());
                None
            }
            Some(v) => self.values(v),
        };
        match vals {
            Some(v) => {
                self.vars.insert(name.to_owned(), v);
            }
            None => {
                self.vars.remove(name);
            }
        }
    }

    /// `$NAME` / `${NAME}` of a credential variable the script did not set itself.
    pub(super) fn env_read(&mut self, n: Node<'t>) {
        let Some(var) = n.named_child(0).filter(|v| v.kind() == "variable_name") else {
            return;
        };
        let name = self.text(var);
        if !is_secret_env(name) || self.vars.contains_key(name) {
            return;
        }
        let at = self.base.unwrap_or(pos(n));
        let ev = self.text(n);
        self.sink.effect(
            EffectKind::EnvRead {
                name: name.to_owned(),
            },
            EffectTarget::Resolved(name.to_owned()),
            at,
            ev,
        );
    }

    /// A redirection of a command to or from a file.
    pub(super) fn redirect_effect(&mut self, op: &str, dest: Node<'t>, at: Node<'t>, ev: &str) {
        let kind = match op {
            ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => EffectKind::FileWrite,
            "<" => EffectKind::FileRead,
            _ => return,
        };
        let w = self.word(dest);
        let pos = self.base.unwrap_or(pos(at));
        self.file_effect(kind, &w, pos, ev);
    }

    /// The effects of one unwrapped command.
    pub(super) fn command_effects(&mut self, inv: &Inv<'t>, name: &str) {
        self.system_effects(inv, name);
        if inv.wrappers.iter().any(|w| w == "xargs") {
            // `xargs -a FILE CMD`: the items come from FILE.
            for (o, w) in &inv.wrapper_opts {
                if matches!(o.as_str(), "-a" | "--arg-file") {
                    let at = self.base.unwrap_or(pos(inv.node));
                    let ev = self.ev(inv);
                    let target = self.path_target(w);
                    self.sink.effect(EffectKind::FileRead, target, at, ev);
                }
            }
        }
        let path_named = inv
            .name_word
            .as_ref()
            .is_some_and(|w| w.val().contains('/'));
        if !path_named && !is_effect_command(name) {
            return;
        }
        let ev = self.ev(inv);
        let at = self.base.unwrap_or(pos(inv.node));
        let vals: Vec<&str> = inv.args.iter().map(|a| a.val()).collect();
        let operands: Vec<&Word<'t>> = {
            let mut done = false;
            inv.args
                .iter()
                .filter(|a| {
                    let v = a.val();
                    if !done && v == "--" {
                        done = true;
                        return false;
                    }
                    done || !v.starts_with('-') || v == "-"
                })
                .collect()
        };
        if let Some(w) = &inv.name_word {
            let v = w.val();
            if v.contains('/') && !v.starts_with("/usr/") && !v.starts_with("/bin/") {
                let target = self.path_target(w);
                self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
            }
        }
        if inv.wrappers.last().is_some_and(|w| w == "xargs") && DELETERS.contains(&name) {
            // `find / | xargs rm -rf`: the operands are what the pipeline listed.
            let target = self.last_listed.clone().unwrap_or(EffectTarget::Unknown);
            self.sink.effect(EffectKind::FileDelete, target, at, ev);
        }
        if inv.wrappers.iter().any(|w| w == "find") && vals.contains(&"{}") {
            // `find ROOT -exec rm {} \;`: `{}` is each file under the roots.
            let kind = if DELETERS.contains(&name) || name == "mv" {
                Some(EffectKind::FileDelete)
            } else if MODE_SETTERS.contains(&name) {
                Some(EffectKind::Chmod)
            } else if READERS.contains(&name) || matches!(name, "cp" | "grep" | "curl") {
                Some(EffectKind::FileRead)
            } else {
                None
            };
            if let Some(kind) = kind {
                let target = self.find_roots(inv.node);
                self.sink.effect(kind, target, at, ev);
            }
            if matches!(name, "curl" | "wget") {
                let sends = self.find_roots(inv.node).values().first().cloned();
                self.network(None, None, None, Direction::Upload, sends, at, ev);
            }
            return;
        }
        match name {
            "printenv" | "env" | "export" | "declare" | "set" if operands.is_empty() => {
                // The whole environment (`env`, `printenv`, `export -p`).
                let dumps = match name {
                    "set" => vals.is_empty(),
                    "export" => vals.is_empty() || vals == ["-p"],
                    "declare" => vals.is_empty() || vals == ["-x"] || vals == ["-p"],
                    _ => true,
                };
                if dumps {
                    self.sink.effect(
                        EffectKind::EnvRead {
                            name: "*".to_owned(),
                        },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                }
            }
            "printenv" => {
                for w in &operands {
                    let name = w.val().to_owned();
                    self.sink.effect(
                        EffectKind::EnvRead { name: name.clone() },
                        EffectTarget::Resolved(name),
                        at,
                        ev,
                    );
                }
            }
            "rg" if vals
                .iter()
                .any(|v| *v == "--pre" || v.starts_with("--pre=")) =>
            {
                let pre = vals.iter().enumerate().find_map(|(i, v)| {
                    v.strip_prefix("--pre=").map(str::to_owned).or_else(|| {
                        (*v == "--pre")
                            .then(|| vals.get(i + 1).map(|s| (*s).to_owned()))
                            .flatten()
                    })
                });
                let target = pre.map_or(EffectTarget::Unknown, |p| self.str_target(&p));
                self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
            }
            "cd" | "pushd" => {
                self.cwd = match operands.first() {
                    None => Some("~".to_owned()),
                    Some(w) => match self.path_target(w) {
                        EffectTarget::Resolved(p) => Some(p),
                        _ => None,
                    },
                };
            }
            n if SHELLS.contains(&n) => {
                let inline = vals.iter().any(|v| matches!(*v, "-c" | "-e" | "-m" | "-E"));
                if let Some(w) = operands.first().filter(|_| !inline) {
                    if !w.val().starts_with('-') {
                        let target = self.path_target(w);
                        self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
                    }
                }
            }
            "tar" => self.tar_effects(inv, at, ev),
            "gzip" | "bzip2" | "xz" | "gunzip" | "bunzip2" | "unxz" => {
                self.compress_effects(name, &vals, &operands, at, ev);
            }
            "zip" => {
                // `zip ARCHIVE FILE...`: the archive is written, the files read.
                let operands = operands_of(name, &inv.args);
                if let Some((archive, files)) = operands.split_first() {
                    self.file_effect(EffectKind::FileWrite, archive, at, ev);
                    for w in files {
                        self.file_effect(EffectKind::FileRead, w, at, ev);
                    }
                }
            }
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
                for w in &operands {
                    self.file_effect(EffectKind::FileCreate, w, at, ev);
                }
            }
            n if DELETERS.contains(&n) => {
                for w in &operands {
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
                    return;
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
                        self.network(None, host, port, Direction::Upload, sends, at, ev);
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
                for w in &operands {
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
            "curl" | "wget" | "aria2c" | "http" | "https" => self.http_effects(inv, name, at, ev),
            "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ssh" | "ftp" | "sftp" => {
                let host = operands
                    .iter()
                    .map(|w| w.val())
                    .find(|v| !v.starts_with('-'));
                let (host, port) = host.map_or((None, None), |h| url_host(&format!("x://{h}")));
                self.network(None, host, port, Direction::Both, None, at, ev);
            }
            "kill" => {
                let mut skip_next = false;
                for w in &inv.args {
                    let v = w.val();
                    if skip_next {
                        skip_next = false;
                        continue;
                    }
                    if v == "-s" || v == "-n" {
                        skip_next = true;
                        continue;
                    }
                    if v == "-l" || v == "-L" {
                        return;
                    }
                    let own = v.starts_with('%')
                        || v == "$!"
                        || v == "$$"
                        || v.strip_prefix('$')
                            .is_some_and(|n| self.own_pids.iter().any(|p| p == n));
                    let signal = v.starts_with('-')
                        && v != "-1"
                        && !v[1..].chars().all(|c| c.is_ascii_digit() && v.len() > 3);
                    if own || signal {
                        continue;
                    }
                    let target = v.to_owned();
                    self.sink.effect(
                        EffectKind::ProcessControl { target },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                }
            }
            "pkill" | "killall" | "killall5" | "skill" => {
                let target = operands
                    .first()
                    .map_or(name.to_owned(), |w| w.val().to_owned());
                let target = if name == "killall5" {
                    name.to_owned()
                } else {
                    target
                };
                self.sink.effect(
                    EffectKind::ProcessControl { target },
                    EffectTarget::Unknown,
                    at,
                    ev,
                );
            }
            // `crontab -l`, `at -l`: listing the jobs installs nothing.
            "crontab" | "at"
                if vals.contains(&"-l")
                    && !vals.iter().any(|v| matches!(*v, "-r" | "-e" | "-")) => {}
            "crontab" | "at" | "batch" => {
                self.sink.effect(
                    EffectKind::Persistence,
                    EffectTarget::Resolved(name.to_owned()),
                    at,
                    ev,
                );
            }
            _ => {}
        }
    }

    /// `tar`: the archive written (`c`, `r`, `u`) or read (`x`, `t`), the files put in it (after
    /// `-C DIR`, relative to DIR), the directory an extraction writes to.
    fn tar_effects(&mut self, inv: &Inv<'t>, at: (u32, u32), ev: &str) {
        let args = &inv.args;
        let (mut mode, mut archive, mut dir) = (None, None::<EffectTarget>, None::<String>);
        let mut files: Vec<EffectTarget> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let v = args[i].val();
            let bundle = if i == 0 && !v.starts_with('-') {
                Some(v)
            } else if v.starts_with('-') && !v.starts_with("--") {
                Some(&v[1..])
            } else {
                None
            };
            if let Some(b) = bundle.filter(|b| b.chars().all(|c| c.is_ascii_alphabetic())) {
                for c in b.chars() {
                    if matches!(c, 'c' | 'x' | 't' | 'r' | 'u') {
                        mode = Some(c);
                    }
                }
                // Options that take a value take the next words, in order (`-cf A`, `-C D`).
                for c in b.chars().filter(|c| matches!(c, 'f' | 'C')) {
                    i += 1;
                    let Some(w) = args.get(i) else { break };
                    if c == 'f' {
                        archive = Some(self.path_target(w));
                    } else {
                        dir = w.lit.clone();
                    }
                }
            } else if let Some(a) = v.strip_prefix("--file=") {
                archive = Some(self.str_target(a));
            } else if let Some(d) = v.strip_prefix("--directory=") {
                dir = Some(d.to_owned());
            } else if let Some(m) = v.strip_prefix("--") {
                match m {
                    "create" => mode = Some('c'),
                    "extract" | "get" => mode = Some('x'),
                    "list" => mode = Some('t'),
                    "append" => mode = Some('r'),
                    _ => {}
                }
            } else if !v.starts_with('-') {
                files.push(match (&dir, args[i].lit.as_deref()) {
                    (Some(d), Some(f)) if !f.starts_with(['/', '~']) => {
                        self.str_target(&join_norm(d, f))
                    }
                    (None, _) => self.path_target(&args[i]),
                    _ => self.path_target(&args[i]),
                });
            }
            i += 1;
        }
        let archive = archive.filter(|a| a.values() != ["-"]);
        match mode {
            Some('c' | 'r' | 'u') => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileWrite, a, at, ev);
                }
                for f in files {
                    self.sink.effect(EffectKind::FileRead, f, at, ev);
                }
            }
            Some('x') => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileRead, a, at, ev);
                }
                let to = dir.map_or_else(|| self.str_target("."), |d| self.str_target(&d));
                self.sink.effect(EffectKind::FileWrite, to, at, ev);
            }
            _ => {
                if let Some(a) = archive {
                    self.sink.effect(EffectKind::FileRead, a, at, ev);
                }
            }
        }
    }

    /// `gzip FILE` reads FILE and writes `FILE.gz` (and removes FILE unless `-k`); `-d` the other
    /// way round; `-c` writes to the standard output.
    fn compress_effects(
        &mut self,
        name: &str,
        vals: &[&str],
        operands: &[&Word<'t>],
        at: (u32, u32),
        ev: &str,
    ) {
        let flag = |c: char, long: &str| vals.iter().any(|v| *v == long || is_short_flag(v, c));
        let decompress = name.starts_with("gun")
            || name.starts_with("bun")
            || name == "unxz"
            || flag('d', "--decompress");
        let to_stdout = flag('c', "--stdout") || flag('t', "--test") || flag('l', "--list");
        let keep = flag('k', "--keep");
        let ext = match name {
            "bzip2" | "bunzip2" => ".bz2",
            "xz" | "unxz" => ".xz",
            _ => ".gz",
        };
        for w in operands {
            self.file_effect(EffectKind::FileRead, w, at, ev);
            if to_stdout {
                continue;
            }
            let Some(v) = w.lit.as_deref() else { continue };
            let out = if decompress {
                v.strip_suffix(ext)
                    .or_else(|| v.strip_suffix(".tgz"))
                    .map(str::to_owned)
            } else {
                Some(format!("{v}{ext}"))
            };
            if let Some(o) = out {
                let t = self.str_target(&o);
                self.sink.effect(EffectKind::FileCreate, t, at, ev);
            }
            if !keep {
                self.file_effect(EffectKind::FileDelete, w, at, ev);
            }
        }
    }

    /// The roots of the `find` command `node` (the words after `find` before its first test).
    fn find_roots(&self, node: Node<'t>) -> EffectTarget {
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

    #[allow(clippy::too_many_arguments)]
    fn network(
        &mut self,
        url: Option<String>,
        host: Option<String>,
        port: Option<u16>,
        direction: Direction,
        sends: Option<String>,
        at: (u32, u32),
        ev: &str,
    ) {
        let target = host
            .clone()
            .map_or(EffectTarget::Unknown, EffectTarget::Resolved);
        let kind = EffectKind::Network {
            url,
            host,
            port,
            direction,
            sends,
        };
        self.sink.effect(kind, target, at, ev);
    }

    /// `curl` / `wget`: the URLs, what is uploaded, where downloads land.
    fn http_effects(&mut self, inv: &Inv<'t>, name: &str, at: (u32, u32), ev: &str) {
        let args = &inv.args;
        let mut sends: Option<String> = None;
        let mut out_file: Option<&Word<'t>> = None;
        let mut remote_name = false;
        let mut urls: Vec<String> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let v = args[i].val();
            let next = args.get(i + 1);
            match v {
                "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "-F"
                | "--form" | "--post-file" | "--body-file" | "-T" | "--upload-file" => {
                    if let Some(n) = next {
                        let resolved = self.values(n.node).and_then(|v| v.into_iter().next());
                        let d = resolved.as_deref().unwrap_or(n.val());
                        let file = if matches!(
                            v,
                            "-T" | "--upload-file" | "--post-file" | "--body-file"
                        ) {
                            Some(d)
                        } else {
                            d.split_once('@')
                                .map(|(_, f)| f)
                                .or_else(|| d.strip_prefix('<'))
                        };
                        if let Some(f) = file.filter(|f| !f.is_empty()) {
                            let target = self.str_target(f);
                            let first = target.values().first().cloned();
                            sends = Some(first.unwrap_or_else(|| f.to_owned()));
                            self.sink.effect(EffectKind::FileRead, target, at, ev);
                        } else if d.contains("$(…)") {
                            sends = Some("command output".to_owned());
                        }
                    }
                    i += 2;
                    continue;
                }
                "-o" | "--output" | "-O" if name == "wget" || v != "-O" => {
                    out_file = next;
                    i += 2;
                    continue;
                }
                "-O" | "--remote-name" => remote_name = true,
                _ => {
                    if let Some(vals) = self.values(args[i].node) {
                        urls.extend(vals.into_iter().filter(|u| is_url(u)));
                    } else if is_url(v) {
                        urls.push(v.to_owned());
                    }
                }
            }
            i += 1;
        }
        if let Some(f) = v_data(args) {
            let target = self.str_target(&f);
            sends.get_or_insert(target.values().first().cloned().unwrap_or(f));
            self.sink.effect(EffectKind::FileRead, target, at, ev);
        }
        let direction = if sends.is_some() {
            Direction::Upload
        } else {
            Direction::Download
        };
        if urls.is_empty() {
            self.network(None, None, None, direction, sends.clone(), at, ev);
        }
        for u in &urls {
            let (host, port) = url_host(u);
            self.network(
                Some(u.clone()),
                host,
                port,
                direction,
                sends.clone(),
                at,
                ev,
            );
        }
        if direction == Direction::Download {
            if let Some(w) = out_file {
                if w.val() != "-" {
                    self.file_effect(EffectKind::FileWrite, w, at, ev);
                }
            } else if remote_name || name == "wget" {
                for u in &urls {
                    let base = u
                        .rsplit('/')
                        .next()
                        .filter(|b| !b.is_empty())
                        .unwrap_or("index.html");
                    let w = Word {
                        node: inv.node,
                        lit: Some(base.to_owned()),
                        approx: String::new(),
                        disguised: false,
                    };
                    let target = match &w.lit {
                        Some(b) => match &self.cwd {
                            Some(c) => EffectTarget::Resolved(join_norm(c, b)),
                            None => EffectTarget::Unknown,
                        },
                        None => EffectTarget::Unknown,
                    };
                    self.sink.effect(EffectKind::FileWrite, target, at, ev);
                }
            }
        }
    }
}

/// `true` for the commands [`Bash::command_effects`] knows something about.
fn is_effect_command(name: &str) -> bool {
    [READERS, LISTERS, CREATORS, DELETERS, MODE_SETTERS, SHELLS]
        .iter()
        .any(|l| l.contains(&name))
        || matches!(
            name,
            "cd" | "pushd"
                | "gunzip"
                | "bunzip2"
                | "unxz"
                | "grep"
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
                | "curl"
                | "wget"
                | "aria2c"
                | "http"
                | "https"
                | "nc"
                | "ncat"
                | "netcat"
                | "socat"
                | "telnet"
                | "ssh"
                | "ftp"
                | "sftp"
                | "kill"
                | "pkill"
                | "killall"
                | "killall5"
                | "skill"
                | "crontab"
                | "at"
                | "batch"
                | "printenv"
                | "env"
                | "export"
                | "declare"
                | "set"
        )
}

/// `true` when `v` is a bundle of short options holding `c` (`-i`, `-ni`, not `--in`).
fn is_short_flag(v: &str, c: char) -> bool {
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

/// `--data=@file` and `-d@file` spelt as one word.
fn v_data(args: &[Word<'_>]) -> Option<String> {
    args.iter().find_map(|a| {
        let v = a.val();
        [
            "--data-binary=@",
            "--data=@",
            "-d@",
            "--upload-file=",
            "--post-file=",
            "--body-file=",
            "-T",
        ]
        .iter()
        .find_map(|p| v.strip_prefix(p))
        .filter(|f| !f.is_empty() && !f.starts_with('-'))
        .map(str::to_owned)
    })
}

/// Every `a + b`, or `None` past [`MAX_VALUES`].
fn product(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len().saturating_mul(b.len()) > MAX_VALUES {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| format!("{x}{y}")))
            .collect(),
    )
}
