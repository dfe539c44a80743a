//! Shell words: quote removal and expansion, as the scanner approximates them.

use tree_sitter::Node;

use crate::paths::{self};

use super::text::*;
use super::walk::*;

impl<'t, 's: 't> Bash<'_, 's, 't> {
    pub(super) fn word(&self, n: Node<'t>) -> Word<'t> {
        let mut w = Word {
            node: n,
            lit: Some(String::new()),
            approx: String::new(),
            disguised: false,
        };
        self.word_part(n, &mut w, true);
        w
    }

    pub(super) fn lit_push(w: &mut Word<'_>, s: &str) {
        match w.lit.as_mut() {
            Some(l) => l.push_str(s),
            None => w.approx.push_str(s),
        }
    }

    pub(super) fn dyn_push(w: &mut Word<'_>, s: &str) {
        if let Some(l) = w.lit.take() {
            w.approx = l;
        }
        w.approx.push_str(s);
    }

    pub(super) fn word_part(&self, n: Node<'t>, w: &mut Word<'t>, top: bool) {
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
    pub(super) fn command_name(w: &Word<'_>) -> Option<String> {
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
}
