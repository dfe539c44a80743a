//! The walker the Python rules share: the scan's state, the statement walk, line positions.

use std::collections::{HashMap, HashSet};

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::source_order::{
    walk_expr, walk_module, walk_stmt, SourceOrderVisitor, TraversalSignal,
};
use ruff_python_ast::{AnyNodeRef, Arguments, Expr, Mod, Stmt};
use ruff_python_parser::{Mode, ParseOptions, Parsed};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::catalog::{finding, id};
use crate::report::SafetyFinding;
use crate::sink::{self, Sink};

/// Deepest syntax tree walked, and deepest bracket nesting accepted, before the scan gives up.
pub(super) const MAX_TREE_DEPTH: usize = 400;
pub(super) const MAX_EXPR_DEPTH: usize = 48;
/// Nodes looked at when deciding whether an expression holds downloaded content.
pub(super) const MAX_TAINT_NODES: usize = 4096;
/// Stack reserved per script byte to drop a tree that was too deep to walk: a node per byte is
/// the worst case, and dropping one level of the tree takes well under this (measured).
pub(super) const DROP_STACK_PER_BYTE: usize = 1024;
/// The walks recurse once per tree level: every so many levels they make sure this much stack
/// is left (moving to a new segment of [`STACK_SEGMENT`] bytes if not), so nested scripts with
/// deep trees fit in any thread's stack.
pub(super) const STACK_CHECK_EVERY: usize = 32;
pub(super) const STACK_RED_ZONE: usize = 256 * 1024;
pub(super) const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Run `f`, on a fresh stack segment if little is left.
pub(super) fn with_stack<R>(depth: usize, f: impl FnOnce() -> R) -> R {
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
    scan_bound(src, sink, nest, base, Bound::default());
}

/// Names a nested scan starts with bound: the parameters of an inlined function call that were
/// passed a process object or a list of every process (not constants, so not in its text).
#[derive(Default)]
pub(super) struct Bound {
    pub(super) aliases: HashMap<String, String>,
    pub(super) proc_lists: HashSet<String>,
}

/// [`scan`] with `bound` names already bound.
pub(super) fn scan_bound(
    src: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
    bound: Bound,
) {
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
        aliases: bound.aliases,
        star: Vec::new(),
        consts: HashMap::new(),
        tainted: HashSet::new(),
        downloaded_files: Vec::new(),
        file_content: HashMap::new(),
        functions: HashMap::new(),
        inlined: 0,
        decoded: HashSet::new(),
        handles: HashMap::new(),
        archives: HashSet::new(),
        socket_data: HashSet::new(),
        proc_lists: bound.proc_lists,
        ints: HashMap::new(),
        trips: Vec::new(),
        unrolled: Vec::new(),
        unrolls: 0,
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
        py.push(finding(id::PY_SYNTAX, ev), e.location);
    }
    if let Some(at) = too_deep_brackets(&parsed) {
        py.deep(at);
    }
    if let Mod::Module(_) = parsed.syntax() {
        walk_module(&mut py, parsed.syntax());
    }
    if let (Some(_), Some((ev, at))) = (py.socket_at, py.stream_hijack_at.clone()) {
        py.sink
            .push_at(finding(id::PY_REVERSE_SHELL, &ev), Some(at));
    }
    if let (Some((ev, at)), true) = (py.cred_read_at.clone(), py.network) {
        py.sink.push_at(finding(id::PY_CRED_EXFIL, &ev), Some(at));
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
pub(super) fn too_deep_brackets(parsed: &Parsed<Mod>) -> Option<TextRange> {
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
pub(super) struct LineIndex {
    pub(super) starts: Vec<u32>,
}

impl LineIndex {
    pub(super) fn new(src: &str) -> Self {
        let mut starts = Vec::with_capacity(src.len() / 32 + 1);
        starts.push(0);
        starts.extend(
            src.match_indices('\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        LineIndex { starts }
    }

    pub(super) fn pos(&self, at: TextSize) -> (u32, u32) {
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
pub(super) enum Const {
    Str(String),
    List(Vec<Option<String>>),
}

pub(super) struct Py<'a, 's> {
    pub(super) src: &'s str,
    pub(super) lines: &'a LineIndex,
    pub(super) sink: &'a mut Sink,
    pub(super) nest: usize,
    pub(super) base: Option<(u32, u32)>,
    /// Local name → qualified name (`o` → `os`, `s` → `os.system`).
    pub(super) aliases: HashMap<String, String>,
    /// Modules imported with `*`.
    pub(super) star: Vec<String>,
    pub(super) consts: HashMap<String, Const>,
    /// Names holding downloaded content.
    pub(super) tainted: HashSet<String>,
    pub(super) downloaded_files: Vec<String>,
    /// Names bound to the content of a file, by the file's path (for flows into a send).
    pub(super) file_content: HashMap<String, String>,
    pub(super) socket_at: Option<(u32, u32)>,
    pub(super) stream_hijack_at: Option<(String, (u32, u32))>,
    pub(super) network: bool,
    pub(super) cred_read_at: Option<(String, (u32, u32))>,
    pub(super) loop_depth: usize,
    pub(super) walk_danger: usize,
    pub(super) too_deep: bool,
    /// Depth of the node being walked.
    pub(super) depth: usize,
    /// Ranges of the nodes being walked, outermost first (the parent of a name is the last).
    pub(super) parents: Vec<TextRange>,
    /// Loops being walked: their range, and whether they iterate over a dangerous walk.
    pub(super) loops: Vec<(TextRange, bool)>,
    /// Functions defined so far, by name: their parameters and body text, for calls with
    /// constant arguments.
    pub(super) functions: HashMap<String, (Vec<String>, String)>,
    /// Function calls scanned again with their arguments bound, so far.
    pub(super) inlined: usize,
    /// Names bound to a decoded payload (`code = base64.b64decode(...)`).
    pub(super) decoded: HashSet<String>,
    /// Names bound to files opened for writing (`with open(p, 'wb') as f`), by the file's path.
    pub(super) handles: HashMap<String, String>,
    /// Names bound to an open `tarfile` or `zipfile` archive.
    pub(super) archives: HashSet<String>,
    /// Names bound to data read from a socket.
    pub(super) socket_data: HashSet<String>,
    /// Names bound to a list of every process (`list(psutil.process_iter())`).
    pub(super) proc_lists: HashSet<String>,
    /// Names bound to a constant integer.
    pub(super) ints: HashMap<String, u128>,
    /// How many times each loop being walked runs, outermost first (as `loops`).
    pub(super) trips: Vec<Trip>,
    /// Loops over a constant list being walked: the loop, its variable, and the values its body
    /// is walked again with once the first pass is done.
    pub(super) unrolled: Vec<(TextRange, String, Vec<Const>)>,
    /// Extra passes over loop bodies so far.
    pub(super) unrolls: usize,
}

/// Most function calls scanned again per script.
pub(super) const MAX_INLINED: usize = 16;

/// Names a star import could bring in that matter to the rules.
pub(super) const STAR_NAMES: &[&str] = &[
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

pub(super) const DOWNLOADERS: &[&str] = &[
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
                self.subscript_growth(&a.targets, &a.value);
            }
            AnyNodeRef::StmtAnnAssign(a) => {
                if let Some(v) = &a.value {
                    self.assignment(&a.target, v, true);
                }
            }
            AnyNodeRef::ExprCall(c) => self.call(c),
            AnyNodeRef::StmtFunctionDef(f) => {
                self.define(f);
                self.note_process_function(f);
            }
            AnyNodeRef::StmtWith(w) => {
                for item in &w.items {
                    if let Some(Expr::Name(n)) = item.optional_vars.as_deref() {
                        match self.opened_for_write(&item.context_expr) {
                            Some(p) => self.handles.insert(n.id.as_str().to_owned(), p),
                            None => self.handles.remove(n.id.as_str()),
                        };
                        self.bind_archive(n.id.as_str(), &item.context_expr);
                        // `with requests.Session() as s`, `with socket.socket() as s`
                        match &item.context_expr {
                            Expr::Call(_) => match self.resolve(&item.context_expr, 0) {
                                Some(q) => self.aliases.insert(n.id.as_str().to_owned(), q),
                                None => self.aliases.remove(n.id.as_str()),
                            },
                            _ => None,
                        };
                    }
                }
            }
            AnyNodeRef::ExprBinOp(b) => self.huge_allocation(b),
            AnyNodeRef::ExprName(n) if n.id.as_str() == "__builtins__" => {
                self.builtins(n.range, parent);
            }
            AnyNodeRef::Identifier(n) if n.as_str() == "__builtins__" => {
                self.builtins(n.range, parent);
            }
            AnyNodeRef::ExprSubscript(s) => {
                if self.resolve(&s.value, 0).as_deref() == Some("os.environ") {
                    if let Some(name) = self.string(&s.slice) {
                        self.env_read(&name, s.range);
                    }
                }
                if let Expr::Call(c) = &*s.value {
                    let f = self.text(c.func.range());
                    if matches!(f, "globals" | "locals" | "vars") {
                        self.push(finding(id::PY_REFLECTION, self.text(s.range)), s.range);
                        self.dynamic("lookup in globals()", s.range);
                    }
                }
            }
            AnyNodeRef::StmtFor(f) => {
                let danger = self.is_dangerous_walk(&f.iter);
                let trip = self.for_trip(&f.iter);
                self.bind_loop_target(&f.target, &f.iter);
                self.unroll(f);
                self.enter_loop(f.range, danger, trip);
            }
            AnyNodeRef::StmtWhile(w) => {
                let trip = self.while_trip(&w.test);
                self.enter_loop(w.range, false, trip);
            }
            AnyNodeRef::ExprListComp(l) => {
                for g in &l.generators {
                    self.bind_loop_target(&g.target, &g.iter);
                }
                self.kept_comprehension(l);
            }
            AnyNodeRef::ExprGenerator(l) => {
                for g in &l.generators {
                    self.bind_loop_target(&g.target, &g.iter);
                }
            }
            _ => {}
        }
        TraversalSignal::Traverse
    }

    fn leave_node(&mut self, node: AnyNodeRef<'t>) {
        self.depth -= 1;
        self.parents.pop();
        if let AnyNodeRef::StmtFor(f) = node {
            self.rewalk(f);
        }
        if matches!(node, AnyNodeRef::StmtFor(_) | AnyNodeRef::StmtWhile(_))
            && self.loops.last().is_some_and(|(r, _)| *r == node.range())
        {
            if let Some((_, danger)) = self.loops.pop() {
                self.trips.pop();
                self.loop_depth -= 1;
                self.walk_danger -= usize::from(danger);
            }
        }
    }
}

impl<'s> Py<'_, 's> {
    pub(super) fn text(&self, r: TextRange) -> &'s str {
        self.src
            .get(r.start().to_usize()..r.end().to_usize())
            .unwrap_or("")
    }

    pub(super) fn pos(&self, r: TextRange) -> (u32, u32) {
        self.lines.pos(r.start())
    }

    pub(super) fn push(&mut self, f: SafetyFinding, r: TextRange) {
        let at = self.base.or(Some(self.pos(r)));
        self.sink.push_at(f, at);
    }

    pub(super) fn at(&self, r: TextRange) -> (u32, u32) {
        self.base.unwrap_or(self.pos(r))
    }

    /// The tree (or the bracket nesting) is deeper than the walk goes: refuse once.
    pub(super) fn deep(&mut self, r: TextRange) {
        if !self.too_deep {
            self.too_deep = true;
            self.push(
                finding(id::SCAN_ERROR, "syntax tree nested too deeply")
                    .with_metadata("reason", "depth"),
                r,
            );
        }
    }

    /// `__builtins__` anywhere: the evidence is the node around it.
    pub(super) fn builtins(&mut self, r: TextRange, parent: Option<TextRange>) {
        let ev = self.text(parent.unwrap_or(r));
        self.push(finding(id::PY_REFLECTION, ev), r);
    }

    pub(super) fn enter_loop(&mut self, r: TextRange, danger: bool, trip: Trip) {
        self.loop_depth += 1;
        self.trips.push(trip);
        self.walk_danger += usize::from(danger);
        self.loops.push((r, danger));
    }

    pub(super) fn note_import(&mut self, module: &str, r: TextRange) {
        let root = module.split('.').next().unwrap_or(module);
        if matches!(root, "ctypes" | "cffi" | "_ctypes") {
            self.push(finding(id::PY_NATIVE, self.text(r)), r);
        }
    }

    pub(super) fn import_from(&mut self, i: &ruff_python_ast::StmtImportFrom) {
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
}

/// A call's arguments as the rules read them: positional values and named keywords (splats
/// are neither).
pub(super) struct Args<'t> {
    pub(super) positional: Vec<&'t Expr>,
    pub(super) keywords: Vec<(&'t str, &'t Expr)>,
}

impl<'t> Args<'t> {
    pub(super) fn of(a: &'t Arguments) -> Self {
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

    pub(super) fn keyword(&self, name: &str) -> Option<&'t Expr> {
        self.keywords
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

/// How many times a loop runs, as far as the scan can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trip {
    /// A known count (`range(1000)`, `while n < 10**6`).
    Count(u128),
    /// No end in sight (`while True`, `itertools.count()`).
    Unbounded,
    /// Bounded by data the scan does not see.
    Unknown,
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
