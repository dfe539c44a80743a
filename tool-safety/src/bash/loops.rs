//! Memory a loop builds: a string doubled or appended to on every pass of a counted loop
//! (`for i in {1..40}; do s="$s$s"; done`), with the size it reaches.

use tree_sitter::Node;

use crate::effects::{EffectKind, EffectTarget};

use super::walk::{descendants, pos, Bash};

/// Most passes of a counted loop read from its words (`{1..N}`, `$(seq N)`).
fn passes(words: &[&str]) -> Option<u64> {
    let mut total: u64 = 0;
    for w in words {
        let n = if let Some(r) = w.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            let (a, b) = r.split_once("..")?;
            let b = b.split_once("..").map_or(b, |(b, _)| b);
            let (a, b): (i64, i64) = (a.parse().ok()?, b.parse().ok()?);
            b.abs_diff(a).saturating_add(1)
        } else {
            1
        };
        total = total.saturating_add(n);
    }
    Some(total)
}

/// `s` without a leading `$NAME` or `${NAME}`.
fn strip_var<'a>(s: &'a str, plain: &str, braced: &str) -> Option<&'a str> {
    s.strip_prefix(plain).or_else(|| s.strip_prefix(braced))
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// A `for` loop over a counted range whose body grows a variable from itself.
    pub(super) fn loop_growth(&mut self, n: Node<'t>) {
        let mut cursor = n.walk();
        let words: Vec<&str> = n
            .children_by_field_name("value", &mut cursor)
            .map(|v| self.text(v))
            .collect();
        let Some(body) = n.child_by_field_name("body") else {
            return;
        };
        let Some(count) = passes(&words).filter(|c| *c > 1) else {
            return;
        };
        for d in descendants(body) {
            if d.kind() != "variable_assignment" {
                continue;
            }
            let (Some(name), Some(value)) = (
                d.child_by_field_name("name"),
                d.child_by_field_name("value"),
            ) else {
                continue;
            };
            let var = self.text(name);
            let v = self.text(value).trim_matches('"');
            let (plain, braced) = (format!("${var}"), format!("${{{var}}}"));
            let start = self
                .vars
                .get(var)
                .and_then(|v| v.first())
                .map_or(1, |s| s.len().max(1) as u64);
            let bytes = match strip_var(v, &plain, &braced) {
                // `s="$s$s"`: doubled on every pass.
                Some(rest) if strip_var(rest, &plain, &braced) == Some("") => {
                    let shift = u32::try_from(count.min(63)).unwrap_or(63);
                    start.saturating_mul(1u64 << shift)
                }
                // `s="$s…"`: the literal tail appended on every pass.
                Some(rest) if !rest.contains('$') && !rest.is_empty() => {
                    start.saturating_add((rest.len() as u64).saturating_mul(count))
                }
                _ => continue,
            };
            let at = self.base.unwrap_or(pos(d));
            let ev = self.text(n);
            self.sink.effect(
                EffectKind::Allocation { bytes: Some(bytes) },
                EffectTarget::Resolved(var.to_owned()),
                at,
                ev,
            );
        }
    }
}
