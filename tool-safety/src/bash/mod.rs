//! The bash scanner: tree-sitter-bash syntax tree → normalized commands → findings.

// Arms dispatch on the command or callee name; folding their conditions into guards would
// blur which name an arm is about.
#![allow(clippy::collapsible_match, clippy::collapsible_if)]

use std::collections::HashMap;

use tree_sitter::Node;

use crate::catalog::finding;
use crate::paths::{self, PathClass};
use crate::report::SafetyFinding;
use crate::sink::{CommandView, Sink};
use crate::ScriptLang;

mod parse;

pub(crate) use parse::PARSER;

/// Deepest syntax tree walked before the scan gives up (a stack guard, not a style limit).
const MAX_TREE_DEPTH: usize = 400;

/// Scan `src` as bash into `sink`. `nest` counts re-parsed strings (`bash -c`, `eval`, heredocs);
/// `base` is the outer position every nested finding is reported at.
pub(crate) fn scan(
    src: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
) -> Option<tree_sitter::Tree> {
    let tree = parse::parse_bash_for_scan(src, sink, nest, base)?;
    let root = tree.root_node();
    let mut b = Bash {
        src,
        sink,
        nest,
        base,
        cred_read: None,
        net_send: false,
        too_deep: false,
        inv_cache: HashMap::new(),
    };
    if root.has_error() {
        let at = first_error(root).unwrap_or(root);
        b.push(finding("BASH-SYNTAX", b.text(at)), at);
    }
    b.visit(root);
    if let (Some((ev, pos)), true) = (b.cred_read.take(), b.net_send) {
        let pos = b.base.or(Some(pos));
        b.sink.push_at(finding("BASH-CRED-EXFIL", &ev), pos);
    }
    Some(tree)
}

/// The first `ERROR` or `MISSING` node, in document order, found without recursion.
pub(crate) fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}

/// Every node under `root` (inclusive), in document order, without recursion.
fn descendants<'t>(root: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        out.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

/// A shell word after quote removal: the literal value when fully static, an approximation
/// (`$HOME` → `~`, other expansions kept as `$NAME`) otherwise.
#[derive(Debug, Clone)]
struct Word<'t> {
    node: Node<'t>,
    lit: Option<String>,
    /// Only filled once the word turns out dynamic (`lit` is `None`): the common static word
    /// then costs one string, not two.
    approx: String,
    /// Quotes, ANSI-C strings or inner backslashes: how names get disguised.
    disguised: bool,
}

impl Word<'_> {
    fn val(&self) -> &str {
        self.lit.as_deref().unwrap_or(&self.approx)
    }
}

/// One command after unwrapping `sudo`, `env`, `xargs`, `timeout`, `find -exec`...
struct Inv<'t> {
    node: Node<'t>,
    name_word: Option<Word<'t>>,
    /// Normalized command name; `None` when computed at run time.
    name: Option<String>,
    args: Vec<Word<'t>>,
    assigns: Vec<(String, Word<'t>)>,
    wrappers: Vec<String>,
}

#[derive(Clone, Copy, Default)]
struct Flags(u16);

impl Flags {
    const DOWNLOAD: u16 = 1;
    const DECODE: u16 = 2;
    const SHELL_STDIN: u16 = 4;
    const SHELL_ANY: u16 = 8;
    const NET: u16 = 16;
    const NETCAT: u16 = 32;
    const CRED: u16 = 64;
    fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Interp {
    Shell,
    Python,
    Other,
}

fn interp_kind(name: &str) -> Option<Interp> {
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

fn is_python(n: &str) -> bool {
    ["python", "pypy"].iter().any(|p| {
        n.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

const NET_SEND: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "rsync",
    "ssh", "http", "https", "aria2c",
];

struct Bash<'a, 's, 't> {
    src: &'s str,
    sink: &'a mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
    cred_read: Option<(String, (u32, u32))>,
    net_send: bool,
    too_deep: bool,
    /// Invocations built while looking ahead (pipeline stages, substitutions), by node id, so the
    /// walk does not build them a second time when it reaches the command.
    inv_cache: HashMap<usize, Vec<Inv<'t>>>,
}

fn pos(n: Node<'_>) -> (u32, u32) {
    let p = n.start_position();
    (
        u32::try_from(p.row).unwrap_or(u32::MAX).saturating_add(1),
        u32::try_from(p.column)
            .unwrap_or(u32::MAX)
            .saturating_add(1),
    )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn push(&mut self, f: SafetyFinding, n: Node<'_>) {
        let at = self.base.or(Some(pos(n)));
        self.sink.push_at(f, at);
    }

    fn nested(&mut self, lang: Interp, code: &str, at: Node<'_>) {
        let base = self.base.or(Some(pos(at)));
        match lang {
            Interp::Shell => {
                scan(code, self.sink, self.nest + 1, base);
            }
            Interp::Python => self
                .sink
                .scan_nested(ScriptLang::Python, code, self.nest + 1, base),
            Interp::Other => {}
        }
    }

    /// Walk the named nodes under `root` in document order with one cursor (no per-node lists).
    fn visit(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        // Tracked here: the cursor's own depth query walks its whole stack on every call.
        let mut depth = 0usize;
        loop {
            let n = cursor.node();
            if n.is_named() && self.enter(n, depth) && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
            }
        }
    }

    /// Check one node; `false` when its children must not be walked.
    fn enter(&mut self, n: Node<'t>, depth: usize) -> bool {
        if depth > MAX_TREE_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.push(
                    finding("SCAN-ERROR", "syntax tree nested too deeply")
                        .with_metadata("reason", "depth"),
                    n,
                );
            }
            return false;
        }
        match n.kind() {
            "command" => self.command(n),
            "pipeline" => self.pipeline(n),
            "file_redirect" => self.file_redirect(n),
            "variable_assignment" => self.assignment(n),
            "unset_command" => {
                if self.text(n).contains("HISTFILE") {
                    self.push(finding("BASH-HISTORY", self.text(n)), n);
                }
            }
            "function_definition" => self.function(n),
            "word" | "raw_string" | "string_content" => {
                if paths::is_dev_net(self.text(n)) {
                    self.push(finding("BASH-REVERSE-SHELL", self.text(n)), n);
                }
            }
            "heredoc_body" => return false,
            _ => {}
        }
        true
    }

    // ---- words ----

    fn word(&self, n: Node<'t>) -> Word<'t> {
        let mut w = Word {
            node: n,
            lit: Some(String::new()),
            approx: String::new(),
            disguised: false,
        };
        self.word_part(n, &mut w, true);
        w
    }

    fn lit_push(w: &mut Word<'_>, s: &str) {
        match w.lit.as_mut() {
            Some(l) => l.push_str(s),
            None => w.approx.push_str(s),
        }
    }

    fn dyn_push(w: &mut Word<'_>, s: &str) {
        if let Some(l) = w.lit.take() {
            w.approx = l;
        }
        w.approx.push_str(s);
    }

    fn word_part(&self, n: Node<'t>, w: &mut Word<'t>, top: bool) {
        let t = self.text(n);
        match n.kind() {
            "word" | "number" => {
                if t.contains('\\') && !(top && t.starts_with('\\') && !t[1..].contains('\\')) {
                    w.disguised = true;
                }
                if t.contains('\\') {
                    Self::lit_push(w, &unescape_bare(t));
                } else {
                    Self::lit_push(w, t);
                }
            }
            "raw_string" => {
                w.disguised = true;
                Self::lit_push(w, t.trim_start_matches('\'').trim_end_matches('\''));
            }
            "ansi_c_string" => {
                w.disguised = true;
                let inner = t
                    .strip_prefix("$'")
                    .unwrap_or(t)
                    .strip_suffix('\'')
                    .unwrap_or(t);
                Self::lit_push(w, &decode_ansi_c(inner));
            }
            "string" | "translated_string" => {
                w.disguised = true;
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    match c.kind() {
                        "string_content" => {
                            let t = self.text(c);
                            if t.contains('\\') {
                                Self::lit_push(w, &unescape_dq(t));
                            } else {
                                Self::lit_push(w, t);
                            }
                        }
                        "string" => self.word_part(c, w, false),
                        _ => self.word_part(c, w, false),
                    }
                }
            }
            "concatenation" => {
                let mut cursor = n.walk();
                for (i, c) in n.named_children(&mut cursor).enumerate() {
                    self.word_part(c, w, i == 0);
                }
            }
            "simple_expansion" | "expansion" => {
                let var = n
                    .named_child(0)
                    .filter(|v| v.kind() == "variable_name")
                    .map(|v| self.text(v));
                match (var, n.named_child_count()) {
                    (Some("HOME"), 1) => Self::dyn_push(w, "~"),
                    (Some(v), _) => Self::dyn_push(w, &format!("${v}")),
                    _ => Self::dyn_push(w, "$?"),
                }
            }
            "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                Self::dyn_push(w, "$(…)")
            }
            _ => Self::dyn_push(w, t),
        }
    }

    /// The command name, normalized: quotes and escapes removed, look-alikes mapped to ASCII,
    /// directory dropped. `None` when the name is computed at run time.
    fn command_name(w: &Word<'_>) -> Option<String> {
        let raw: &str = match &w.lit {
            Some(l) => l,
            None => {
                // `"$VENV"/bin/python` names python; `$cmd` names nothing we can know.
                let (_, last) = w.approx.rsplit_once('/')?;
                if last.contains('$') || last.is_empty() {
                    return None;
                }
                last
            }
        };
        if raw.is_ascii() {
            return Some(paths::basename(raw).to_owned());
        }
        let mapped: String = raw.chars().filter_map(deconfuse).collect();
        Some(paths::basename(&mapped).to_owned())
    }

    // ---- commands ----

    /// Build the invocations of a `command` node, unwrapping wrappers.
    fn invocations(&self, cmd: Node<'t>) -> Vec<Inv<'t>> {
        let mut argv: Vec<Word<'t>> = Vec::new();
        let mut assigns = Vec::new();
        let mut cursor = cmd.walk();
        for (i, c) in cmd.children(&mut cursor).enumerate() {
            let field = cmd.field_name_for_child(u32::try_from(i).unwrap_or(u32::MAX));
            match (field, c.kind()) {
                (Some("name"), _) => {
                    let inner = c.named_child(0).unwrap_or(c);
                    argv.insert(0, self.word(inner));
                }
                (Some("argument"), _) => argv.push(self.word(c)),
                (_, "variable_assignment") => {
                    if let (Some(name), Some(value)) = (
                        c.child_by_field_name("name"),
                        c.child_by_field_name("value"),
                    ) {
                        assigns.push((self.text(name).to_owned(), self.word(value)));
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        if argv.is_empty() {
            return out;
        }
        self.unwrap_into(cmd, argv, assigns, Vec::new(), &mut out, 0);
        out
    }

    fn unwrap_into(
        &self,
        node: Node<'t>,
        mut argv: Vec<Word<'t>>,
        mut assigns: Vec<(String, Word<'t>)>,
        mut wrappers: Vec<String>,
        out: &mut Vec<Inv<'t>>,
        rounds: usize,
    ) {
        loop {
            let Some(first) = argv.first() else { return };
            let name = Self::command_name(first);
            let Some(n) = name.clone() else {
                out.push(Inv {
                    node,
                    name_word: argv.first().cloned(),
                    name: None,
                    args: argv[1..].to_vec(),
                    assigns,
                    wrappers,
                });
                return;
            };
            let opts_with_arg: &[&str] = match n.as_str() {
                "sudo" => &[
                    "-u",
                    "-g",
                    "-C",
                    "-D",
                    "-h",
                    "-p",
                    "-r",
                    "-t",
                    "-U",
                    "-T",
                    "--user",
                    "--group",
                    "--prompt",
                    "--chdir",
                    "--role",
                    "--type",
                    "--host",
                    "--other-user",
                    "--close-from",
                ],
                "doas" => &["-u", "-C"],
                "pkexec" => &["--user"],
                "env" => &["-u", "--unset", "-C", "--chdir"],
                "xargs" => &[
                    "-I",
                    "-n",
                    "-P",
                    "-d",
                    "-L",
                    "-s",
                    "-E",
                    "-a",
                    "-e",
                    "--max-args",
                    "--max-procs",
                    "--delimiter",
                    "--arg-file",
                    "--replace",
                    "--max-lines",
                ],
                "timeout" => &["-s", "--signal", "-k", "--kill-after"],
                "nice" => &["-n", "--adjustment"],
                "ionice" => &["-c", "-n", "-p", "--class", "--classdata"],
                "stdbuf" => &["-i", "-o", "-e"],
                "time" => &["-f", "-o", "--format", "--output"],
                "exec" => &["-a"],
                "strace" | "ltrace" => &["-o", "-e", "-p", "-s", "-u"],
                "nohup" | "setsid" | "command" | "builtin" | "unbuffer" | "torsocks"
                | "proxychains" | "proxychains4" | "caffeinate" | "chroot" | "flock" => {
                    &["-n", "-w", "-E"]
                }
                _ => break,
            };
            if rounds + wrappers.len() > 16 {
                break;
            }
            if matches!(n.as_str(), "command")
                && argv.iter().skip(1).any(|a| matches!(a.val(), "-v" | "-V"))
            {
                break;
            }
            // `env -S "cmd args"` and `flock FILE -c "cmd"`: the string is a command line.
            if n == "env" || n == "flock" {
                if argv
                    .iter()
                    .any(|a| matches!(a.val(), "-S" | "--split-string" | "-c"))
                {
                    out.push(Inv {
                        node,
                        name_word: argv.first().cloned(),
                        name,
                        args: argv[1..].to_vec(),
                        assigns,
                        wrappers,
                    });
                    return;
                }
            }
            wrappers.push(n.clone());
            let mut i = 1;
            while i < argv.len() {
                let a = argv[i].val().to_owned();
                if a == "--" {
                    i += 1;
                    break;
                }
                if n == "env" && !a.starts_with('-') {
                    if let Some((k, _)) = a.split_once('=') {
                        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            let mut w = argv[i].clone();
                            let v = a.split_once('=').map(|x| x.1).unwrap_or("").to_owned();
                            w.approx = v.clone();
                            w.lit = Some(v);
                            assigns.push((k.to_owned(), w));
                            i += 1;
                            continue;
                        }
                    }
                }
                if !a.starts_with('-') || a == "-" {
                    break;
                }
                i += 1;
                if opts_with_arg.contains(&a.as_str()) {
                    i += 1;
                }
            }
            // `timeout 10 cmd`, `chroot DIR cmd`, `flock FILE cmd`: one positional before the command.
            if matches!(n.as_str(), "timeout" | "chroot" | "flock") {
                i += 1;
            }
            if i >= argv.len() {
                out.push(Inv {
                    node,
                    name_word: argv.first().cloned(),
                    name,
                    args: argv[1..].to_vec(),
                    assigns,
                    wrappers,
                });
                return;
            }
            argv.drain(..i);
        }
        let name = argv.first().and_then(Self::command_name);
        if name.as_deref() == Some("find") {
            // Each `-exec CMD ... ;` is a command of its own.
            let mut i = 1;
            while i < argv.len() {
                if matches!(argv[i].val(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = i + 1;
                    let mut end = start;
                    while end < argv.len() && !matches!(argv[end].val(), ";" | "+") {
                        end += 1;
                    }
                    if start < end && rounds < 4 {
                        let mut w = wrappers.clone();
                        w.push("find".to_owned());
                        self.unwrap_into(
                            node,
                            argv[start..end].to_vec(),
                            Vec::new(),
                            w,
                            out,
                            rounds + 1,
                        );
                    }
                    i = end;
                }
                i += 1;
            }
        }
        let mut argv = argv.into_iter();
        out.push(Inv {
            node,
            name_word: argv.next(),
            name,
            args: argv.collect(),
            assigns,
            wrappers,
        });
    }

    fn command(&mut self, cmd: Node<'t>) {
        let invs = match self.inv_cache.remove(&cmd.id()) {
            Some(invs) => invs,
            None => self.invocations(cmd),
        };
        let (line, column) = pos(cmd);
        for inv in &invs {
            self.sink.commands.push(CommandView {
                name: inv.name.clone().unwrap_or_else(|| "$?".to_owned()),
                args: inv.args.iter().map(|a| a.val().to_owned()).collect(),
                line,
                column,
                wrappers: inv.wrappers.clone(),
            });
            self.check_inv(inv);
        }
    }

    fn ev(&self, inv: &Inv<'_>) -> &'s str {
        self.text(inv.node)
    }

    fn check_inv(&mut self, inv: &Inv<'t>) {
        let ev = self.ev(inv);
        let node = inv.node;
        if let Some(w) = &inv.name_word {
            let raw = w.val();
            let non_ascii = !raw.is_ascii();
            if (w.disguised || non_ascii)
                && inv.name.as_deref().is_some_and(|n| !n.is_empty())
                && w.lit.is_some()
            {
                let mut f = finding("BASH-OBFUSCATION", ev);
                if let Some(n) = &inv.name {
                    f = f.with_metadata("command", n);
                }
                self.push(f, node);
            }
        }
        for wr in &inv.wrappers {
            if matches!(wr.as_str(), "sudo" | "doas" | "pkexec") {
                let mut f = finding("BASH-SUDO", ev);
                f.subject_command = Some(wr.clone());
                self.push(f, node);
            }
        }
        for (k, v) in &inv.assigns {
            self.check_assign(k, v.val(), node);
        }
        let Some(name) = inv.name.as_deref() else {
            self.push(finding("BASH-INDIRECT-EXEC", ev), node);
            return;
        };
        let args: Vec<&Word<'t>> = inv.args.iter().collect();
        let vals: Vec<&str> = args.iter().map(|a| a.val()).collect();
        let (opts, operands) = split_opts(&vals);
        if NET_SEND.contains(&name) {
            self.net_send = true;
        }
        // Paths in any argument: credential files, bash network pseudo-files.
        for v in &vals {
            let path = strip_assign_prefix(v);
            if paths::is_credential_file(path) {
                if self.cred_read.is_none() {
                    self.cred_read = Some((ev.to_owned(), self.base.unwrap_or(pos(node))));
                }
                if NET_SEND.contains(&name) {
                    self.push(finding("BASH-CRED-EXFIL", ev), node);
                } else {
                    self.push(finding("BASH-CRED-READ", ev), node);
                }
            } else if paths::is_dotenv(path) && NET_SEND.contains(&name) && v.contains('@') {
                self.push(finding("BASH-CRED-EXFIL", ev), node);
            }
        }
        match name {
            "sudo" | "doas" | "pkexec" | "su" | "runuser" => {
                let mut f = finding("BASH-SUDO", ev);
                f.subject_command = Some(name.to_owned());
                self.push(f, node);
                if name == "su" || name == "runuser" {
                    if let Some(i) = vals
                        .iter()
                        .copied()
                        .position(|v| v == "-c" || v == "--command")
                    {
                        if let Some(code) = args.get(i + 1).and_then(|w| w.lit.clone()) {
                            self.nested(Interp::Shell, &code, node);
                        } else {
                            self.push(finding("BASH-INDIRECT-EXEC", ev), node);
                        }
                    }
                }
            }
            "rm" | "rmdir" | "unlink" => {
                let recursive = opts.iter().any(|o| {
                    *o == "--recursive"
                        || (o.starts_with('-')
                            && !o.starts_with("--")
                            && (o.contains('r') || o.contains('R')))
                });
                let no_preserve = opts.contains(&"--no-preserve-root");
                for t in &operands {
                    self.check_delete(t, recursive || no_preserve, ev, node);
                    if paths::is_history_file(t) {
                        self.push(finding("BASH-HISTORY", ev), node);
                    }
                }
                if no_preserve {
                    self.push(finding("BASH-RM-ROOT", ev), node);
                }
            }
            "find" => {
                if vals.iter().copied().any(|v| v == "-delete") {
                    for v in vals
                        .iter()
                        .take_while(|v| !v.starts_with('-') && **v != "(" && **v != "!")
                    {
                        self.check_delete(v, true, ev, node);
                    }
                }
            }
            "shred" => {
                for t in &operands {
                    if paths::is_disk_device(t) {
                        self.push(finding("BASH-DISK", ev), node);
                    } else {
                        self.check_delete(t, false, ev, node);
                    }
                }
            }
            "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
                let recursive = opts.iter().any(|o| *o == "-R" || *o == "--recursive");
                let targets = operands.get(1..).unwrap_or(&[]);
                for t in targets {
                    let class = paths::classify(t);
                    if matches!(class, PathClass::SystemTop | PathClass::SystemSub)
                        || paths::is_catastrophic(class) && (recursive || class != PathClass::Home)
                    {
                        let mut f = finding("BASH-CHMOD-SYSTEM", ev);
                        f.subject_path = Some(t.to_string());
                        self.push(f, node);
                    }
                }
                if name == "chmod" {
                    if let Some(mode) = operands.first() {
                        if is_setuid_mode(mode) {
                            self.push(finding("BASH-SETUID", ev), node);
                        }
                    }
                }
            }
            "install" => {
                if let Some(i) = vals
                    .iter()
                    .copied()
                    .position(|v| v == "-m" || v == "--mode")
                {
                    if vals.get(i + 1).is_some_and(|m| is_setuid_mode(m)) {
                        self.push(finding("BASH-SETUID", ev), node);
                    }
                }
                self.copy_target(&vals, &operands, ev, node);
            }
            "dd" => {
                for v in &vals {
                    if let Some(dst) = v.strip_prefix("of=") {
                        self.check_write(dst, ev, node);
                    }
                }
            }
            n if n.starts_with("mkfs")
                || matches!(
                    n,
                    "mke2fs"
                        | "mkswap"
                        | "fdisk"
                        | "sfdisk"
                        | "cfdisk"
                        | "parted"
                        | "gdisk"
                        | "sgdisk"
                        | "wipefs"
                        | "blkdiscard"
                        | "cryptsetup"
                ) =>
            {
                if n != "cryptsetup"
                    || vals
                        .iter()
                        .copied()
                        .any(|v| v == "luksFormat" || v == "erase")
                {
                    self.push(finding("BASH-DISK", ev), node);
                }
            }
            "crontab" => {
                let listing = vals.iter().copied().all(|v| {
                    v == "-l"
                        || v == "-u"
                        || !v.starts_with('-')
                            && vals.iter().copied().any(|x| x == "-u")
                            && vals.len() == 3
                });
                if !listing || vals.is_empty() {
                    self.push(finding("BASH-CRONTAB", ev), node);
                }
            }
            "tee" => {
                for t in &operands {
                    self.check_write(t, ev, node);
                }
            }
            "cp" | "mv" | "rsync" | "ln" | "scp" => self.copy_target(&vals, &operands, ev, node),
            "sed" | "perl"
                if opts
                    .iter()
                    .any(|o| o.starts_with("-i") || o.starts_with("--in-place")) =>
            {
                for t in operands.iter().skip(1) {
                    self.check_write(t, ev, node);
                }
            }
            "truncate" | "touch" => {
                for t in &operands {
                    self.check_write(t, ev, node);
                }
            }
            "eval" => self.eval(inv, ev),
            "env" | "flock" | "watch" => {
                // `env -S "cmd args"`, `flock F -c "cmd"`, `watch "cmd"`: the string is a command line.
                let at = vals
                    .iter()
                    .position(|v| matches!(*v, "-S" | "--split-string" | "-c"));
                let code = match (name, at) {
                    (_, Some(i)) => args.get(i + 1).copied(),
                    _ => None,
                };
                if name == "watch" && at.is_none() {
                    let mut parts = Vec::new();
                    let mut dynamic = false;
                    let mut skip = false;
                    for a in &args {
                        let v = a.val();
                        if skip {
                            skip = false;
                        } else if parts.is_empty()
                            && matches!(v, "-n" | "--interval" | "-d" | "--differences")
                        {
                            skip = v == "-n" || v == "--interval";
                        } else if parts.is_empty() && v.starts_with('-') {
                        } else {
                            dynamic |= a.lit.is_none();
                            parts.push(v.to_owned());
                        }
                    }
                    if dynamic {
                        self.push(finding("BASH-INDIRECT-EXEC", ev), node);
                    } else {
                        self.nested(Interp::Shell, &parts.join(" "), node);
                    }
                }
                if let Some(w) = code {
                    match w.lit.clone() {
                        Some(c) => self.nested(Interp::Shell, &c, node),
                        None => self.generated_code(w.node, ev, node, "BASH-INDIRECT-EXEC"),
                    }
                }
            }
            "source" | "." => {
                if let Some(a) = args.first() {
                    self.exec_source(a, ev, node);
                }
            }
            "history" => {
                if opts
                    .iter()
                    .any(|o| o.contains('c') || o.contains('d') || o.contains('w'))
                {
                    self.push(finding("BASH-HISTORY", ev), node);
                }
            }
            "set" => {
                if vals.windows(2).any(|w| w[0] == "+o" && w[1] == "history") {
                    self.push(finding("BASH-HISTORY", ev), node);
                }
            }
            "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" => {
                let flush = vals
                    .iter()
                    .any(|v| matches!(*v, "-F" | "--flush" | "-X" | "--delete-chain"));
                let accept = vals
                    .windows(3)
                    .any(|w| (w[0] == "-P" || w[0] == "--policy") && w[2] == "ACCEPT");
                if flush || accept {
                    self.push(finding("BASH-FIREWALL", ev), node);
                }
            }
            "nft"
                if vals
                    .windows(2)
                    .any(|w| w[0] == "flush" && w[1] == "ruleset") =>
            {
                self.push(finding("BASH-FIREWALL", ev), node);
            }
            "ufw" if vals.iter().copied().any(|v| v == "disable" || v == "reset") => {
                self.push(finding("BASH-FIREWALL", ev), node);
            }
            "setenforce"
                if vals
                    .iter()
                    .any(|v| *v == "0" || v.eq_ignore_ascii_case("permissive")) =>
            {
                self.push(finding("BASH-FIREWALL", ev), node);
            }
            "auditctl"
                if vals.windows(2).any(|w| w[0] == "-e" && w[1] == "0")
                    || vals.iter().copied().any(|v| v == "-D") =>
            {
                self.push(finding("BASH-FIREWALL", ev), node);
            }
            "aa-teardown" => self.push(finding("BASH-FIREWALL", ev), node),
            "systemctl" | "service" => {
                let stop = vals
                    .iter()
                    .any(|v| matches!(*v, "stop" | "disable" | "mask" | "kill"));
                let guard = vals.iter().copied().any(|v| {
                    let v = v.trim_end_matches(".service");
                    matches!(
                        v,
                        "firewalld"
                            | "ufw"
                            | "apparmor"
                            | "auditd"
                            | "iptables"
                            | "nftables"
                            | "selinux"
                            | "falco"
                            | "osqueryd"
                    )
                });
                if stop && guard {
                    self.push(finding("BASH-FIREWALL", ev), node);
                }
            }
            "nc" | "ncat" | "netcat" => {
                if opts.iter().any(|o| {
                    matches!(*o, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
                        || (o.starts_with('-')
                            && !o.starts_with("--")
                            && o.len() > 2
                            && o.contains('e'))
                }) {
                    self.push(finding("BASH-REVERSE-SHELL", ev), node);
                }
            }
            "socat" => {
                if vals.iter().copied().any(|v| {
                    let l = v.to_ascii_lowercase();
                    l.contains("exec:") || l.contains("system:")
                }) {
                    self.push(finding("BASH-REVERSE-SHELL", ev), node);
                }
            }
            _ => {}
        }
        if let Some(kind) = interp_kind(name) {
            self.interpreter(inv, kind, ev);
        }
    }

    fn copy_target(&mut self, vals: &[&str], operands: &[&str], ev: &str, node: Node<'t>) {
        if let Some(i) = vals
            .iter()
            .position(|v| *v == "-t" || *v == "--target-directory")
        {
            if let Some(t) = vals.get(i + 1) {
                self.check_write(t, ev, node);
            }
        } else if operands.len() >= 2 {
            if let Some(t) = operands.last() {
                self.check_write(t, ev, node);
            }
        }
    }

    fn check_delete(&mut self, target: &str, recursive: bool, ev: &str, node: Node<'t>) {
        let mut class = paths::classify(target);
        // `rm -rf *` or `.` in a cwd that is home or a system directory.
        if matches!(paths::normalize(target).as_ref(), "" | "*" | ".*") && recursive {
            class = self.sink.cwd_class;
        }
        let rule = match class {
            PathClass::Root | PathClass::Home | PathClass::HomeSensitive if recursive => {
                "BASH-RM-ROOT"
            }
            PathClass::SystemTop if recursive => "BASH-RM-ROOT",
            PathClass::HomeSensitive | PathClass::SystemTop | PathClass::SystemSub => {
                "BASH-RM-SYSTEM"
            }
            _ => return,
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(target.to_owned());
        self.push(f, node);
    }

    fn check_write(&mut self, target: &str, ev: &str, node: Node<'t>) {
        let rule = if paths::is_disk_device(target) {
            "BASH-DISK"
        } else if paths::is_dev_net(target) {
            "BASH-REVERSE-SHELL"
        } else if paths::is_authorized_keys(target) {
            "BASH-WRITE-SSH-KEYS"
        } else if paths::is_startup_file(target) {
            "BASH-WRITE-RC"
        } else if paths::is_cron_path(target) {
            "BASH-CRONTAB"
        } else if paths::is_history_file(target) {
            "BASH-HISTORY"
        } else if matches!(
            paths::classify(target),
            PathClass::SystemTop | PathClass::SystemSub | PathClass::Root
        ) {
            "BASH-WRITE-SYSTEM"
        } else {
            return;
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(target.to_owned());
        self.push(f, node);
    }

    fn check_assign(&mut self, name: &str, value: &str, node: Node<'t>) {
        let ev = format!("{name}=…");
        match name {
            "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES" | "BASH_ENV" | "PROMPT_COMMAND" => {
                self.push(finding("BASH-ENV-PRELOAD", &ev), node);
            }
            "PATH" | "LD_LIBRARY_PATH" | "DYLD_LIBRARY_PATH" => {
                let bad = value.split(':').any(|c| {
                    let n = paths::normalize(c);
                    c.is_empty()
                        || n.is_empty()
                        || !(c.starts_with('/') || c.starts_with('~') || c.starts_with('$'))
                        || ["/tmp", "/var/tmp", "/dev/shm", "/private/tmp"]
                            .iter()
                            .any(|t| n == *t || n.starts_with(&format!("{t}/")))
                });
                if bad {
                    self.push(finding("BASH-ENV-PATH", &format!("{name}={value}")), node);
                }
            }
            "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" => {
                if name == "HISTFILE" || value == "0" {
                    self.push(finding("BASH-HISTORY", &ev), node);
                }
            }
            _ => {}
        }
    }

    fn assignment(&mut self, n: Node<'t>) {
        // Command prefixes (`X=1 cmd`) are checked here too: every assignment is a node.
        let (Some(name), value) = (
            n.child_by_field_name("name"),
            n.child_by_field_name("value"),
        ) else {
            return;
        };
        let name = self.text(name).to_owned();
        let value = value
            .map(|v| self.word(v).val().to_owned())
            .unwrap_or_default();
        self.check_assign(&name, &value, n);
    }

    fn file_redirect(&mut self, n: Node<'t>) {
        let mut op = "";
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if !c.is_named() {
                op = self.text(c);
                break;
            }
        }
        let Some(dest) = n.child_by_field_name("destination") else {
            return;
        };
        let w = self.word(dest);
        let target = w.val();
        let ev = self.text(n.parent().unwrap_or(n));
        match op {
            ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => self.check_write(target, ev, n),
            ">&" if !target.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                self.check_write(target, ev, n)
            }
            "<" | "<&" => {
                if paths::is_credential_file(target) {
                    if self.cred_read.is_none() {
                        self.cred_read = Some((ev.to_owned(), self.base.unwrap_or(pos(n))));
                    }
                    self.push(finding("BASH-CRED-READ", ev), n);
                }
            }
            _ => {}
        }
    }

    // ---- code execution ----

    /// What the commands under `root` do, for pipelines and substitutions.
    fn subtree_flags(&mut self, root: Node<'t>) -> Flags {
        let mut f = Flags::default();
        let mut cursor = root.walk();
        let mut depth = 0usize;
        loop {
            let n = cursor.node();
            match n.kind() {
                "command" => {
                    let invs = match self.inv_cache.remove(&n.id()) {
                        Some(invs) => invs,
                        None => self.invocations(n),
                    };
                    for inv in &invs {
                        f.0 |= self.inv_flags(inv).0;
                    }
                    self.inv_cache.insert(n.id(), invs);
                }
                "file_redirect" => {
                    if let Some(d) = n.child_by_field_name("destination") {
                        if paths::is_credential_file(self.word(d).val()) {
                            f.0 |= Flags::CRED;
                        }
                    }
                }
                _ => {}
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return f;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return f;
                }
                depth -= 1;
            }
        }
    }

    fn inv_flags(&self, inv: &Inv<'t>) -> Flags {
        let mut f = 0;
        let Some(name) = inv.name.as_deref() else {
            return Flags(0);
        };
        let vals: Vec<&str> = inv.args.iter().map(|a| a.val()).collect();
        let has = |x: &str| vals.contains(&x);
        match name {
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "lwp-download" | "GET" => {
                f |= Flags::DOWNLOAD | Flags::NET
            }
            "base64" | "base32" | "basenc" if has("-d") || has("--decode") || has("-D") => {
                f |= Flags::DECODE
            }
            "xxd" if vals.iter().any(|v| v.starts_with("-r")) => f |= Flags::DECODE,
            "openssl" if has("-d") || has("base64") => f |= Flags::DECODE,
            "openssl" if has("s_client") => f |= Flags::NET | Flags::NETCAT,
            "uudecode" | "gunzip" | "zcat" | "bzcat" | "xzcat" | "unxz" | "rev" => {
                f |= Flags::DECODE
            }
            "gzip" | "bzip2" | "xz" | "zstd" if has("-d") || has("--decompress") => {
                f |= Flags::DECODE
            }
            "printf" | "echo" if vals.iter().any(|v| v.contains("\\x") || v.contains("\\0")) => {
                f |= Flags::DECODE
            }
            "nc" | "ncat" | "netcat" | "socat" | "telnet" => f |= Flags::NET | Flags::NETCAT,
            n if NET_SEND.contains(&n) => f |= Flags::NET,
            _ => {}
        }
        if let Some(kind) = interp_kind(name) {
            f |= Flags::SHELL_ANY;
            if kind != Interp::Other || !vals.iter().any(|v| matches!(*v, "-e" | "-r" | "-p")) {
                let u = interp_use(kind, &inv.args);
                if u.stdin {
                    f |= Flags::SHELL_STDIN;
                }
            }
        }
        if matches!(name, "source" | ".")
            && vals
                .first()
                .is_some_and(|v| matches!(*v, "/dev/stdin" | "-"))
        {
            f |= Flags::SHELL_STDIN;
        }
        if vals
            .iter()
            .any(|v| paths::is_credential_file(strip_assign_prefix(v)))
        {
            f |= Flags::CRED;
        }
        Flags(f)
    }

    fn pipeline(&mut self, n: Node<'t>) {
        let mut cursor = n.walk();
        let stages: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        let flags: Vec<Flags> = stages.iter().map(|s| self.subtree_flags(*s)).collect();
        let ev = self.text(n);
        let mut rules: Vec<&'static str> = Vec::new();
        for (i, a) in flags.iter().enumerate() {
            for b in &flags[i + 1..] {
                if a.has(Flags::DOWNLOAD) && b.has(Flags::SHELL_STDIN) {
                    rules.push("BASH-CURL-PIPE-SHELL");
                }
                if a.has(Flags::DECODE) && b.has(Flags::SHELL_STDIN) {
                    rules.push("BASH-DECODE-EXEC");
                }
                if a.has(Flags::CRED) && b.has(Flags::NET) {
                    rules.push("BASH-CRED-EXFIL");
                }
            }
        }
        if flags.iter().any(|f| f.has(Flags::SHELL_ANY))
            && flags.iter().any(|f| f.has(Flags::NETCAT))
        {
            rules.push("BASH-REVERSE-SHELL");
        }
        rules.dedup();
        for r in rules {
            self.push(finding(r, ev), n);
        }
    }

    /// Code produced at run time by `node` (a substitution or dynamic word) is about to run.
    fn generated_code(
        &mut self,
        node: Node<'t>,
        ev: &str,
        at: Node<'t>,
        default_rule: &'static str,
    ) {
        let f = self.subtree_flags(node);
        let rule = if f.has(Flags::DOWNLOAD) {
            "BASH-CURL-PIPE-SHELL"
        } else if f.has(Flags::DECODE) {
            "BASH-DECODE-EXEC"
        } else {
            default_rule
        };
        self.push(finding(rule, ev), at);
    }

    fn eval(&mut self, inv: &Inv<'t>, ev: &str) {
        self.push(finding("BASH-EVAL", ev), inv.node);
        if inv.args.iter().all(|a| a.lit.is_some()) {
            let code = inv
                .args
                .iter()
                .map(|a| a.val())
                .collect::<Vec<_>>()
                .join(" ");
            self.nested(Interp::Shell, &code, inv.node);
        } else {
            for a in &inv.args {
                if a.lit.is_none() {
                    self.generated_code(a.node, ev, inv.node, "BASH-EVAL");
                }
            }
        }
    }

    fn exec_source(&mut self, a: &Word<'t>, ev: &str, node: Node<'t>) {
        if a.lit.is_some() {
            return;
        }
        if a.node.kind() == "process_substitution" || a.approx.contains("$(") {
            self.generated_code(a.node, ev, node, "BASH-INDIRECT-EXEC");
        }
    }

    fn interpreter(&mut self, inv: &Inv<'t>, kind: Interp, ev: &str) {
        let u = interp_use(kind, &inv.args);
        if let Some(code) = &u.code {
            match &code.lit {
                Some(text) => {
                    if kind == Interp::Other {
                        // Inline perl/ruby/node code is not parsed; shelling out from it needs a human.
                        if [
                            "system",
                            "exec",
                            "`",
                            "spawn",
                            "popen",
                            "child_process",
                            "qx",
                        ]
                        .iter()
                        .any(|k| text.contains(k))
                        {
                            self.push(finding("BASH-INDIRECT-EXEC", ev), inv.node);
                        }
                    } else {
                        self.nested(kind, text, inv.node);
                    }
                }
                None => self.generated_code(code.node, ev, inv.node, "BASH-INDIRECT-EXEC"),
            }
        }
        for a in &inv.args {
            if a.node.kind() == "process_substitution" {
                self.generated_code(a.node, ev, inv.node, "BASH-INDIRECT-EXEC");
            }
        }
        if !u.stdin {
            return;
        }
        // Heredocs and here-strings feeding the interpreter are its program.
        let mut redirects = Vec::new();
        let mut cursor = inv.node.walk();
        redirects.extend(inv.node.children_by_field_name("redirect", &mut cursor));
        if let Some(p) = inv
            .node
            .parent()
            .filter(|p| p.kind() == "redirected_statement")
        {
            let mut c2 = p.walk();
            redirects.extend(p.children_by_field_name("redirect", &mut c2));
        }
        for r in redirects {
            match r.kind() {
                "heredoc_redirect" => {
                    let mut c = r.walk();
                    let body = r
                        .named_children(&mut c)
                        .find(|x| x.kind() == "heredoc_body");
                    if let Some(body) = body {
                        let text = self.text(body).to_owned();
                        if kind != Interp::Other {
                            self.nested(kind, &text, inv.node);
                        }
                        if body.named_child_count() > 0 {
                            self.generated_code(body, ev, inv.node, "BASH-INDIRECT-EXEC");
                        }
                    }
                }
                "herestring_redirect" => {
                    if let Some(wn) = r.named_child(0) {
                        let w = self.word(wn);
                        match &w.lit {
                            Some(t) if kind != Interp::Other => self.nested(kind, t, inv.node),
                            Some(_) => {}
                            None => self.generated_code(wn, ev, inv.node, "BASH-INDIRECT-EXEC"),
                        }
                    }
                }
                "file_redirect" => {
                    if let Some(d) = r.child_by_field_name("destination") {
                        if d.kind() == "process_substitution" {
                            self.generated_code(d, ev, inv.node, "BASH-INDIRECT-EXEC");
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, n: Node<'t>) {
        let (Some(name), Some(body)) =
            (n.child_by_field_name("name"), n.child_by_field_name("body"))
        else {
            return;
        };
        let fname = self.text(name).to_owned();
        for d in descendants(body) {
            if d.kind() != "command" {
                continue;
            }
            let called =
                d.child_by_field_name("name").map(|c| self.text(c)) == Some(fname.as_str());
            if !called {
                continue;
            }
            let mut cur = d;
            let mut bomb = false;
            while cur != body {
                if cur.kind() == "pipeline" {
                    bomb = true;
                }
                if cur
                    .next_sibling()
                    .is_some_and(|s| !s.is_named() && self.text(s) == "&")
                {
                    bomb = true;
                }
                match cur.parent() {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            if bomb {
                self.push(finding("BASH-FORK-BOMB", self.text(n)), n);
                return;
            }
        }
    }
}

struct InterpUse<'w, 't> {
    code: Option<&'w Word<'t>>,
    stdin: bool,
}

/// How an interpreter is invoked: inline code (`-c`), a script file, a module, or stdin.
fn interp_use<'w, 't>(kind: Interp, args: &'w [Word<'t>]) -> InterpUse<'w, 't> {
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
            };
        }
        if v == "--" {
            return InterpUse {
                code: None,
                stdin: i + 1 >= args.len(),
            };
        }
        if v == "-" || v == "-s" {
            return InterpUse {
                code: None,
                stdin: true,
            };
        }
        if kind == Interp::Python && (v == "-m" || v.starts_with("-m")) {
            return InterpUse {
                code: None,
                stdin: false,
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
        };
    }
    InterpUse {
        code: None,
        stdin: !want_code,
    }
}

/// Options (before `--`) and operands of an argument list.
fn split_opts<'v>(vals: &[&'v str]) -> (Vec<&'v str>, Vec<&'v str>) {
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
fn strip_assign_prefix(v: &str) -> &str {
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

fn is_setuid_mode(mode: &str) -> bool {
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
fn unescape_bare(t: &str) -> String {
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
fn unescape_dq(t: &str) -> String {
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
fn decode_ansi_c(t: &str) -> String {
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
fn deconfuse(c: char) -> Option<char> {
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
