//! Strings built from constants: what `'ch' + 'mod'`, `''.join([...])`, `chr(111)`,
//! `bytes([...]).decode()`, `base64.b64decode('...')`, `codecs.decode(..., 'rot13')` and
//! `'...'[::-1]` hold, so the rules judge the name or the code a script spells indirectly.

use base64::Engine as _;
use ruff_python_ast::{Comprehension, Expr, ExprCall};
use ruff_text_size::Ranged;

use super::alloc::int_value;
use super::walk::*;

/// Longest string built by the evaluation; longer results are not resolved.
const MAX_BUILT: usize = 64 * 1024;

impl<'t, 's: 't> Py<'_, 's> {
    /// The string `e` holds when built from constants (paths, `+`, `%`, f-strings, joins,
    /// decoders), if the scan can tell.
    pub(super) fn text_value(&self, e: &'t Expr) -> Option<String> {
        self.str_value(e, 0)
    }

    /// [`Self::text_value`] at nesting `depth`: a path-like value, else a formatted one.
    pub(super) fn str_value(&self, e: &'t Expr, depth: usize) -> Option<String> {
        self.path_value(e, depth)
            .or_else(|| self.fmt_value(e, depth))
    }

    /// The string a call builds from constants: `sep.join(...)`, `chr(n)`, `bytes([...])`,
    /// `.decode()`, `.lower()`, `.replace(a, b)`, and the decoders of `base64`, `binascii`,
    /// `codecs`, `bytes.fromhex`.
    pub(super) fn built_string(
        &self,
        q: Option<&str>,
        c: &'t ExprCall,
        depth: usize,
    ) -> Option<String> {
        let d = depth + 1;
        let args = &c.arguments.args;
        let arg = |i: usize| args.get(i);
        let val = |x: &'t Expr| self.str_value(x, d);
        let out = match q {
            Some("chr") => {
                let n = int_value(arg(0)?, 0)?;
                char::from_u32(u32::try_from(n).ok()?).map(String::from)
            }
            Some("bytes" | "bytearray") => match arg(0)? {
                Expr::List(_) | Expr::Tuple(_) => {
                    let bytes = self.int_list(arg(0)?, d)?;
                    Some(String::from_utf8_lossy(&bytes).into_owned())
                }
                x => {
                    let s = val(x)?;
                    // `bytes('os', 'utf-8')`
                    arg(1).map(|_| s)
                }
            },
            Some(
                "base64.b64decode"
                | "base64.standard_b64decode"
                | "base64.decodebytes"
                | "base64.urlsafe_b64decode"
                | "base64.decodestring",
            ) => {
                let s = val(arg(0)?)?;
                let s: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                let engine = if q == Some("base64.urlsafe_b64decode") {
                    &base64::engine::general_purpose::URL_SAFE
                } else {
                    &base64::engine::general_purpose::STANDARD
                };
                let bytes = engine.decode(s.as_bytes()).ok()?;
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            Some(
                "base64.b16decode" | "binascii.unhexlify" | "binascii.a2b_hex" | "bytes.fromhex",
            ) => unhex(&val(arg(0)?)?),
            Some("codecs.decode" | "codecs.encode") => {
                let s = val(arg(0)?)?;
                let codec = c
                    .arguments
                    .keywords
                    .iter()
                    .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "encoding"))
                    .map(|k| &k.value)
                    .or(arg(1))
                    .and_then(|e| self.string(e))
                    .unwrap_or_default()
                    .to_ascii_lowercase()
                    .replace(['-', '_'], "");
                match codec.as_str() {
                    "rot13" => Some(rot13(&s)),
                    "hex" | "hexcodec" => unhex(&s),
                    "base64" | "base64codec" => {
                        let bytes = base64::engine::general_purpose::STANDARD
                            .decode(s.trim().as_bytes())
                            .ok()?;
                        Some(String::from_utf8_lossy(&bytes).into_owned())
                    }
                    "" | "utf8" | "ascii" | "latin1" => Some(s),
                    _ => None,
                }
            }
            _ => {
                let Expr::Attribute(a) = &*c.func else {
                    return None;
                };
                let method = a.attr.as_str();
                if !matches!(
                    method,
                    "join"
                        | "decode"
                        | "encode"
                        | "lower"
                        | "upper"
                        | "strip"
                        | "lstrip"
                        | "rstrip"
                        | "replace"
                        | "swapcase"
                        | "title"
                        | "capitalize"
                ) {
                    return None;
                }
                let base = val(&a.value)?;
                match method {
                    "join" => {
                        let parts = self.str_items(arg(0)?, d)?;
                        Some(parts.join(&base))
                    }
                    "decode" | "encode" => Some(base),
                    "lower" => Some(base.to_lowercase()),
                    "upper" => Some(base.to_uppercase()),
                    "swapcase" => Some(
                        base.chars()
                            .map(|c| {
                                if c.is_uppercase() {
                                    c.to_lowercase().collect::<String>()
                                } else {
                                    c.to_uppercase().collect()
                                }
                            })
                            .collect(),
                    ),
                    "strip" | "lstrip" | "rstrip" if args.is_empty() => Some(match method {
                        "strip" => base.trim().to_owned(),
                        "lstrip" => base.trim_start().to_owned(),
                        _ => base.trim_end().to_owned(),
                    }),
                    "replace" => {
                        let from = val(arg(0)?)?;
                        let to = val(arg(1)?)?;
                        (!from.is_empty()).then(|| base.replace(&from, &to))
                    }
                    _ => None,
                }
            }
        }?;
        (out.len() <= MAX_BUILT).then_some(out)
    }

    /// `'abc'[::-1]`, `'xsystemx'[1:-1]`, `'os'[0]`: a slice of a constant string with constant
    /// bounds, or one of its characters.
    pub(super) fn sliced_string(&self, s: &'t Expr, depth: usize) -> Option<String> {
        let Expr::Subscript(sub) = s else { return None };
        let base = || -> Option<Vec<char>> {
            Some(self.str_value(&sub.value, depth + 1)?.chars().collect())
        };
        let Expr::Slice(sl) = &*sub.slice else {
            // `'os'[0]`: one character.
            let i = signed_int(&sub.slice)?;
            let base = base()?;
            let len = i128::try_from(base.len()).ok()?;
            let i = if i < 0 { i + len } else { i };
            return base.get(usize::try_from(i).ok()?).map(|c| c.to_string());
        };
        let base = base()?;
        let len = i128::try_from(base.len()).ok()?;
        let bound = |e: &Option<Box<Expr>>| -> Option<Option<i128>> {
            match e.as_deref() {
                None => Some(None),
                Some(x) => signed_int(x).map(Some),
            }
        };
        let step = bound(&sl.step)?.unwrap_or(1);
        if step == 0 {
            return None;
        }
        let clamp = |v: i128, lo: i128, hi: i128| {
            let v = if v < 0 { v + len } else { v };
            v.clamp(lo, hi)
        };
        let mut out = String::new();
        if step > 0 {
            let lo = bound(&sl.lower)?.map_or(0, |v| clamp(v, 0, len));
            let hi = bound(&sl.upper)?.map_or(len, |v| clamp(v, 0, len));
            let mut i = lo;
            while i < hi {
                out.push(base[usize::try_from(i).ok()?]);
                i += step;
            }
        } else {
            let hi = bound(&sl.lower)?.map_or(len - 1, |v| clamp(v, -1, len - 1));
            let lo = bound(&sl.upper)?.map_or(-1, |v| clamp(v, -1, len - 1));
            let mut i = hi;
            while i > lo {
                out.push(base[usize::try_from(i).ok()?]);
                i += step;
            }
        }
        Some(out)
    }

    /// The strings of a constant sequence: a list or tuple of strings, a name bound to one,
    /// `map(chr, [...])`, `reversed(...)`, `(chr(c) for c in [...])` and `[chr(c) for c in [...]]`.
    fn str_items(&self, e: &'t Expr, depth: usize) -> Option<Vec<String>> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        let val = |x: &'t Expr| self.str_value(x, depth + 1);
        match e {
            Expr::List(l) => l.elts.iter().map(val).collect(),
            Expr::Tuple(t) => t.elts.iter().map(val).collect(),
            Expr::Name(n) => match self.consts.get(n.id.as_str()) {
                Some(Const::List(items)) => items.iter().cloned().collect(),
                Some(Const::Str(s)) => Some(s.chars().map(String::from).collect()),
                None => None,
            },
            Expr::StringLiteral(_) => Some(val(e)?.chars().map(String::from).collect()),
            // `reversed('so')`
            Expr::Call(c)
                if c.arguments.args.len() == 1
                    && self.resolve(&c.func, 0).as_deref() == Some("reversed") =>
            {
                let mut items = self.str_items(&c.arguments.args[0], depth + 1)?;
                items.reverse();
                Some(items)
            }
            Expr::Call(c) => {
                // `map(chr, [111, 115])`
                let q = self.resolve(&c.func, 0)?;
                let [f, seq] = &c.arguments.args[..] else {
                    return None;
                };
                if q != "map" || self.resolve(f, 0).as_deref() != Some("chr") {
                    return None;
                }
                self.int_list(seq, depth + 1)?
                    .into_iter()
                    .map(|b| char::from_u32(u32::from(b)).map(String::from))
                    .collect()
            }
            Expr::Generator(g) => self.chr_comprehension(&g.elt, &g.generators, depth),
            Expr::ListComp(g) => self.chr_comprehension(&g.elt, &g.generators, depth),
            _ => None,
        }
    }

    /// `chr(c) for c in [...]` (also `chr(c + k)`, `chr(c ^ k)` for a constant `k`).
    fn chr_comprehension(
        &self,
        elt: &'t Expr,
        gens: &'t [Comprehension],
        depth: usize,
    ) -> Option<Vec<String>> {
        let [g] = gens else { return None };
        if !g.ifs.is_empty() {
            return None;
        }
        let Expr::Name(var) = &g.target else {
            return None;
        };
        let Expr::Call(call) = elt else { return None };
        if self.resolve(&call.func, 0).as_deref() != Some("chr") {
            return None;
        }
        let [inner] = &call.arguments.args[..] else {
            return None;
        };
        let codes = self.int_codes(&g.iter, depth + 1)?;
        codes
            .into_iter()
            .map(|n| {
                let v = apply_var(inner, var.id.as_str(), n)?;
                char::from_u32(u32::try_from(v).ok()?).map(String::from)
            })
            .collect()
    }

    /// Integers of a literal list or tuple (`[111, 115]`), or the characters of a string.
    fn int_codes(&self, e: &'t Expr, _depth: usize) -> Option<Vec<i128>> {
        match e {
            Expr::List(l) => l.elts.iter().map(signed_int).collect(),
            Expr::Tuple(t) => t.elts.iter().map(signed_int).collect(),
            _ => None,
        }
    }

    /// Bytes of a literal list of small integers (`bytes([111, 115])`).
    fn int_list(&self, e: &'t Expr, depth: usize) -> Option<Vec<u8>> {
        self.int_codes(e, depth)?
            .into_iter()
            .map(|n| u8::try_from(n).ok())
            .collect()
    }

    /// `true` when `e` decodes a payload: `base64.b64decode(...)`, `zlib.decompress(...)`,
    /// `bytes.fromhex(...)`, `codecs.decode(..., 'rot13')`, anywhere inside it.
    pub(super) fn decodes(&self, e: &'t Expr) -> bool {
        let t = self.text(e.range());
        [
            "b64decode",
            "b32decode",
            "b16decode",
            "b85decode",
            "a85decode",
            "decodebytes",
            "decompress",
            "unhexlify",
            "fromhex",
            "codecs.decode",
            "rot13",
            "rot_13",
        ]
        .iter()
        .any(|d| t.contains(d))
            || matches!(e, Expr::Name(n) if self.decoded.contains(n.id.as_str()))
    }
}

/// The value of `e` with `var` bound to `n`: `c`, `c + k`, `c - k`, `c ^ k` for constant `k`.
fn apply_var(e: &Expr, var: &str, n: i128) -> Option<i128> {
    use ruff_python_ast::Operator as O;
    match e {
        Expr::Name(x) if x.id.as_str() == var => Some(n),
        Expr::BinOp(b) => {
            let l = apply_var(&b.left, var, n).or_else(|| signed_int(&b.left))?;
            let r = apply_var(&b.right, var, n).or_else(|| signed_int(&b.right))?;
            match b.op {
                O::Add => l.checked_add(r),
                O::Sub => l.checked_sub(r),
                O::BitXor => Some(l ^ r),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A constant integer that may be negative (`-1`), small enough for indices and code points.
fn signed_int(e: &Expr) -> Option<i128> {
    match e {
        Expr::UnaryOp(u) if u.op == ruff_python_ast::UnaryOp::USub => {
            signed_int(&u.operand).map(|v| -v)
        }
        e => int_value(e, 0)
            .filter(|v| *v <= u128::from(u32::MAX))
            .and_then(|v| i128::try_from(v).ok()),
    }
}

fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='z' => char::from(b'a' + (c as u8 - b'a' + 13) % 26),
            'A'..='Z' => char::from(b'A' + (c as u8 - b'A' + 13) % 26),
            c => c,
        })
        .collect()
}

fn unhex(s: &str) -> Option<String> {
    let s: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if s.len() % 2 != 0 {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    Some(String::from_utf8_lossy(&bytes?).into_owned())
}
