//! Constant propagation: the values a word may stand for (variables assigned literal values,
//! `$(echo …)` of literals, brace expansion), paths joined onto the tracked `cd`, and bindings.

use tree_sitter::Node;

use crate::effects::{brace_expand, glob_candidates, has_glob, EffectKind, EffectTarget};
use crate::judge::join_norm;

use base64::Engine as _;

use super::text::{decode_ansi_c, unescape_bare, unescape_dq, Word};
use super::walk::Bash;

/// Most values a word may stand for before it counts as unknown.
const MAX_VALUES: usize = 32;
/// Deepest `$(… $(…))` resolved; deeper ones are computed at run time.
const MAX_SUBSTITUTIONS: usize = 4;

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
                if let Some(v) = self.indirect(t) {
                    return Some(vec![v]);
                }
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
            // `$(echo chmod)`, `$(printf 'ch\x6dod')`, `$(echo domhc | rev)`: a literal printed.
            "command_substitution" => {
                let inner = n.named_child(0)?;
                if n.named_child_count() != 1 {
                    return None;
                }
                let depth = self.substituting.get();
                if depth >= MAX_SUBSTITUTIONS {
                    return None;
                }
                self.substituting.set(depth + 1);
                let printed = match inner.kind() {
                    "command" => self.printed(inner),
                    "pipeline" => self.piped(inner),
                    _ => None,
                };
                self.substituting.set(depth);
                let printed = printed?;
                vec![printed.trim_end_matches('\n').to_owned()]
            }
            _ => return None,
        };
        (out.len() <= MAX_VALUES).then_some(out)
    }

    /// `${!v}`: the value of the variable whose name `v` holds.
    fn indirect(&self, t: &str) -> Option<String> {
        let v = t.strip_prefix("${!")?.strip_suffix('}')?;
        if !is_name(v) {
            return None;
        }
        let name = single(self.vars.get(v)?)?;
        single(self.vars.get(name.as_str())?).cloned()
    }

    /// What the command `cmd` prints when it prints only literals (`echo`, `printf`, `pwd`).
    pub(super) fn printed(&self, cmd: Node<'t>) -> Option<String> {
        let inv = self.invocations(cmd).into_iter().next()?;
        let args: Vec<&str> = inv
            .args
            .iter()
            .map(|a| a.lit.as_deref())
            .collect::<Option<_>>()?;
        match inv.name.as_deref()? {
            "echo" => Some(
                args.iter()
                    .filter(|a| !a.starts_with('-'))
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            "printf" => printf(args.first()?, &args[1..]),
            "pwd" => self.cwd.clone().filter(|c| !c.is_empty()),
            _ => None,
        }
    }

    /// What a pipeline of a printer and text filters (`rev`, `base64 -d`, `tr -d`) prints.
    fn piped(&self, p: Node<'t>) -> Option<String> {
        let mut cursor = p.walk();
        let mut stages = p.named_children(&mut cursor);
        let first = stages.next().filter(|s| s.kind() == "command")?;
        let mut text = self.printed(first)?;
        for s in stages {
            if s.kind() != "command" {
                return None;
            }
            let inv = self.invocations(s).into_iter().next()?;
            let args: Vec<&str> = inv
                .args
                .iter()
                .map(|a| a.lit.as_deref())
                .collect::<Option<_>>()?;
            text = match (inv.name.as_deref()?, args.as_slice()) {
                ("rev", []) => text
                    .lines()
                    .map(|l| l.chars().rev().collect::<String>())
                    .collect::<Vec<_>>()
                    .join("\n"),
                ("base64", ["-d" | "--decode"]) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(text.trim())
                        .ok()?;
                    String::from_utf8(bytes).ok()?
                }
                ("tr", ["-d", set]) => text.chars().filter(|c| !set.contains(*c)).collect(),
                ("cat", []) => text,
                _ => return None,
            };
        }
        Some(text)
    }

    /// The elements an array expansion stands for: `"${a[@]}"`, `${a[*]}`, `"$@"`.
    fn array_elems(&self, n: Node<'t>) -> Option<&Vec<String>> {
        let t = self.text(n);
        let t = t
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(t);
        let name = match t {
            "$@" | "${@}" | "$*" | "${*}" => "@",
            _ => {
                let inner = t.strip_prefix("${")?.strip_suffix('}')?;
                let name = inner
                    .strip_suffix("[@]")
                    .or_else(|| inner.strip_suffix("[*]"))?;
                if !is_name(name) {
                    return None;
                }
                name
            }
        };
        self.arrays.get(name)
    }

    /// The words of a command line with what constant propagation knows put in: a word computed
    /// from constants takes its value (an unquoted one split on blanks), an array expansion its
    /// elements, an alias its text. The plain form's rules then judge the resolved command.
    pub(super) fn resolve_argv(&self, argv: Vec<Word<'t>>) -> Vec<Word<'t>> {
        let alias = argv
            .first()
            .and_then(|w| w.lit.as_deref())
            .and_then(|n| self.aliases.get(n));
        if alias.is_none() && argv.iter().all(|w| w.lit.is_some()) {
            return argv;
        }
        let lit = |node: Node<'t>, v: &str| Word {
            node,
            lit: Some(v.to_owned()),
            approx: String::new(),
            disguised: false,
        };
        let mut out = Vec::with_capacity(argv.len() + 2);
        for (i, w) in argv.into_iter().enumerate() {
            if i == 0 {
                if let Some(a) = alias {
                    out.extend(a.split_whitespace().map(|p| lit(w.node, p)));
                    continue;
                }
            }
            if w.lit.is_some() {
                out.push(w);
                continue;
            }
            if let Some(elems) = self.array_elems(w.node) {
                out.extend(elems.iter().map(|e| lit(w.node, e)));
                continue;
            }
            if !self.may_resolve(w.node) {
                out.push(w);
                continue;
            }
            match self.values(w.node).as_deref() {
                Some([v]) if matches!(w.node.kind(), "string" | "raw_string") => {
                    out.push(lit(w.node, v));
                }
                Some([v]) => out.extend(v.split_whitespace().map(|p| lit(w.node, p))),
                _ => out.push(w),
            }
        }
        out
    }

    /// A cheap test before [`Bash::values`]: a word can only resolve when a variable is known or
    /// a substitution runs a printer. Most dynamic words in build scripts are neither.
    fn may_resolve(&self, n: Node<'t>) -> bool {
        if !self.vars.is_empty() || !self.arrays.is_empty() {
            return true;
        }
        let t = self.text(n);
        ["echo", "printf", "pwd", "$HOME", "${HOME}", "$PWD"]
            .iter()
            .any(|k| t.contains(k))
    }

    /// The target of word `w` as a path, joined onto the tracked working directory.
    pub(super) fn path_target(&self, w: &Word<'t>) -> EffectTarget {
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

    pub(super) fn file_effect(&mut self, kind: EffectKind, w: &Word<'t>, at: (u32, u32), ev: &str) {
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
            Some(v) if v.kind() == "array" => {
                let mut elems = Vec::new();
                let mut cursor = v.walk();
                for e in v.named_children(&mut cursor) {
                    match self.values(e).as_deref() {
                        Some([x]) => elems.push(x.clone()),
                        _ => {
                            elems.clear();
                            self.arrays.remove(name);
                            break;
                        }
                    }
                }
                let first = elems.first().cloned();
                if !elems.is_empty() {
                    self.arrays.insert(name.to_owned(), elems);
                }
                first.map(|f| vec![f])
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
}

/// `printf FORMAT ARGS...` of `%s`/`%b` and escapes only (`ch\x6dod`, `%s/x`).
fn printf(format: &str, args: &[&str]) -> Option<String> {
    let format = decode_ansi_c(format);
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '%' => out.push('%'),
            's' => out.push_str(args.next().copied().unwrap_or("")),
            'b' => out.push_str(&decode_ansi_c(args.next().copied().unwrap_or(""))),
            _ => return None,
        }
    }
    // The format is used again while arguments are left: too rare in names to follow.
    args.next().is_none().then_some(out)
}

fn is_name(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn single(v: &[String]) -> Option<&String> {
    match v {
        [x] => Some(x),
        _ => None,
    }
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
