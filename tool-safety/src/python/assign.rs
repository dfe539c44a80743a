//! Bindings: what an assignment makes a name stand for (a constant, a module, downloaded or
//! decoded content, an open file or archive).

use ruff_python_ast::Expr;

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
        if matches!(value, Expr::Attribute(_) | Expr::Name(_) | Expr::Call(_)) {
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
