//! Memory: one huge allocation (`'x' * 10**10`, `bytearray(10**12)`) and constant integers.

use ruff_python_ast::{Expr, ExprBinOp, ExprCall, Number, Operator};
use ruff_text_size::Ranged;

use crate::catalog::{finding, id};

use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    /// `[0] * 10**12`, `'x' * 10**10`, `bytearray(10**12)`-sized products: memory exhaustion.
    pub(super) fn huge_allocation(&mut self, b: &'t ExprBinOp) {
        if b.op != Operator::Mult {
            return;
        }
        // The elements of `seq * n` (`b"x" * 10**12`, `bytes(10**3) * 10**9`, `[0] * 10**12`).
        let count = match (self.seq_len(&b.left, 0), self.seq_len(&b.right, 0)) {
            (Some(len), _) => int_value(&b.right, 0).map(|n| n.saturating_mul(len)),
            (_, Some(len)) => int_value(&b.left, 0).map(|n| n.saturating_mul(len)),
            _ => None,
        };
        if count.is_some_and(|c| c >= HUGE) {
            let ev = self.text(b.range).to_owned();
            self.push(finding(id::PY_RESOURCE, &ev), b.range);
        }
    }

    /// The length of the sequence `e` builds, when known: a literal, `bytes(n)`,
    /// `bytearray(n)`, or a product of those.
    fn seq_len(&self, e: &Expr, depth: usize) -> Option<u128> {
        if depth > 16 {
            return None;
        }
        let len = |n: usize| Some(u128::try_from(n).unwrap_or(u128::MAX).max(1));
        match e {
            Expr::List(l) => len(l.elts.len()),
            Expr::Tuple(t) => len(t.elts.len()),
            Expr::StringLiteral(s) => len(s.value.len()),
            Expr::BytesLiteral(b) => len(b.value.bytes().count()),
            Expr::Call(c) => {
                let q = self.resolve(&c.func, 0)?;
                if !matches!(q.as_str(), "bytes" | "bytearray") {
                    return None;
                }
                match c.arguments.args.first() {
                    Some(a) => int_value(a, 0),
                    None => Some(0),
                }
            }
            Expr::BinOp(b) if b.op == Operator::Mult => {
                match (
                    self.seq_len(&b.left, depth + 1),
                    self.seq_len(&b.right, depth + 1),
                ) {
                    (Some(l), _) => int_value(&b.right, 0).map(|n| n.saturating_mul(l)),
                    (_, Some(r)) => int_value(&b.left, 0).map(|n| n.saturating_mul(r)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `bytes(n)` and `bytearray(n)` with a huge `n`: that many bytes at once.
    pub(super) fn huge_buffer(&mut self, q: &str, c: &'t ExprCall) {
        if !matches!(q, "bytes" | "bytearray") {
            return;
        }
        if c.arguments
            .args
            .first()
            .and_then(|a| int_value(a, 0))
            .is_some_and(|n| n >= HUGE)
        {
            let ev = self.text(c.range()).to_owned();
            self.push(finding(id::PY_RESOURCE, &ev), c.range());
        }
    }
}

/// The value of a constant integer expression (`10**12`, `1 << 40`, `4 * 1024`), saturating.
/// Elements or bytes from which one allocation is resource abuse.
const HUGE: u128 = 1_000_000_000;

pub(super) fn int_value(e: &Expr, depth: usize) -> Option<u128> {
    if depth > 16 {
        return None;
    }
    match e {
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_u64().map(u128::from).or(Some(u128::MAX)),
            _ => None,
        },
        Expr::BinOp(b) => {
            let l = int_value(&b.left, depth + 1)?;
            let r = int_value(&b.right, depth + 1)?;
            match b.op {
                Operator::Pow => Some(l.saturating_pow(u32::try_from(r.min(128)).unwrap_or(128))),
                Operator::Mult => Some(l.saturating_mul(r)),
                Operator::Add => Some(l.saturating_add(r)),
                Operator::LShift => Some(if r >= 127 {
                    u128::MAX
                } else {
                    l.saturating_mul(1u128 << r)
                }),
                _ => None,
            }
        }
        _ => None,
    }
}
