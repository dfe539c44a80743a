//! Functions defined in the script, scanned again at calls with constant arguments.

use ruff_python_ast::{Expr, ExprCall, StmtFunctionDef};
use ruff_text_size::Ranged;

use crate::catalog::id;

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
    /// at the call's position.
    pub(super) fn inline_call(&mut self, c: &'t ExprCall, args: &Args<'t>) {
        let Expr::Name(name) = &*c.func else { return };
        let Some((params, body)) = self.functions.get(name.id.as_str()) else {
            return;
        };
        if self.inlined >= MAX_INLINED || self.nest >= 2 || args.positional.len() > params.len() {
            return;
        }
        let mut code = String::new();
        for (p, a) in params.iter().zip(&args.positional) {
            let Some(v) = self.path_value(a, 0) else {
                return;
            };
            code.push_str(&format!("{p} = {v:?}\n"));
        }
        for (k, a) in &args.keywords {
            if !params.iter().any(|p| p == k) {
                return;
            }
            let Some(v) = self.path_value(a, 0) else {
                return;
            };
            code.push_str(&format!("{k} = {v:?}\n"));
        }
        code.push_str("if True:\n");
        code.push_str(body);
        code.push('\n');
        self.inlined += 1;
        let base = self.base.or(Some(self.pos(c.range())));
        let mut sub = self.sink.child();
        scan(&code, &mut sub, self.nest + 1, base);
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
}
