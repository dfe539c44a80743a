//! What an expression holds: names resolved through imports, constant strings and paths, and
//! whether it carries downloaded content.

use ruff_python_ast::visitor::source_order::{walk_expr, SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::{AnyNodeRef, Expr, FStringPart, InterpolatedStringElement, Operator};
use ruff_text_size::Ranged;

use crate::paths::{self};

use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    /// Qualified name of a callee or module expression.
    pub(super) fn resolve(&self, e: &'t Expr, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match e {
            Expr::Name(n) => {
                let t = n.id.as_str();
                if let Some(q) = self.aliases.get(t) {
                    return Some(q.clone());
                }
                if STAR_NAMES.contains(&t) {
                    if let Some(m) = self.star.iter().find(|m| star_provides(m, t)) {
                        return Some(format!("{m}.{t}"));
                    }
                }
                Some(t.to_owned())
            }
            Expr::Attribute(a) => Some(format!(
                "{}.{}",
                self.resolve(&a.value, depth + 1)?,
                a.attr.as_str()
            )),
            Expr::Call(c) => {
                let f = self.resolve(&c.func, depth + 1)?;
                let args = Args::of(&c.arguments);
                match f.as_str() {
                    "__import__" | "importlib.import_module" | "builtins.__import__" => {
                        args.positional.first().and_then(|a| self.text_value(a))
                    }
                    // `ctypes.CDLL(None)`, `ctypes.CDLL(find_library('c'))`,
                    // `ctypes.cdll.LoadLibrary('libc.so.6')`: the C library itself.
                    "ctypes.CDLL"
                    | "ctypes.PyDLL"
                    | "ctypes.cdll.LoadLibrary"
                    | "ctypes.LibraryLoader"
                    | "cffi.FFI.dlopen" => {
                        let lib = args.positional.first();
                        let libc = match lib {
                            None => true,
                            Some(Expr::NoneLiteral(_)) => true,
                            Some(l) => {
                                let t = self.text(l.range());
                                t.contains("find_library")
                                    || self.text_value(l).is_some_and(|v| v.contains("libc"))
                            }
                        };
                        libc.then(|| "ctypes.libc".to_owned())
                    }
                    "getattr" | "builtins.getattr" => {
                        let obj = self.resolve(args.positional.first()?, depth + 1)?;
                        let name = self.text_value(args.positional.get(1)?)?;
                        Some(format!("{obj}.{name}"))
                    }
                    f => super::net::constructed(f).map(str::to_owned),
                }
            }
            // `globals()['os']`, `vars(os)['system']`, `os.__dict__['system']`,
            // `__builtins__.__dict__['exec']`: a lookup by a name the scan can spell.
            Expr::Subscript(s) => {
                let name = self.text_value(&s.slice)?;
                match &*s.value {
                    // `table = {"f": os.chmod}; table["f"]`
                    Expr::Name(n) => self
                        .aliases
                        .get(&format!("{}[{name}]", n.id.as_str()))
                        .cloned(),
                    Expr::Call(c) => {
                        let f = self.resolve(&c.func, depth + 1)?;
                        match (f.as_str(), c.arguments.args.first()) {
                            ("globals" | "locals" | "vars", None) => {
                                Some(self.aliases.get(&name).cloned().unwrap_or(name))
                            }
                            ("vars", Some(m)) => {
                                Some(format!("{}.{name}", self.resolve(m, depth + 1)?))
                            }
                            _ => None,
                        }
                    }
                    Expr::Attribute(a) if a.attr.as_str() == "__dict__" => {
                        Some(format!("{}.{name}", self.resolve(&a.value, depth + 1)?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Literal value of a string (no f-string interpolation); bytes are read as UTF-8.
    pub(super) fn string(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::StringLiteral(s) => Some(s.value.to_str().to_owned()),
            Expr::BytesLiteral(b) => {
                let bytes: Vec<u8> = b.value.bytes().collect();
                Some(String::from_utf8_lossy(&bytes).into_owned())
            }
            Expr::FString(f) => {
                let mut out = String::new();
                for part in f.value.iter() {
                    match part {
                        FStringPart::Literal(l) => out.push_str(&l.value),
                        FStringPart::FString(fs) => {
                            for el in fs.elements.iter() {
                                match el {
                                    InterpolatedStringElement::Literal(l) => out.push_str(&l.value),
                                    InterpolatedStringElement::Interpolation(_) => return None,
                                }
                            }
                        }
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }

    pub(super) fn const_value(&self, e: &'t Expr, depth: usize) -> Option<Const> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match e {
            Expr::List(l) => Some(Const::List(
                l.elts
                    .iter()
                    .map(|c| self.path_value(c, depth + 1))
                    .collect(),
            )),
            Expr::Tuple(t) if t.parenthesized => Some(Const::List(
                t.elts
                    .iter()
                    .map(|c| self.path_value(c, depth + 1))
                    .collect(),
            )),
            _ => self.path_value(e, depth).map(Const::Str),
        }
    }

    /// A path or string value, following `Path.home()`, `expanduser`, `os.path.join`, `/`, `+`.
    pub(super) fn path_value(&self, e: &'t Expr, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match e {
            Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_) => self.string(e),
            Expr::Name(n) => match self.consts.get(n.id.as_str()) {
                Some(Const::Str(s)) => Some(s.clone()),
                _ => None,
            },
            Expr::BinOp(b) => {
                let l = self.path_value(&b.left, depth + 1)?;
                let r = self.path_value(&b.right, depth + 1)?;
                match b.op {
                    Operator::Div => Some(join(&l, &r)),
                    Operator::Add => Some(format!("{l}{r}")),
                    _ => None,
                }
            }
            // `p.parent`: the directory of a known path.
            Expr::Attribute(a) if a.attr.as_str() == "parent" => {
                let base = self.path_value(&a.value, depth + 1)?;
                let base = base.trim_end_matches('/');
                Some(match base.rsplit_once('/') {
                    Some(("", _)) => "/".to_owned(),
                    Some((dir, _)) => dir.to_owned(),
                    None => ".".to_owned(),
                })
            }
            Expr::Attribute(_) => match self.resolve(e, depth + 1)?.as_str() {
                "os.sep" | "os.path.sep" | "os.altsep" => Some("/".to_owned()),
                "os.curdir" | "os.path.curdir" => Some(".".to_owned()),
                "os.pardir" | "os.path.pardir" => Some("..".to_owned()),
                _ => None,
            },
            Expr::Subscript(s) => {
                if let Some(sliced) = self.sliced_string(e, depth) {
                    return Some(sliced);
                }
                let v = self.resolve(&s.value, depth + 1)?;
                let k = self.string(&s.slice)?;
                (v == "os.environ" && k == "HOME").then(|| "~".to_owned())
            }
            Expr::Call(c) => {
                let func = &*c.func;
                let args = Args::of(&c.arguments);
                let first = args.positional.first().copied();
                let f = self.resolve(func, depth + 1);
                match f.as_deref() {
                    Some(
                        "os.path.expanduser" | "os.path.abspath" | "os.path.realpath"
                        | "os.path.normpath" | "pathlib.Path" | "Path" | "pathlib.PurePath"
                        | "PurePath" | "pathlib.PosixPath" | "str" | "os.fspath",
                    ) => match first {
                        Some(a) => self.path_value(a, depth + 1),
                        None => Some(".".to_owned()),
                    },
                    Some("os.path.join") => {
                        let mut acc: Option<String> = None;
                        for a in &args.positional {
                            let v = self.path_value(a, depth + 1)?;
                            acc = Some(match acc {
                                None => v,
                                Some(p) => join(&p, &v),
                            });
                        }
                        acc
                    }
                    Some("os.getenv" | "os.environ.get") => {
                        (first.and_then(|a| self.string(a)).as_deref() == Some("HOME"))
                            .then(|| "~".to_owned())
                    }
                    Some("os.getcwd") => Some(".".to_owned()),
                    Some(q) if q.ends_with("Path.home") || q == "os.path.expanduser" => {
                        Some("~".to_owned())
                    }
                    q => {
                        if let Some(s) = self.built_string(q, c, depth) {
                            return Some(s);
                        }
                        // Method calls on a path: `.expanduser()`, `.resolve()`, `.absolute()`, `.joinpath(x)`.
                        if let Expr::Attribute(a) = func {
                            let base = self.path_value(&a.value, depth + 1)?;
                            return match a.attr.as_str() {
                                "expanduser" | "resolve" | "absolute" => Some(base),
                                "joinpath" => {
                                    Some(join(&base, &self.path_value(first?, depth + 1)?))
                                }
                                _ => None,
                            };
                        }
                        None
                    }
                }
            }
            _ => None,
        }
    }

    pub(super) fn is_tainted(&self, e: &'t Expr) -> bool {
        let mut t = Taint {
            py: self,
            depth: 0,
            seen: 0,
            found: false,
        };
        walk_expr(&mut t, e);
        t.found
    }

    pub(super) fn is_dangerous_walk(&self, e: &'t Expr) -> bool {
        let Expr::Call(c) = e else {
            return false;
        };
        let f = self.resolve(&c.func, 0);
        if !matches!(
            f.as_deref(),
            Some("os.walk" | "os.scandir" | "os.listdir" | "glob.glob" | "glob.iglob")
        ) {
            let Expr::Attribute(method) = &*c.func else {
                return false;
            };
            if !matches!(method.attr.as_str(), "rglob" | "glob" | "iterdir" | "walk") {
                return false;
            }
            return self
                .path_value(&method.value, 0)
                .is_some_and(|p| paths::is_catastrophic(paths::classify(&p)));
        }
        let args = Args::of(&c.arguments);
        args.positional
            .first()
            .and_then(|a| self.path_value(a, 0))
            .is_some_and(|p| paths::is_catastrophic(paths::classify(&p)))
    }
}

/// Does an expression hold downloaded content? A bounded walk: too big or too deep says yes.
pub(super) struct Taint<'p, 'a, 's> {
    py: &'p Py<'a, 's>,
    depth: usize,
    seen: usize,
    found: bool,
}

impl<'t, 's: 't> SourceOrderVisitor<'t> for Taint<'_, '_, 's> {
    fn visit_expr(&mut self, expr: &'t Expr) {
        with_stack(self.depth, || walk_expr(self, expr));
    }

    fn enter_node(&mut self, node: AnyNodeRef<'t>) -> TraversalSignal {
        self.depth += 1;
        self.seen += 1;
        if self.found {
            return TraversalSignal::Skip;
        }
        if self.seen > MAX_TAINT_NODES || self.depth > MAX_TREE_DEPTH {
            self.found = true;
            return TraversalSignal::Skip;
        }
        match node {
            AnyNodeRef::ExprName(n) if self.py.tainted.contains(n.id.as_str()) => {
                self.found = true;
            }
            AnyNodeRef::ExprCall(c) => {
                if let Some(f) = self.py.resolve(&c.func, 0) {
                    if DOWNLOADERS.iter().any(|d| f == *d) {
                        self.found = true;
                    }
                }
            }
            _ => {}
        }
        if self.found {
            TraversalSignal::Skip
        } else {
            TraversalSignal::Traverse
        }
    }

    fn leave_node(&mut self, _node: AnyNodeRef<'t>) {
        self.depth -= 1;
    }
}

pub(super) fn star_provides(module: &str, name: &str) -> bool {
    match module {
        "os" | "posix" => matches!(
            name,
            "system"
                | "popen"
                | "execv"
                | "execve"
                | "execl"
                | "execlp"
                | "execvp"
                | "spawnl"
                | "spawnv"
                | "remove"
                | "unlink"
                | "dup2"
                | "fork"
        ),
        "subprocess" => matches!(
            name,
            "run"
                | "call"
                | "check_call"
                | "check_output"
                | "Popen"
                | "getoutput"
                | "getstatusoutput"
        ),
        "shutil" => name == "rmtree",
        "pickle" | "marshal" => matches!(name, "load" | "loads"),
        "pty" => name == "spawn",
        "socket" => name == "socket",
        "urllib.request" => name == "urlopen",
        "requests" => matches!(name, "get" | "post"),
        "ctypes" => matches!(name, "CDLL" | "cdll"),
        "importlib" => name == "import_module",
        _ => false,
    }
}

pub(super) fn join(a: &str, b: &str) -> String {
    if b.starts_with('/') || b.starts_with('~') {
        b.to_owned()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}
