//! The Python scanner: ruff_python_parser syntax tree, import aliases resolved, calls checked.

// Arms dispatch on the command or callee name; folding their conditions into guards would
// blur which name an arm is about.
#![allow(clippy::collapsible_match, clippy::collapsible_if)]

use std::collections::{HashMap, HashSet};

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::source_order::{
    walk_expr, walk_module, walk_stmt, SourceOrderVisitor, TraversalSignal,
};
use ruff_python_ast::{
    AnyNodeRef, Arguments, Expr, ExprCall, FStringPart, InterpolatedStringElement, Mod, Operator,
    Stmt,
};
use ruff_python_parser::{Mode, ParseOptions, Parsed};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::catalog::finding;
use crate::paths::{self, PathClass};
use crate::report::SafetyFinding;
use crate::sink::{self, CallView, Sink};
use crate::ScriptLang;

/// Deepest syntax tree walked, and deepest bracket nesting accepted, before the scan gives up.
const MAX_TREE_DEPTH: usize = 400;
const MAX_EXPR_DEPTH: usize = 48;
/// Nodes looked at when deciding whether an expression holds downloaded content.
const MAX_TAINT_NODES: usize = 4096;
/// Stack reserved per script byte to drop a tree that was too deep to walk: a node per byte is
/// the worst case, and dropping one level of the tree takes well under this (measured).
const DROP_STACK_PER_BYTE: usize = 1024;
/// The walks recurse once per tree level: every so many levels they make sure this much stack
/// is left (moving to a new segment of [`STACK_SEGMENT`] bytes if not), so nested scripts with
/// deep trees fit in any thread's stack.
const STACK_CHECK_EVERY: usize = 32;
const STACK_RED_ZONE: usize = 256 * 1024;
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Run `f`, on a fresh stack segment if little is left.
fn with_stack<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    if depth % STACK_CHECK_EVERY == 0 {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, f)
    } else {
        f()
    }
}

pub(crate) const PARSER: &str = "ruff_python_parser 0.0.10";

/// Scan `src` as Python into `sink`. `nest` counts re-parsed strings (`python -c`, `exec("...")`);
/// `base` is the outer position every nested finding is reported at.
pub(crate) fn scan(src: &str, sink: &mut Sink, nest: usize, base: Option<(u32, u32)>) {
    if !sink::nesting_ok(sink, nest, base) {
        return;
    }
    // The parser grows its own stack on deep input; it never fails, it reports errors.
    let parsed = ruff_python_parser::parse_unchecked(src, ParseOptions::from(Mode::Module));
    let lines = LineIndex::new(src);
    let mut py = Py {
        src,
        lines: &lines,
        sink,
        nest,
        base,
        aliases: HashMap::new(),
        star: Vec::new(),
        consts: HashMap::new(),
        tainted: HashSet::new(),
        downloaded_files: Vec::new(),
        socket_at: None,
        stream_hijack_at: None,
        network: false,
        cred_read_at: None,
        loop_depth: 0,
        walk_danger: 0,
        too_deep: false,
        depth: 0,
        parents: Vec::new(),
        loops: Vec::new(),
    };
    if let Some(e) = parsed.errors().iter().min_by_key(|e| e.location.start()) {
        let ev = py.text(e.location);
        py.push(finding("PY-SYNTAX", ev), e.location);
    }
    if let Some(at) = too_deep_brackets(&parsed) {
        py.deep(at);
    }
    if let Mod::Module(_) = parsed.syntax() {
        walk_module(&mut py, parsed.syntax());
    }
    if let (Some(_), Some((ev, at))) = (py.socket_at, py.stream_hijack_at.clone()) {
        py.sink.push_at(finding("PY-REVERSE-SHELL", &ev), Some(at));
    }
    if let (Some((ev, at)), true) = (py.cred_read_at.clone(), py.network) {
        py.sink.push_at(finding("PY-CRED-EXFIL", &ev), Some(at));
    }
    if py.too_deep {
        // Dropping the tree recurses once per level: give it a stack as deep as the tree can be.
        let size = src
            .len()
            .saturating_mul(DROP_STACK_PER_BYTE)
            .saturating_add(1 << 20);
        stacker::grow(size, move || drop(parsed));
    }
}

/// Where brackets nest deeper than [`MAX_TREE_DEPTH`] (parentheses leave no node in the tree).
fn too_deep_brackets(parsed: &Parsed<Mod>) -> Option<TextRange> {
    let mut depth = 0usize;
    for t in parsed.tokens().iter() {
        match t.kind() {
            TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => {
                depth += 1;
                if depth > MAX_TREE_DEPTH {
                    return Some(t.range());
                }
            }
            TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    None
}

/// Byte offsets of line starts, to turn the parser's offsets into 1-based line and column
/// (columns count bytes, as tree-sitter's did).
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(src: &str) -> Self {
        let mut starts = Vec::with_capacity(src.len() / 32 + 1);
        starts.push(0);
        starts.extend(
            src.match_indices('\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        LineIndex { starts }
    }

    fn pos(&self, at: TextSize) -> (u32, u32) {
        let off = at.to_u32();
        let line = self.starts.partition_point(|s| *s <= off).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            (off - start).saturating_add(1),
        )
    }
}

/// Value of a constant expression: a string, or a list of (maybe unknown) strings.
#[derive(Debug, Clone)]
enum Const {
    Str(String),
    List(Vec<Option<String>>),
}

struct Py<'a, 's> {
    src: &'s str,
    lines: &'a LineIndex,
    sink: &'a mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
    /// Local name → qualified name (`o` → `os`, `s` → `os.system`).
    aliases: HashMap<String, String>,
    /// Modules imported with `*`.
    star: Vec<String>,
    consts: HashMap<String, Const>,
    /// Names holding downloaded content.
    tainted: HashSet<String>,
    downloaded_files: Vec<String>,
    socket_at: Option<(u32, u32)>,
    stream_hijack_at: Option<(String, (u32, u32))>,
    network: bool,
    cred_read_at: Option<(String, (u32, u32))>,
    loop_depth: usize,
    walk_danger: usize,
    too_deep: bool,
    /// Depth of the node being walked.
    depth: usize,
    /// Ranges of the nodes being walked, outermost first (the parent of a name is the last).
    parents: Vec<TextRange>,
    /// Loops being walked: their range, and whether they iterate over a dangerous walk.
    loops: Vec<(TextRange, bool)>,
}

/// Names a star import could bring in that matter to the rules.
const STAR_NAMES: &[&str] = &[
    "system",
    "popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "getoutput",
    "getstatusoutput",
    "execv",
    "execve",
    "execl",
    "execlp",
    "execvp",
    "spawnl",
    "spawnv",
    "remove",
    "unlink",
    "rmtree",
    "loads",
    "load",
    "dup2",
    "spawn",
    "fork",
    "socket",
    "urlopen",
    "get",
    "post",
    "CDLL",
    "cdll",
    "import_module",
];

const DOWNLOADERS: &[&str] = &[
    "requests.get",
    "requests.post",
    "requests.request",
    "requests.Session",
    "urllib.request.urlopen",
    "urllib.request.urlretrieve",
    "urllib2.urlopen",
    "urllib.urlopen",
    "httpx.get",
    "httpx.post",
    "httpx.Client",
    "urllib3.PoolManager",
    "urllib3.request",
    "http.client.HTTPSConnection",
    "http.client.HTTPConnection",
    "aiohttp.ClientSession",
    "wget.download",
];

impl<'t, 's: 't> SourceOrderVisitor<'t> for Py<'_, 's> {
    fn visit_stmt(&mut self, stmt: &'t Stmt) {
        with_stack(self.depth, || walk_stmt(self, stmt));
    }

    fn visit_expr(&mut self, expr: &'t Expr) {
        with_stack(self.depth, || walk_expr(self, expr));
    }

    fn enter_node(&mut self, node: AnyNodeRef<'t>) -> TraversalSignal {
        self.depth += 1;
        // The node around this one, for evidence: the nearest ancestor that is more than it
        // (a parameter is its name alone; its default is in the node around it).
        let parent = self
            .parents
            .iter()
            .rev()
            .find(|r| **r != node.range())
            .copied();
        self.parents.push(node.range());
        if self.depth > MAX_TREE_DEPTH {
            self.deep(node.range());
            return TraversalSignal::Skip;
        }
        match node {
            AnyNodeRef::StmtImport(i) => {
                for a in &i.names {
                    let full = a.name.as_str();
                    self.note_import(full, i.range);
                    match &a.asname {
                        Some(alias) => {
                            self.aliases
                                .insert(alias.as_str().to_owned(), full.to_owned());
                        }
                        None => {
                            let first = full.split('.').next().unwrap_or(full);
                            self.aliases.insert(first.to_owned(), first.to_owned());
                        }
                    }
                }
                return TraversalSignal::Skip;
            }
            AnyNodeRef::StmtImportFrom(i) => {
                self.import_from(i);
                return TraversalSignal::Skip;
            }
            AnyNodeRef::StmtAssign(a) => {
                // `a = b = v`: only the last target is bound to `v`, the others are forgotten.
                let n = a.targets.len();
                for (k, t) in a.targets.iter().enumerate() {
                    self.assignment(t, &a.value, k + 1 == n);
                }
            }
            AnyNodeRef::StmtAnnAssign(a) => {
                if let Some(v) = &a.value {
                    self.assignment(&a.target, v, true);
                }
            }
            AnyNodeRef::ExprCall(c) => self.call(c),
            AnyNodeRef::ExprName(n) if n.id.as_str() == "__builtins__" => {
                self.builtins(n.range, parent);
            }
            AnyNodeRef::Identifier(n) if n.as_str() == "__builtins__" => {
                self.builtins(n.range, parent);
            }
            AnyNodeRef::ExprSubscript(s) => {
                if let Expr::Call(c) = &*s.value {
                    let f = self.text(c.func.range());
                    if matches!(f, "globals" | "locals" | "vars") {
                        self.push(finding("PY-REFLECTION", self.text(s.range)), s.range);
                    }
                }
            }
            AnyNodeRef::StmtFor(f) => {
                let danger = self.is_dangerous_walk(&f.iter);
                self.enter_loop(f.range, danger);
            }
            AnyNodeRef::StmtWhile(w) => self.enter_loop(w.range, false),
            _ => {}
        }
        TraversalSignal::Traverse
    }

    fn leave_node(&mut self, node: AnyNodeRef<'t>) {
        self.depth -= 1;
        self.parents.pop();
        if matches!(node, AnyNodeRef::StmtFor(_) | AnyNodeRef::StmtWhile(_))
            && self.loops.last().is_some_and(|(r, _)| *r == node.range())
        {
            if let Some((_, danger)) = self.loops.pop() {
                self.loop_depth -= 1;
                self.walk_danger -= usize::from(danger);
            }
        }
    }
}

impl<'t, 's: 't> Py<'_, 's> {
    fn text(&self, r: TextRange) -> &'s str {
        self.src
            .get(r.start().to_usize()..r.end().to_usize())
            .unwrap_or("")
    }

    fn pos(&self, r: TextRange) -> (u32, u32) {
        self.lines.pos(r.start())
    }

    fn push(&mut self, f: SafetyFinding, r: TextRange) {
        let at = self.base.or(Some(self.pos(r)));
        self.sink.push_at(f, at);
    }

    fn at(&self, r: TextRange) -> (u32, u32) {
        self.base.unwrap_or(self.pos(r))
    }

    /// The tree (or the bracket nesting) is deeper than the walk goes: refuse once.
    fn deep(&mut self, r: TextRange) {
        if !self.too_deep {
            self.too_deep = true;
            self.push(
                finding("SCAN-ERROR", "syntax tree nested too deeply")
                    .with_metadata("reason", "depth"),
                r,
            );
        }
    }

    /// `__builtins__` anywhere: the evidence is the node around it.
    fn builtins(&mut self, r: TextRange, parent: Option<TextRange>) {
        let ev = self.text(parent.unwrap_or(r));
        self.push(finding("PY-REFLECTION", ev), r);
    }

    fn enter_loop(&mut self, r: TextRange, danger: bool) {
        self.loop_depth += 1;
        self.walk_danger += usize::from(danger);
        self.loops.push((r, danger));
    }

    fn note_import(&mut self, module: &str, r: TextRange) {
        let root = module.split('.').next().unwrap_or(module);
        if matches!(root, "ctypes" | "cffi" | "_ctypes") {
            self.push(finding("PY-NATIVE", self.text(r)), r);
        }
    }

    fn import_from(&mut self, i: &ruff_python_ast::StmtImportFrom) {
        // Relative imports name no known module; `__future__` imports bind nothing callable.
        let Some(m) = i.module.as_ref().filter(|_| i.level == 0) else {
            return;
        };
        let module = m.as_str();
        if module == "__future__" {
            return;
        }
        self.note_import(module, i.range);
        for a in &i.names {
            let name = a.name.as_str();
            if name == "*" {
                self.star.push(module.to_owned());
                continue;
            }
            let local = a.asname.as_ref().map_or(name, |x| x.as_str());
            self.aliases
                .insert(local.to_owned(), format!("{module}.{name}"));
        }
    }

    /// `target = value`; `last` is false for the outer targets of a chained assignment.
    fn assignment(&mut self, target: &'t Expr, value: &'t Expr, last: bool) {
        let Expr::Name(left) = target else {
            return;
        };
        let name = left.id.as_str().to_owned();
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
            None => {
                self.consts.remove(&name);
            }
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

    /// Qualified name of a callee or module expression.
    fn resolve(&self, e: &'t Expr, depth: usize) -> Option<String> {
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
                        args.positional.first().and_then(|a| self.string(a))
                    }
                    "getattr" | "builtins.getattr" => {
                        let obj = self.resolve(args.positional.first()?, depth + 1)?;
                        let name = self.string(args.positional.get(1)?)?;
                        Some(format!("{obj}.{name}"))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Literal value of a string (no f-string interpolation); bytes are read as UTF-8.
    fn string(&self, e: &Expr) -> Option<String> {
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

    fn const_value(&self, e: &'t Expr, depth: usize) -> Option<Const> {
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
    fn path_value(&self, e: &'t Expr, depth: usize) -> Option<String> {
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
            Expr::Subscript(s) => {
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
                    _ => {
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

    fn is_tainted(&self, e: &'t Expr) -> bool {
        let mut t = Taint {
            py: self,
            depth: 0,
            seen: 0,
            found: false,
        };
        walk_expr(&mut t, e);
        t.found
    }

    fn is_dangerous_walk(&self, e: &'t Expr) -> bool {
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

    fn call(&mut self, c: &'t ExprCall) {
        let func = &*c.func;
        let n = c.range();
        let q = self.resolve(func, 0);
        let ev = self.text(n);
        if let Some(q) = &q {
            let (line, column) = self.pos(n);
            self.sink.calls.push(CallView {
                qualified_name: q.clone(),
                line,
                column,
            });
        }
        let args = Args::of(&c.arguments);
        let q = q.unwrap_or_default();
        let q = q
            .strip_prefix("builtins.")
            .or_else(|| q.strip_prefix("__builtins__."))
            .map(str::to_owned)
            .unwrap_or(q);
        let q = match q.split_once('.') {
            Some(("posix" | "nt", rest)) => format!("os.{rest}"),
            Some(("commands", rest)) => format!("subprocess.{rest}"),
            _ => q,
        };
        let root = q.split('.').next().unwrap_or("");
        if DOWNLOADERS.iter().any(|d| q == *d)
            || matches!(
                root,
                "requests"
                    | "httpx"
                    | "urllib3"
                    | "aiohttp"
                    | "smtplib"
                    | "ftplib"
                    | "paramiko"
                    | "socket"
            )
            || q.starts_with("urllib.request.")
            || q.starts_with("http.client.")
        {
            self.network = true;
        }
        if q == "urllib.request.urlretrieve" || q == "wget.download" {
            if let Some(dst) = args.positional.get(1).and_then(|a| self.path_value(a, 0)) {
                self.downloaded_files.push(dst);
            }
        }
        match q.as_str() {
            "os.system"
            | "os.popen"
            | "subprocess.getoutput"
            | "subprocess.getstatusoutput"
            | "platform.popen"
            | "os.popen2"
            | "os.popen3" => {
                let rule = if q.starts_with("subprocess") {
                    "PY-SUBPROCESS-SHELL"
                } else {
                    "PY-OS-EXEC"
                };
                self.shell_string(args.positional.first().copied(), rule, ev, n);
            }
            q if q.starts_with("os.exec")
                || q.starts_with("os.spawn")
                || q.starts_with("os.posix_spawn")
                || q == "os.startfile"
                || q == "pty.spawn" =>
            {
                if q == "pty.spawn" {
                    self.stream_hijack_at
                        .get_or_insert((ev.to_owned(), self.at(n)));
                }
                self.push(finding("PY-OS-EXEC", ev), n);
            }
            "os.dup2" => {
                self.stream_hijack_at
                    .get_or_insert((ev.to_owned(), self.at(n)));
            }
            "subprocess.run"
            | "subprocess.call"
            | "subprocess.check_call"
            | "subprocess.check_output"
            | "subprocess.Popen"
            | "asyncio.create_subprocess_shell"
            | "asyncio.create_subprocess_exec" => self.subprocess(&q, &args, ev, n),
            "eval" | "exec" | "compile" | "execfile" => match args.positional.first() {
                Some(a) => match self.string(a) {
                    Some(code) => {
                        let base = self.base.or(Some(self.pos(n)));
                        scan(&code, self.sink, self.nest + 1, base);
                    }
                    None if self.is_tainted(a) || self.reads_downloaded(a) => {
                        self.push(finding("PY-DOWNLOAD-EXEC", ev), n)
                    }
                    None => self.push(finding("PY-EVAL", ev), n),
                },
                None => self.push(finding("PY-EVAL", ev), n),
            },
            "__import__" | "importlib.import_module" | "importlib.__import__" => {
                match args.positional.first().and_then(|a| self.string(a)) {
                    Some(m) => self.note_import(&m, n),
                    None => self.push(finding("PY-DYNAMIC-IMPORT", ev), n),
                }
            }
            "getattr" | "setattr" | "delattr" => {
                let target = args.positional.first().and_then(|a| self.resolve(a, 0));
                let is_module = target.as_deref().is_some_and(|t| {
                    matches!(
                        t,
                        "builtins"
                            | "__builtins__"
                            | "os"
                            | "sys"
                            | "subprocess"
                            | "posix"
                            | "importlib"
                            | "ctypes"
                            | "shutil"
                            | "socket"
                    ) || self.aliases.values().any(|v| v == t)
                });
                let computed = args
                    .positional
                    .get(1)
                    .is_some_and(|a| self.string(a).is_none());
                if is_module && (computed || q != "getattr") {
                    self.push(finding("PY-REFLECTION", ev), n);
                }
            }
            "pickle.load"
            | "pickle.loads"
            | "pickle.Unpickler"
            | "cPickle.load"
            | "cPickle.loads"
            | "_pickle.loads"
            | "marshal.load"
            | "marshal.loads"
            | "shelve.open"
            | "dill.load"
            | "dill.loads"
            | "cloudpickle.load"
            | "cloudpickle.loads"
            | "joblib.load"
            | "pandas.read_pickle"
            | "yaml.unsafe_load"
            | "yaml.unsafe_load_all" => {
                self.push(finding("PY-DESERIALIZE", ev), n);
            }
            "yaml.load" | "yaml.load_all" => {
                let loader = args
                    .keyword("Loader")
                    .or_else(|| args.positional.get(1).copied())
                    .map(|v| self.text(v.range()));
                if !loader.is_some_and(|l| l.ends_with("SafeLoader") || l.ends_with("BaseLoader")) {
                    self.push(finding("PY-DESERIALIZE", ev), n);
                }
            }
            "numpy.load" | "np.load" => {
                if args
                    .keywords
                    .iter()
                    .any(|(k, v)| *k == "allow_pickle" && self.text(v.range()) == "True")
                {
                    self.push(finding("PY-DESERIALIZE", ev), n);
                }
            }
            "socket.socket"
            | "socket.create_connection"
            | "socket.create_server"
            | "socket.fromfd"
            | "socket.socketpair" => {
                self.socket_at = Some(self.at(n));
                self.push(finding("PY-SOCKET", ev), n);
            }
            q if q.starts_with("ctypes.") || q.starts_with("cffi.") => {
                self.push(finding("PY-NATIVE", ev), n)
            }
            "os.fork" | "os.forkpty" => {
                if self.loop_depth > 0 {
                    self.push(finding("PY-FORK-BOMB", ev), n);
                }
            }
            "shutil.rmtree" | "os.remove" | "os.unlink" | "os.rmdir" | "os.removedirs" => {
                let target = args.positional.first().copied();
                self.delete(target, ev, n);
            }
            "open" | "io.open" | "codecs.open" => {
                let mode = args
                    .keyword("mode")
                    .or_else(|| args.positional.get(1).copied())
                    .and_then(|m| self.string(m))
                    .unwrap_or_else(|| "r".to_owned());
                let target = args.positional.first().and_then(|a| self.path_value(a, 0));
                self.file_access(target, mode.contains(['w', 'a', 'x', '+']), ev, n);
            }
            "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.move"
            | "shutil.copytree" | "os.rename" | "os.replace" | "os.symlink" => {
                let src = args.positional.first().and_then(|a| self.path_value(a, 0));
                let dst = args.positional.get(1).and_then(|a| self.path_value(a, 0));
                self.file_access(src, false, ev, n);
                self.file_access(dst, true, ev, n);
            }
            "os.chmod" | "os.chown" | "os.lchown" | "shutil.chown" => {
                let target = args.positional.first().and_then(|a| self.path_value(a, 0));
                if target.as_deref().is_some_and(|t| {
                    matches!(
                        paths::classify(t),
                        PathClass::Root
                            | PathClass::SystemTop
                            | PathClass::SystemSub
                            | PathClass::Home
                    )
                }) {
                    self.push(finding("PY-WRITE-SYSTEM", ev), n);
                }
            }
            _ => self.method_call(func, &args, ev, n),
        }
    }

    /// `Path(...).unlink()`, `.write_text()`, `.read_text()` and friends.
    fn method_call(&mut self, func: &'t Expr, args: &Args<'t>, ev: &str, n: TextRange) {
        let Expr::Attribute(a) = func else {
            return;
        };
        let obj = &*a.value;
        match a.attr.as_str() {
            "unlink" | "rmdir" => self.delete(Some(obj), ev, n),
            "write_text" | "write_bytes" | "touch" | "symlink_to" | "hardlink_to" | "mkdir" => {
                let p = self.path_value(obj, 0);
                self.file_access(p, true, ev, n);
            }
            "read_text" | "read_bytes" => {
                let p = self.path_value(obj, 0);
                self.file_access(p, false, ev, n);
            }
            "open" => {
                let mode = args
                    .positional
                    .first()
                    .and_then(|m| self.string(m))
                    .unwrap_or_default();
                let p = self.path_value(obj, 0);
                self.file_access(p, mode.contains(['w', 'a', 'x', '+']), ev, n);
            }
            _ => {}
        }
    }

    fn delete(&mut self, target: Option<&'t Expr>, ev: &str, n: TextRange) {
        if self.walk_danger > 0 {
            self.push(finding("PY-RM-ROOT", ev), n);
            return;
        }
        let Some(p) = target.and_then(|t| self.path_value(t, 0)) else {
            return;
        };
        let class = paths::classify(&p);
        let rule = match class {
            PathClass::Root | PathClass::Home | PathClass::HomeSensitive | PathClass::SystemTop => {
                "PY-RM-ROOT"
            }
            PathClass::SystemSub => "PY-RM-SYSTEM",
            PathClass::Other => return,
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(p);
        self.push(f, n);
    }

    fn file_access(&mut self, target: Option<String>, write: bool, ev: &str, n: TextRange) {
        let Some(p) = target else { return };
        if write {
            let sensitive = paths::is_startup_file(&p)
                || paths::is_authorized_keys(&p)
                || paths::is_cron_path(&p)
                || matches!(
                    paths::classify(&p),
                    PathClass::Root | PathClass::SystemTop | PathClass::SystemSub
                );
            if sensitive {
                let mut f = finding("PY-WRITE-SYSTEM", ev);
                f.subject_path = Some(p);
                self.push(f, n);
            }
        } else if paths::is_credential_file(&p) {
            self.cred_read_at.get_or_insert((ev.to_owned(), self.at(n)));
            self.push(finding("PY-CRED-READ", ev), n);
        }
    }

    /// `exec(open(downloaded).read())`
    fn reads_downloaded(&self, e: &Expr) -> bool {
        let t = self.text(e.range());
        self.downloaded_files.iter().any(|f| t.contains(f.as_str()))
            || self.consts.iter().any(|(k, v)| {
                matches!(v, Const::Str(s) if self.downloaded_files.contains(s))
                    && t.contains(k.as_str())
            })
    }

    /// A shell command string: literal → bash scan; computed → review, or deny when downloaded.
    fn shell_string(&mut self, arg: Option<&'t Expr>, rule: &'static str, ev: &str, n: TextRange) {
        let Some(arg) = arg else { return };
        match self.path_value(arg, 0) {
            Some(cmd) => {
                if self
                    .downloaded_files
                    .iter()
                    .any(|f| cmd.contains(f.as_str()))
                {
                    self.push(finding("PY-DOWNLOAD-EXEC", ev), n);
                }
                let base = self.base.or(Some(self.pos(n)));
                self.sink
                    .scan_nested(ScriptLang::Bash, &cmd, self.nest + 1, base);
            }
            None if self.is_tainted(arg) => self.push(finding("PY-DOWNLOAD-EXEC", ev), n),
            None => self.push(finding(rule, ev), n),
        }
    }

    fn subprocess(&mut self, q: &str, args: &Args<'t>, ev: &str, n: TextRange) {
        let shell_kw = args.keyword("shell").map(|v| self.text(v.range()));
        let shell = q.ends_with("_shell")
            || shell_kw.is_some_and(|v| v != "False" && v != "0" && v != "None");
        let first = args
            .positional
            .first()
            .copied()
            .or_else(|| args.keyword("args"));
        let Some(first) = first else { return };
        if q.ends_with("_exec") {
            // asyncio.create_subprocess_exec(prog, *args): positional items are the argv.
            let items: Vec<Option<String>> = args
                .positional
                .iter()
                .map(|a| self.path_value(a, 0))
                .collect();
            return self.argv(items, ev, n);
        }
        if matches!(
            first,
            Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_)
        ) || matches!(self.const_value(first, 0), Some(Const::Str(_)))
        {
            return self.shell_string(Some(first), "PY-SUBPROCESS-SHELL", ev, n);
        }
        let items = match first {
            Expr::List(l) => Some(l.elts.iter().map(|c| self.argv_item(c)).collect::<Vec<_>>()),
            Expr::Tuple(t) if t.parenthesized => {
                Some(t.elts.iter().map(|c| self.argv_item(c)).collect::<Vec<_>>())
            }
            Expr::Name(name) => match self.consts.get(name.id.as_str()) {
                Some(Const::List(items)) => Some(items.clone()),
                _ => None,
            },
            _ => None,
        };
        match items {
            Some(items) if shell => {
                // With shell=True only the first item is the command line.
                match items.first().cloned().flatten() {
                    Some(cmd) => {
                        let base = self.base.or(Some(self.pos(n)));
                        self.sink
                            .scan_nested(ScriptLang::Bash, &cmd, self.nest + 1, base);
                    }
                    None => self.push(finding("PY-SUBPROCESS-SHELL", ev), n),
                }
            }
            Some(items) => self.argv(items, ev, n),
            None if self.is_tainted(first) => self.push(finding("PY-DOWNLOAD-EXEC", ev), n),
            None if shell => self.push(finding("PY-SUBPROCESS-SHELL", ev), n),
            // A computed argv without a shell: the program is whatever the list holds; the list
            // itself was built from code the scan already walked.
            None => {}
        }
    }

    fn argv_item(&self, e: &'t Expr) -> Option<String> {
        if let Some(q) = self.resolve(e, 0) {
            if q == "sys.executable" {
                return Some("python3".to_owned());
            }
        }
        self.path_value(e, 0)
    }

    /// An argument vector without a shell: scan it as the equivalent quoted command line.
    fn argv(&mut self, items: Vec<Option<String>>, ev: &str, n: TextRange) {
        if items.iter().any(|i| {
            i.as_deref()
                .is_some_and(|s| self.downloaded_files.iter().any(|f| s.contains(f.as_str())))
        }) {
            self.push(finding("PY-DOWNLOAD-EXEC", ev), n);
        }
        let line: Vec<String> = items
            .iter()
            .map(|i| match i {
                Some(s) => format!("'{}'", s.replace('\'', "'\\''")),
                None => "\"$PYARG\"".to_owned(),
            })
            .collect();
        if line.is_empty() {
            return;
        }
        let base = self.base.or(Some(self.pos(n)));
        let mut sub = self.sink.child();
        sub.scan_nested(ScriptLang::Bash, &line.join(" "), self.nest + 1, base);
        for f in sub.findings {
            // Quoting the argv is ours, not the author's: do not call it obfuscation.
            if f.rule_id != "BASH-OBFUSCATION" {
                self.sink.push_at(f, base);
            }
        }
    }
}

/// Does an expression hold downloaded content? A bounded walk: too big or too deep says yes.
struct Taint<'p, 'a, 's> {
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

/// A call's arguments as the rules read them: positional values and named keywords (splats
/// are neither).
struct Args<'t> {
    positional: Vec<&'t Expr>,
    keywords: Vec<(&'t str, &'t Expr)>,
}

impl<'t> Args<'t> {
    fn of(a: &'t Arguments) -> Self {
        Args {
            positional: a
                .args
                .iter()
                .filter(|e| !matches!(e, Expr::Starred(_)))
                .collect(),
            keywords: a
                .keywords
                .iter()
                .filter_map(|k| Some((k.arg.as_ref()?.as_str(), &k.value)))
                .collect(),
        }
    }

    fn keyword(&self, name: &str) -> Option<&'t Expr> {
        self.keywords
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

fn star_provides(module: &str, name: &str) -> bool {
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

fn join(a: &str, b: &str) -> String {
    if b.starts_with('/') || b.starts_with('~') {
        b.to_owned()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(src: &str) -> Vec<String> {
        let mut sink = Sink::default();
        scan(src, &mut sink, 0, None);
        sink.findings.into_iter().map(|f| f.rule_id).collect()
    }

    /// Deep expressions inside every level of nested `exec` strings stay within a test thread's
    /// 2 MiB stack (in debug builds too): the walk grows its stack as it goes.
    #[test]
    fn deep_walks_in_nested_exec_fit_the_stack() {
        let mut s = format!("x = {}1\n", "-".repeat(380));
        for _ in 0..6 {
            s = format!("x = {}exec({s:?})\n", "-".repeat(380));
        }
        let found = rules(&s);
        assert!(found.iter().any(|r| r == "SCAN-ERROR"), "{found:?}");
    }
}
