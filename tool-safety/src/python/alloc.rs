//! Memory: one huge allocation (`'x' * 10**10`, `bytearray(10**12)`, `numpy.zeros(10**10)`),
//! large lists kept (`[f(i) for i in range(10**9)]`, `list(range(10**9))`), loops that keep
//! growing a container with large objects, and constant integers.

use ruff_python_ast::{CmpOp, Expr, ExprBinOp, ExprCall, ExprListComp, Number, Operator};
use ruff_text_size::{Ranged, TextRange};

use crate::catalog::{finding, id};
use crate::effects::{EffectKind, EffectTarget, ALLOCATION_REVIEW_BYTES};

use super::walk::*;

/// Bytes a list keeps per element (the pointer), beyond the element itself.
const SLOT: u128 = 8;
/// Bytes of one element of a `numpy` array the scan cannot type (float64).
const NUMPY_ITEM: u128 = 8;
/// Objects from which a loop that keeps them without bound is an unbounded allocation.
const LARGE_OBJECT: u128 = 1024;
/// Objects from which a loop that keeps them, however many times it runs, is reviewed.
const HUGE_OBJECT: u128 = 1024 * 1024;

impl<'t, 's: 't> Py<'_, 's> {
    /// The value of a constant integer expression, following names bound to one.
    pub(super) fn int_of(&self, e: &Expr, depth: usize) -> Option<u128> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match e {
            Expr::Name(n) => self.ints.get(n.id.as_str()).copied(),
            Expr::BinOp(b) => {
                let l = self.int_of(&b.left, depth + 1)?;
                let r = self.int_of(&b.right, depth + 1)?;
                int_op(b.op, l, r)
            }
            _ => int_value(e, depth),
        }
    }

    /// How many times `for _ in iter` runs.
    pub(super) fn for_trip(&self, iter: &Expr) -> Trip {
        match iter {
            Expr::Call(c) => self.call_trip(c),
            _ => Trip::Unknown,
        }
    }

    /// How many items `range(...)` or `itertools.count()` yields.
    fn call_trip(&self, c: &ExprCall) -> Trip {
        let q = self.resolve(&c.func, 0).unwrap_or_default();
        let a = &c.arguments.args;
        match q.as_str() {
            "range" | "xrange" => {
                let n = match a.len() {
                    1 => self.int_of(&a[0], 0),
                    2 | 3 => {
                        let lo = self.int_of(&a[0], 0).unwrap_or(0);
                        let step = a.get(2).and_then(|s| self.int_of(s, 0)).unwrap_or(1);
                        self.int_of(&a[1], 0)
                            .map(|hi| hi.saturating_sub(lo) / step.max(1))
                    }
                    _ => None,
                };
                n.map_or(Trip::Unknown, Trip::Count)
            }
            "itertools.count" | "itertools.cycle" | "itertools.repeat" if a.len() <= 1 => {
                Trip::Unbounded
            }
            _ => Trip::Unknown,
        }
    }

    /// How many times `while test` runs: forever for a true constant, `N` for `i < N`.
    pub(super) fn while_trip(&self, test: &Expr) -> Trip {
        match test {
            Expr::BooleanLiteral(b) if b.value => Trip::Unbounded,
            Expr::NumberLiteral(_) => match int_value(test, 0) {
                Some(n) if n > 0 => Trip::Unbounded,
                _ => Trip::Unknown,
            },
            Expr::Compare(c) if c.ops.len() == 1 => match (&c.ops[0], c.comparators.first()) {
                (CmpOp::Lt | CmpOp::LtE, Some(r)) => {
                    self.int_of(r, 0).map_or(Trip::Unknown, Trip::Count)
                }
                _ => Trip::Unknown,
            },
            _ => Trip::Unknown,
        }
    }

    /// The bytes an expression allocates, when the scan can estimate them: strings and bytes
    /// (a byte a character), lists (a slot an element, plus the elements), `bytes(n)`,
    /// `bytearray(n)`, `numpy.zeros(shape)`, repetitions of those.
    pub(super) fn size_of(&self, e: &Expr, depth: usize) -> Option<u128> {
        if depth > 16 {
            return None;
        }
        let d = depth + 1;
        match e {
            Expr::StringLiteral(s) => Some(s.value.len() as u128),
            Expr::BytesLiteral(b) => Some(b.value.bytes().count() as u128),
            Expr::List(ruff_python_ast::ExprList { elts, .. })
            | Expr::Set(ruff_python_ast::ExprSet { elts, .. })
            | Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. }) => {
                let mut n = SLOT.saturating_mul(elts.len() as u128);
                for x in elts {
                    n = n.saturating_add(self.size_of(x, d).unwrap_or(0));
                }
                Some(n)
            }
            Expr::BinOp(b) => self.product_size(b, d),
            Expr::Call(c) => self.call_size(c),
            _ => None,
        }
    }

    /// The bytes `seq * n` allocates.
    fn product_size(&self, b: &ExprBinOp, depth: usize) -> Option<u128> {
        if b.op != Operator::Mult {
            return None;
        }
        let (seq, count) = match (self.size_of(&b.left, depth), self.int_of(&b.right, 0)) {
            (Some(s), Some(n)) => (s, n),
            _ => (self.size_of(&b.right, depth)?, self.int_of(&b.left, 0)?),
        };
        Some(seq.saturating_mul(count))
    }

    /// The bytes a call allocates: `bytes(n)`, `numpy.zeros(shape)`, `list(range(n))`.
    fn call_size(&self, c: &ExprCall) -> Option<u128> {
        let q = self.resolve(&c.func, 0)?;
        let a0 = c.arguments.args.first();
        match q.as_str() {
            "bytes" | "bytearray" => match a0 {
                Some(a) => self.int_of(a, 0),
                None => Some(0),
            },
            "numpy.zeros" | "numpy.ones" | "numpy.empty" | "numpy.full" | "np.zeros"
            | "np.ones" | "np.empty" | "np.full" | "torch.zeros" | "torch.ones" | "torch.empty"
            | "torch.randn" | "torch.rand" => {
                let dims = |xs: &[Expr]| {
                    xs.iter()
                        .try_fold(1u128, |acc, x| Some(acc.saturating_mul(self.int_of(x, 0)?)))
                };
                let n = match a0? {
                    Expr::Tuple(t) => dims(&t.elts),
                    Expr::List(l) => dims(&l.elts),
                    x => self.int_of(x, 0),
                }?;
                Some(n.saturating_mul(NUMPY_ITEM))
            }
            "list" | "tuple" | "set" => match a0 {
                Some(Expr::Call(r)) => match self.call_trip(r) {
                    Trip::Count(n) => Some(n.saturating_mul(SLOT)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// Record an allocation of `bytes` (unbounded when `None`) at `r`.
    fn allocation(&mut self, bytes: Option<u128>, r: TextRange) {
        let bytes = bytes.map(|b| u64::try_from(b).unwrap_or(u64::MAX));
        let at = self.at(r);
        let ev = self.text(r).to_owned();
        self.sink.effect(
            EffectKind::Allocation { bytes },
            EffectTarget::Unknown,
            at,
            &ev,
        );
    }

    /// An allocation of `bytes` at `r`, repeated by every loop around it: recorded when the
    /// total reaches the review size, or when a loop without end keeps large objects.
    fn grown(&mut self, each: u128, r: TextRange) {
        let mut total = Some(each);
        for t in &self.trips {
            total = match (*t, total) {
                (Trip::Count(n), Some(b)) => Some(b.saturating_mul(n)),
                (Trip::Unbounded, _) => None,
                // Run as often as data the scan does not see: only objects of a megabyte and
                // more are worth a look.
                (Trip::Unknown, _) if each >= HUGE_OBJECT => None,
                (Trip::Unknown, _) => return,
                (Trip::Count(_), None) => None,
            };
        }
        match total {
            Some(b) if b >= u128::from(ALLOCATION_REVIEW_BYTES) => self.allocation(Some(b), r),
            None if each >= LARGE_OBJECT => self.allocation(None, r),
            _ => {}
        }
    }

    /// `keep.append(x)`, `.extend(x)`, `.add(x)`, `.insert(i, x)` inside loops: the container
    /// grows by `x` each time round.
    pub(super) fn loop_growth_call(&mut self, c: &'t ExprCall, args: &Args<'t>) {
        if self.trips.is_empty() {
            return;
        }
        let Expr::Attribute(a) = &*c.func else { return };
        let item = match a.attr.as_str() {
            "append" | "add" | "appendleft" | "put" | "extend" => args.positional.first(),
            "insert" => args.positional.get(1),
            _ => None,
        };
        let Some(item) = item.copied() else { return };
        if let Some(each) = self.size_of(item, 0) {
            let slot = if a.attr.as_str() == "extend" { 0 } else { SLOT };
            self.grown(each.saturating_add(slot), c.range());
        }
    }

    /// `store[k] = bytes(4096)` inside loops: the container grows each time round.
    pub(super) fn subscript_growth(&mut self, targets: &[Expr], value: &'t Expr) {
        if self.trips.is_empty() || !targets.iter().any(|t| matches!(t, Expr::Subscript(_))) {
            return;
        }
        if let Some(each) = self.size_of(value, 0) {
            self.grown(each.saturating_add(SLOT), value.range());
        }
    }

    /// `[f(x) for x in range(N)]`: a list of `N` elements, kept.
    pub(super) fn kept_comprehension(&mut self, l: &'t ExprListComp) {
        let mut count = 1u128;
        for g in &l.generators {
            match self.for_trip(&g.iter) {
                Trip::Count(n) => count = count.saturating_mul(n),
                _ => return,
            }
        }
        let each = self.size_of(&l.elt, 0).unwrap_or(0).saturating_add(SLOT);
        let total = each.saturating_mul(count);
        if total >= u128::from(ALLOCATION_REVIEW_BYTES) {
            self.allocation(Some(total), l.range);
        }
    }

    /// `list(range(N))`, `numpy.zeros(N)`: one large allocation by a call.
    pub(super) fn allocating_call(&mut self, q: &str, c: &'t ExprCall) {
        if !matches!(
            q.split('.').next(),
            Some("list" | "tuple" | "numpy" | "np" | "torch")
        ) {
            return;
        }
        if let Some(b) = self.call_size(c) {
            if b >= u128::from(ALLOCATION_REVIEW_BYTES) {
                self.allocation(Some(b), c.range());
            }
        }
    }

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
        if let Some(n) = count.filter(|c| *c >= HUGE) {
            let ev = self.text(b.range).to_owned();
            self.push(finding(id::PY_RESOURCE, &ev), b.range);
            // Each element of a list is a slot; of a string or bytes, a byte.
            let list = matches!(&*b.left, Expr::List(_)) || matches!(&*b.right, Expr::List(_));
            self.allocation(Some(if list { n.saturating_mul(SLOT) } else { n }), b.range);
        } else if let Some(n) = self.product_size(b, 0) {
            if n >= u128::from(ALLOCATION_REVIEW_BYTES) && self.trips.is_empty() {
                self.allocation(Some(n), b.range);
            }
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
        let n = c.arguments.args.first().and_then(|a| self.int_of(a, 0));
        if let Some(n) = n.filter(|n| *n >= u128::from(ALLOCATION_REVIEW_BYTES)) {
            if n >= HUGE {
                let ev = self.text(c.range()).to_owned();
                self.push(finding(id::PY_RESOURCE, &ev), c.range());
            }
            self.allocation(Some(n), c.range());
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
            int_op(b.op, l, r)
        }
        _ => None,
    }
}

/// `l op r` on constant integers, saturating.
fn int_op(op: Operator, l: u128, r: u128) -> Option<u128> {
    match op {
        Operator::Pow => Some(l.saturating_pow(u32::try_from(r.min(128)).unwrap_or(128))),
        Operator::Mult => Some(l.saturating_mul(r)),
        Operator::Add => Some(l.saturating_add(r)),
        Operator::Sub => Some(l.saturating_sub(r)),
        Operator::FloorDiv if r > 0 => Some(l / r),
        Operator::LShift => Some(if r >= 127 {
            u128::MAX
        } else {
            l.saturating_mul(1u128 << r)
        }),
        _ => None,
    }
}
