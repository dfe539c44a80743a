//! Files through `pathlib` methods and handles: what `Path(...).read_text()`, `.unlink()` and
//! `open(p, 'w')` touch, and environment variables read by name.

use ruff_python_ast::{Expr, Operator};
use ruff_text_size::TextRange;

use crate::effects::{EffectKind, EffectTarget};

use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    /// The effect of a `pathlib` method on a path the scan resolved: `Path('/etc').read_text()`,
    /// `.unlink()`, `.write_text()`, `(Path.home() / '.ssh').iterdir()`...
    pub(super) fn path_method_effect(
        &mut self,
        method: &str,
        obj: &'t Expr,
        args: &Args<'t>,
        ev: &str,
        n: TextRange,
    ) {
        let kind = match method {
            "read_text" | "read_bytes" => EffectKind::FileRead,
            "write_text" | "write_bytes" => EffectKind::FileWrite,
            "touch" | "mkdir" => EffectKind::FileCreate,
            "unlink" | "rmdir" | "rename" | "replace" => EffectKind::FileDelete,
            "chmod" | "lchmod" | "chown" => EffectKind::Chmod,
            "symlink_to" | "hardlink_to" => EffectKind::Link,
            "iterdir" | "glob" | "rglob" | "walk" => EffectKind::DirList,
            "open" => {
                let mode = args
                    .positional
                    .first()
                    .copied()
                    .or_else(|| args.keyword("mode"))
                    .and_then(|m| self.string(m))
                    .unwrap_or_default();
                if mode.contains(['w', 'a', 'x', '+']) {
                    EffectKind::FileWrite
                } else {
                    EffectKind::FileRead
                }
            }
            _ => return,
        };
        // Only receivers that are paths: `Path(...)`, `Path.home() / ...`, names bound to them.
        if !self.is_path_expr(obj, 0) {
            return;
        }
        let Some(p) = self.path_value(obj, 0) else {
            return;
        };
        let at = self.at(n);
        self.sink.effect(kind, EffectTarget::Resolved(p), at, ev);
        if matches!(method, "symlink_to" | "hardlink_to") {
            if let Some(src) = args.positional.first().and_then(|a| self.path_value(a, 0)) {
                self.sink
                    .effect(EffectKind::FileRead, EffectTarget::Resolved(src), at, ev);
            }
        }
    }

    /// `true` when `e` builds a `pathlib` path (or names one bound to a path constant).
    fn is_path_expr(&self, e: &'t Expr, depth: usize) -> bool {
        if depth > MAX_EXPR_DEPTH {
            return false;
        }
        match e {
            Expr::Call(c) => {
                let q = self.resolve(&c.func, 0).unwrap_or_default();
                q.ends_with("Path")
                    || q.ends_with("Path.home")
                    || q.ends_with("Path.cwd")
                    || matches!(&*c.func, Expr::Attribute(a)
                        if matches!(a.attr.as_str(), "expanduser" | "resolve" | "absolute" | "joinpath" | "with_name" | "with_suffix")
                            && self.is_path_expr(&a.value, depth + 1))
            }
            Expr::BinOp(b) if b.op == Operator::Div => self.is_path_expr(&b.left, depth + 1),
            Expr::Attribute(a) if a.attr.as_str() == "parent" => {
                self.is_path_expr(&a.value, depth + 1)
            }
            Expr::Name(_) => self.path_value(e, 0).is_some(),
            _ => false,
        }
    }

    /// The file `e` opens for writing (`open(p, 'w')`, `Path(p).open('wb')`), if constant.
    pub(super) fn opened_for_write(&self, e: &'t Expr) -> Option<String> {
        let Expr::Call(c) = e else { return None };
        let args = Args::of(&c.arguments);
        let q = self.resolve(&c.func, 0).unwrap_or_default();
        let (path, mode) = if matches!(q.as_str(), "open" | "io.open" | "builtins.open") {
            (
                args.positional.first().and_then(|a| self.path_value(a, 0)),
                args.positional
                    .get(1)
                    .copied()
                    .or_else(|| args.keyword("mode")),
            )
        } else if let Expr::Attribute(a) = &*c.func {
            if a.attr.as_str() != "open" {
                return None;
            }
            (
                self.path_value(&a.value, 0),
                args.positional.first().copied(),
            )
        } else {
            return None;
        };
        let mode = mode.and_then(|m| self.string(m))?;
        mode.contains(['w', 'a', 'x', '+'])
            .then_some(path)
            .flatten()
    }

    /// An environment variable read by name (`os.environ['X']`, `os.getenv('X')`).
    pub(super) fn env_read(&mut self, name: &str, n: TextRange) {
        let at = self.at(n);
        let ev = self.text(n).to_owned();
        self.sink.effect(
            EffectKind::EnvRead {
                name: name.to_owned(),
            },
            EffectTarget::Resolved(name.to_owned()),
            at,
            &ev,
        );
    }
}
