//! Functions defined in the script, scanned again at calls with constant arguments.

use ruff_python_ast::{Expr, ExprCall, StmtFunctionDef};
use ruff_text_size::Ranged;

use crate::catalog::id;

use super::process::EVERY_PROCESS_OBJ;
use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    /// Remember a function's parameters and body, for calls with constant arguments.
    pub(super) fn define(&mut self, f: &'t StmtFunctionDef) {
        let (Some(first), Some(last)) = (f.body.first(), f.body.last()) else {
            return;
        };
        let start = usize::from(first.range().start());
        let end = usize::from(last.range().end());
        let line_start = self.src[..start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &self.src[line_start..start];
        let body = if indent.chars().all(|c| c == ' ' || c == '\t') {
            self.src.get(line_start..end).unwrap_or("").to_owned()
        } else {
            format!("    {}", self.src.get(start..end).unwrap_or(""))
        };
        let params: Vec<String> = f
            .parameters
            .posonlyargs
            .iter()
            .chain(&f.parameters.args)
            .map(|p| p.parameter.name.as_str().to_owned())
            .collect();
        self.functions
            .insert(f.name.as_str().to_owned(), (params, body));
    }

    /// A call of a function defined in the script with constant arguments: its body is scanned
    /// again with the parameters bound (`def wipe(p): shutil.rmtree(p)` then `wipe('/etc')`),
    /// at the call's position. A process object or a list of every process passes too
    /// (`def stop(p): p.kill()` called as `stop(proc)` in a loop over `psutil.process_iter()`):
    /// the parameter stands for what the argument stands for.
    pub(super) fn inline_call(&mut self, c: &'t ExprCall, args: &Args<'t>) {
        let Expr::Name(name) = &*c.func else { return };
        let Some((params, body)) = self.functions.get(name.id.as_str()) else {
            return;
        };
        if self.inlined >= MAX_INLINED || self.nest >= 2 || args.positional.len() > params.len() {
            return;
        }
        let mut code = String::new();
        let mut bound = Bound::default();
        let named = params
            .iter()
            .zip(&args.positional)
            .map(|(p, a)| (p.as_str(), *a))
            .collect::<Vec<_>>();
        let mut unknown = false;
        for (k, a) in named
            .into_iter()
            .chain(args.keywords.iter().map(|(k, a)| (*k, *a)))
        {
            if !params.iter().any(|p| p == k) {
                return;
            }
            unknown |= !self.bind_param(k, a, &mut code, &mut bound);
        }
        // Other arguments unknown: only a process passed in is worth the body's second look.
        if unknown && bound.aliases.is_empty() && bound.proc_lists.is_empty() {
            return;
        }
        code.push_str("if True:\n");
        code.push_str(body);
        code.push('\n');
        self.inlined += 1;
        let base = self.base.or(Some(self.pos(c.range())));
        let mut sub = self.sink.child();
        scan_bound(&code, &mut sub, self.nest + 1, base, bound);
        // A body that does not stand alone (`return`, `yield` at the top) is not ours to deny.
        for f in sub.findings {
            if f.rule_id != id::PY_SYNTAX.as_str() {
                self.sink.push_at(f, base);
            }
        }
        for e in sub.effects {
            self.sink.effect(
                e.kind,
                e.target,
                base.unwrap_or((e.line, e.column)),
                &e.evidence,
            );
        }
    }

    /// Bind parameter `p` to argument `a` for an inlined body: a constant as an assignment in
    /// `code`, a process object or process list in `bound`; `false` when it is neither.
    fn bind_param(&self, p: &str, a: &'t Expr, code: &mut String, bound: &mut Bound) -> bool {
        if let Expr::Name(n) = a {
            if self.proc_lists.contains(n.id.as_str()) {
                bound.proc_lists.insert(p.to_owned());
                return true;
            }
        }
        if let Some(q) = self.resolve(a, 0) {
            if q == EVERY_PROCESS_OBJ || q == "psutil.Process" {
                bound.aliases.insert(p.to_owned(), q);
                return true;
            }
        }
        match self.path_value(a, 0) {
            Some(v) => {
                code.push_str(&format!("{p} = {v:?}\n"));
                true
            }
            None => false,
        }
    }
}
