//! The walker the bash rules share: the scan's state, the node walk, and one command unwrapped.

use std::collections::HashMap;

use tree_sitter::Node;

use crate::catalog::{finding, id};
use crate::paths::{self};
use crate::report::SafetyFinding;
use crate::sink::Sink;
use tool_rules::ScriptLang;

use super::interp::Interp;
use super::parse;
use super::text::Word;

/// Deepest syntax tree walked before the scan gives up (a stack guard, not a style limit).
pub(super) const MAX_TREE_DEPTH: usize = 400;

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
        vars: HashMap::new(),
        arrays: HashMap::new(),
        aliases: HashMap::new(),
        written: Vec::new(),
        substituting: std::cell::Cell::new(0),
        cwd: Some(String::new()),
        own_pids: Vec::new(),
        functions: HashMap::new(),
        inlining: 0,
        inlined: 0,
        last_listed: None,
    };
    if root.has_error() {
        let at = first_error(root).unwrap_or(root);
        b.push(finding(id::BASH_SYNTAX, b.text(at)), at);
    }
    b.visit(root);
    if let (Some((ev, pos)), true) = (b.cred_read.take(), b.net_send) {
        let pos = b.base.or(Some(pos));
        b.sink.push_at(finding(id::BASH_CRED_EXFIL, &ev), pos);
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
pub(super) fn descendants<'t>(root: Node<'t>) -> Vec<Node<'t>> {
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

/// One command after unwrapping `sudo`, `env`, `xargs`, `timeout`, `find -exec`...
pub(super) struct Inv<'t> {
    pub(super) node: Node<'t>,
    pub(super) name_word: Option<Word<'t>>,
    /// Normalized command name; `None` when computed at run time.
    pub(super) name: Option<String>,
    pub(super) args: Vec<Word<'t>>,
    pub(super) assigns: Vec<(String, Word<'t>)>,
    pub(super) wrappers: Vec<String>,
    /// Options the wrappers were given with their values (`xargs -a FILE`, `-I {}`).
    pub(super) wrapper_opts: Vec<(String, Word<'t>)>,
}

#[derive(Clone, Copy, Default)]
pub(super) struct Flags(pub(super) u16);

impl Flags {
    pub(super) const DOWNLOAD: u16 = 1;
    pub(super) const DECODE: u16 = 2;
    pub(super) const SHELL_STDIN: u16 = 4;
    pub(super) const SHELL_ANY: u16 = 8;
    pub(super) const NET: u16 = 16;
    pub(super) const NETCAT: u16 = 32;
    pub(super) const CRED: u16 = 64;
    pub(super) fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }
}

pub(super) const NET_SEND: &[&str] = &[
    "curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp", "rsync",
    "ssh", "http", "https", "aria2c",
];

pub(super) struct Bash<'a, 's, 't> {
    pub(super) src: &'s str,
    pub(super) sink: &'a mut Sink,
    pub(super) nest: usize,
    pub(super) base: Option<(u32, u32)>,
    pub(super) cred_read: Option<(String, (u32, u32))>,
    pub(super) net_send: bool,
    pub(super) too_deep: bool,
    /// Invocations built while looking ahead (pipeline stages, substitutions), by node id, so the
    /// walk does not build them a second time when it reaches the command.
    pub(super) inv_cache: HashMap<usize, Vec<Inv<'t>>>,
    /// Values of the variables assigned so far (constant propagation).
    pub(super) vars: HashMap<String, Vec<String>>,
    /// Elements of the arrays assigned literal values (`a=(chmod 777)`, `$@` of an inlined call).
    pub(super) arrays: HashMap<String, Vec<String>>,
    /// Aliases defined so far (`alias c=chmod`), by name.
    pub(super) aliases: HashMap<String, String>,
    /// Files the script wrote so far: running one of them runs code the scan did not see.
    pub(super) written: Vec<String>,
    /// Command substitutions being resolved inside one another (a stack guard).
    pub(super) substituting: std::cell::Cell<usize>,
    /// Working directory after the `cd`s so far: `""` is where the script starts, `None` unknown.
    pub(super) cwd: Option<String>,
    /// Variables holding the PID of a job the script started (`PID=$!`).
    pub(super) own_pids: Vec<String>,
    /// Bodies of the functions defined so far, by name, for calls with literal arguments.
    pub(super) functions: HashMap<String, Node<'t>>,
    /// Function bodies being walked again for a call (nesting).
    pub(super) inlining: usize,
    /// Function calls walked again so far (a budget for the whole script).
    pub(super) inlined: usize,
    /// What the last `find` / `ls` listed: what `| xargs CMD` gets as operands.
    pub(super) last_listed: Option<crate::effects::EffectTarget>,
}

/// Deepest nesting of function calls walked again with their arguments bound.
pub(super) const MAX_INLINE_DEPTH: usize = 2;
/// Most function calls walked again per script.
pub(super) const MAX_INLINED: usize = 16;

pub(super) fn pos(n: Node<'_>) -> (u32, u32) {
    let p = n.start_position();
    (
        u32::try_from(p.row).unwrap_or(u32::MAX).saturating_add(1),
        u32::try_from(p.column)
            .unwrap_or(u32::MAX)
            .saturating_add(1),
    )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    pub(super) fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub(super) fn push(&mut self, f: SafetyFinding, n: Node<'_>) {
        let at = self.base.or(Some(pos(n)));
        self.sink.push_at(f, at);
    }

    pub(super) fn nested(&mut self, lang: Interp, code: &str, at: Node<'_>) {
        let base = self.base.or(Some(pos(at)));
        let lang = match lang {
            Interp::Shell => ScriptLang::Bash,
            Interp::Python => ScriptLang::Python,
            Interp::Other => return,
        };
        self.sink.scan_nested(lang, code, self.nest + 1, base);
    }

    /// Walk the named nodes under `root` in document order with one cursor (no per-node lists).
    pub(super) fn visit(&mut self, root: Node<'t>) {
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
    pub(super) fn enter(&mut self, n: Node<'t>, depth: usize) -> bool {
        if depth > MAX_TREE_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.push(
                    finding(id::SCAN_ERROR, "syntax tree nested too deeply")
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
                    self.push(finding(id::BASH_HISTORY, self.text(n)), n);
                }
            }
            "function_definition" => self.function(n),
            "for_statement" => self.loop_growth(n),
            "declaration_command" => {
                // `export`, `export -p`, `declare -x`: the whole environment printed.
                let t = self.text(n).trim();
                if matches!(
                    t,
                    "export" | "export -p" | "declare -x" | "declare -p" | "typeset -x"
                ) {
                    let at = self.base.unwrap_or(pos(n));
                    self.sink.effect(
                        crate::effects::EffectKind::EnvRead {
                            name: "*".to_owned(),
                        },
                        crate::effects::EffectTarget::Unknown,
                        at,
                        t,
                    );
                }
            }
            "simple_expansion" | "expansion" => self.env_read(n),
            "word" | "raw_string" | "string_content" => {
                if paths::is_dev_net(self.text(n)) {
                    self.push(finding(id::BASH_REVERSE_SHELL, self.text(n)), n);
                    self.dev_net(n);
                }
            }
            "heredoc_body" => return false,
            _ => {}
        }
        true
    }

    // ---- words ----
}
