//! Bindings: what an assignment makes a name stand for (a constant, a module, downloaded or
//! decoded content, an open file or archive).

use ruff_python_ast::visitor::source_order::SourceOrderVisitor;
use ruff_python_ast::{Expr, StmtFor};

use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    /// Remember whether `name` now holds an open archive.
    pub(super) fn bind_archive(&mut self, name: &str, value: &'t Expr) {
        if self.is_archive(value) {
            self.archives.insert(name.to_owned());
        } else {
            self.archives.remove(name);
        }
    }

    /// `target = value`; `last` is false for the outer targets of a chained assignment.
    pub(super) fn assignment(&mut self, target: &'t Expr, value: &'t Expr, last: bool) {
        if let Expr::Tuple(t) = target {
            self.unpack(&t.elts, value);
            return;
        }
        let Expr::Name(left) = target else {
            return;
        };
        let name = left.id.as_str().to_owned();
        self.bind_table(&name, value);
        self.bind_content(&name, value);
        match self.opened_for_write(value) {
            Some(p) => self.handles.insert(name.clone(), p),
            None => self.handles.remove(&name),
        };
        self.bind_archive(&name, value);
        if self.decodes(value) {
            self.decoded.insert(name.clone());
        } else {
            self.decoded.remove(&name);
        }
        if self.reads_socket(value) {
            self.socket_data.insert(name.clone());
        } else {
            self.socket_data.remove(&name);
        }
        if self.lists_processes(value) {
            self.proc_lists.insert(name.clone());
        } else {
            self.proc_lists.remove(&name);
        }
        match self.int_of(value, 0) {
            Some(n) if last => self.ints.insert(name.clone(), n),
            _ => self.ints.remove(&name),
        };
        if self.is_tainted(value) {
            self.tainted.insert(name.clone());
        } else {
            self.tainted.remove(&name);
        }
        if !last {
            self.consts.remove(&name);
            self.aliases.remove(&name);
            return;
        }
        match self.const_value(value, 0) {
            Some(c) => {
                self.consts.insert(name.clone(), c);
            }
            None => match self.fmt_value(value, 0) {
                Some(s) => {
                    self.consts.insert(name.clone(), Const::Str(s));
                }
                None => {
                    self.consts.remove(&name);
                }
            },
        }
        // `f = os.system`, `o = __import__("os")`
        if matches!(
            value,
            Expr::Attribute(_) | Expr::Name(_) | Expr::Call(_) | Expr::Subscript(_)
        ) {
            if let Some(q) = self.resolve(value, 0) {
                let root = q.split('.').next().unwrap_or(&q);
                if q != name
                    && (self
                        .aliases
                        .values()
                        .any(|v| v.split('.').next() == Some(root))
                        || matches!(value, Expr::Call(_)))
                {
                    self.aliases.insert(name, q);
                    return;
                }
            }
        }
        self.aliases.remove(&name);
    }
}

impl<'t, 's: 't> Py<'_, 's> {
    /// `a, b = '/etc', 'shadow'` and `d, n = os.path.split(p)`: each name gets its part; names
    /// whose part is unknown are forgotten.
    fn unpack(&mut self, names: &'t [Expr], value: &'t Expr) {
        let parts: Option<Vec<Option<String>>> = match value {
            Expr::Tuple(v) if v.elts.len() == names.len() => {
                Some(v.elts.iter().map(|e| self.path_value(e, 0)).collect())
            }
            Expr::Call(c) if names.len() == 2 => {
                let q = self.resolve(&c.func, 0).unwrap_or_default();
                let arg = c.arguments.args.first().and_then(|a| self.path_value(a, 0));
                match (q.as_str(), arg) {
                    ("os.path.split", Some(p)) => {
                        let (d, n) = p.rsplit_once('/').unwrap_or(("", p.as_str()));
                        let d = if d.is_empty() && p.starts_with('/') {
                            "/"
                        } else {
                            d
                        };
                        Some(vec![Some(d.to_owned()), Some(n.to_owned())])
                    }
                    ("os.path.splitext", Some(p)) => {
                        let (stem, ext) = match p.rfind('.') {
                            Some(i) if i > p.rfind('/').map_or(0, |s| s + 1) => {
                                (p[..i].to_owned(), p[i..].to_owned())
                            }
                            _ => (p.clone(), String::new()),
                        };
                        Some(vec![Some(stem), Some(ext)])
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        for (i, n) in names.iter().enumerate() {
            let Expr::Name(n) = n else { continue };
            let name = n.id.as_str().to_owned();
            self.tainted.remove(&name);
            self.aliases.remove(&name);
            self.ints.remove(&name);
            self.socket_data.remove(&name);
            self.proc_lists.remove(&name);
            match parts.as_ref().and_then(|p| p.get(i).cloned().flatten()) {
                Some(v) => {
                    self.consts.insert(name, Const::Str(v));
                }
                None => {
                    self.consts.remove(&name);
                }
            }
        }
    }
}

/// Most values of a constant list a loop body is walked with, and most extra passes over loop
/// bodies per script.
const MAX_UNROLL_VALUES: usize = 8;
const MAX_UNROLLS: usize = 16;

impl<'t, 's: 't> Py<'_, 's> {
    /// `for d in ['/etc', '/var']:`: the body is walked with `d` bound to each value in turn
    /// (the first now, the others by [`Py::rewalk`]).
    pub(super) fn unroll(&mut self, f: &'t StmtFor) {
        let Expr::Name(n) = &*f.target else { return };
        let each = |elts: &'t [Expr]| -> Option<Vec<Const>> {
            elts.iter()
                .map(|e| match e {
                    Expr::List(_) | Expr::Tuple(_) => self.const_value(e, 0),
                    _ => self.path_value(e, 0).map(Const::Str),
                })
                .collect()
        };
        let values = match &*f.iter {
            Expr::List(l) => each(&l.elts),
            Expr::Tuple(t) => each(&t.elts),
            _ => match self.const_value(&f.iter, 0) {
                Some(Const::List(items)) => items.into_iter().map(|i| i.map(Const::Str)).collect(),
                _ => None,
            },
        };
        let Some(values) = values else { return };
        let Some(first) = values.first().cloned() else {
            return;
        };
        let name = n.id.as_str().to_owned();
        self.consts.insert(name.clone(), first);
        let rest = values
            .into_iter()
            .skip(1)
            .take(MAX_UNROLL_VALUES - 1)
            .collect();
        self.unrolled.push((f.range, name, rest));
    }

    /// After the first pass over a loop over a constant list: the body again for each other
    /// value, within the script's budget.
    pub(super) fn rewalk(&mut self, f: &'t StmtFor) {
        if self.unrolled.last().is_none_or(|(r, _, _)| *r != f.range) {
            return;
        }
        let Some((_, name, rest)) = self.unrolled.pop() else {
            return;
        };
        for v in rest {
            if self.unrolls >= MAX_UNROLLS {
                break;
            }
            self.unrolls += 1;
            self.consts.insert(name.clone(), v);
            for s in &f.body {
                self.visit_stmt(s);
            }
        }
    }
}

impl<'t, 's: 't> Py<'_, 's> {
    /// `table = {"f": os.chmod}`: `table["f"]` stands for `os.chmod`. Entries of an earlier
    /// table of the same name are forgotten.
    fn bind_table(&mut self, name: &str, value: &'t Expr) {
        let prefix = format!("{name}[");
        if self.aliases.keys().any(|k| k.starts_with(&prefix)) {
            self.aliases.retain(|k, _| !k.starts_with(&prefix));
        }
        let Expr::Dict(d) = value else { return };
        for item in d.items.iter().take(64) {
            let Some(key) = item.key.as_ref().and_then(|k| self.string(k)) else {
                continue;
            };
            if !matches!(item.value, Expr::Attribute(_) | Expr::Name(_)) {
                continue;
            }
            if let Some(q) = self.resolve(&item.value, 0) {
                let root = q.split('.').next().unwrap_or(&q);
                if self
                    .aliases
                    .values()
                    .any(|v| v.split('.').next() == Some(root))
                {
                    self.aliases.insert(format!("{prefix}{key}]"), q);
                }
            }
        }
    }
}
