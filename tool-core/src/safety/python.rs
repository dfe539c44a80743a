//! The Python scanner: tree-sitter-python syntax tree, import aliases resolved, calls checked.

// Arms dispatch on the command or callee name; folding their conditions into guards would
// blur which name an arm is about.
#![allow(clippy::collapsible_match, clippy::collapsible_if)]

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Tree};

use super::catalog::finding;
use super::paths::{self, PathClass};
use super::scanner::{self, CallView, Sink};
use super::SafetyFinding;
use crate::decl::ScriptLang;

const MAX_TREE_DEPTH: usize = 400;
const MAX_EXPR_DEPTH: usize = 48;

/// Scan nested Python (from `python -c`, heredocs, `exec("...")`).
pub(crate) fn scan(src: &str, sink: &mut Sink, nest: usize, base: Option<(u32, u32)>) {
    scan_tree(src, sink, nest, base);
}

/// Scan `src` as Python into `sink`, returning the tree.
pub(crate) fn scan_tree(
    src: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
) -> Option<Tree> {
    let tree = scanner::parse_for_scan(ScriptLang::Python, src, sink, nest, base)?;
    let root = tree.root_node();
    let mut py = Py {
        src,
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
    };
    if root.has_error() {
        let at = super::bash::first_error(root).unwrap_or(root);
        let ev = py.text(at).to_owned();
        py.push(finding("PY-SYNTAX", &ev), at);
    }
    py.visit(root);
    if let (Some(sock), Some((ev, at))) = (py.socket_at, py.stream_hijack_at.clone()) {
        let _ = sock;
        py.sink.push_at(finding("PY-REVERSE-SHELL", &ev), Some(at));
    }
    if let (Some((ev, at)), true) = (py.cred_read_at.clone(), py.network) {
        py.sink.push_at(finding("PY-CRED-EXFIL", &ev), Some(at));
    }
    Some(tree)
}

/// Value of a constant expression: a string, or a list of (maybe unknown) strings.
#[derive(Debug, Clone)]
enum Const {
    Str(String),
    List(Vec<Option<String>>),
}

struct Py<'a, 's> {
    src: &'s str,
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
}

fn pos(n: Node<'_>) -> (u32, u32) {
    let p = n.start_position();
    (
        u32::try_from(p.row).unwrap_or(u32::MAX).saturating_add(1),
        u32::try_from(p.column)
            .unwrap_or(u32::MAX)
            .saturating_add(1),
    )
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

impl<'t, 's: 't> Py<'_, 's> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn push(&mut self, f: SafetyFinding, n: Node<'_>) {
        let at = self.base.or(Some(pos(n)));
        self.sink.push_at(f, at);
    }

    fn at(&self, n: Node<'_>) -> (u32, u32) {
        self.base.unwrap_or(pos(n))
    }

    fn children(n: Node<'t>) -> Vec<Node<'t>> {
        let mut c = n.walk();
        n.named_children(&mut c).collect()
    }

    /// Walk the named nodes under `root` in document order with one cursor (no per-node lists).
    fn visit(&mut self, root: Node<'t>) {
        let mut cursor = root.walk();
        // Loops being walked: node id, and whether it iterates over a dangerous walk.
        let mut loops: Vec<(usize, bool)> = Vec::new();
        // Tracked here: the cursor's own depth query walks its whole stack on every call.
        let mut depth = 0usize;
        loop {
            let n = cursor.node();
            if n.is_named() && self.enter(n, depth, &mut loops) && cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            self.leave(n, &mut loops);
            loop {
                if depth == 0 {
                    return;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
                depth -= 1;
                self.leave(cursor.node(), &mut loops);
            }
        }
    }

    fn leave(&mut self, n: Node<'t>, loops: &mut Vec<(usize, bool)>) {
        if loops.last().is_some_and(|(id, _)| *id == n.id()) {
            if let Some((_, danger)) = loops.pop() {
                self.loop_depth -= 1;
                self.walk_danger -= usize::from(danger);
            }
        }
    }

    /// Check one node; `false` when its children must not be walked.
    fn enter(&mut self, n: Node<'t>, depth: usize, loops: &mut Vec<(usize, bool)>) -> bool {
        if depth > MAX_TREE_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.push(
                    finding("SCAN-ERROR", "syntax tree nested too deeply")
                        .with_metadata("reason", "depth"),
                    n,
                );
            }
            return false;
        }
        match n.kind() {
            "import_statement" => {
                self.import(n);
                return false;
            }
            "import_from_statement" => {
                self.import_from(n);
                return false;
            }
            "assignment" => self.assignment(n),
            "call" => self.call(n),
            "identifier" if self.text(n) == "__builtins__" => {
                self.push(
                    finding("PY-REFLECTION", self.text(n.parent().unwrap_or(n))),
                    n,
                );
            }
            "subscript" => {
                if let Some(v) = n.child_by_field_name("value") {
                    if v.kind() == "call" {
                        let f = v.child_by_field_name("function").map(|f| self.text(f));
                        if matches!(f, Some("globals" | "locals" | "vars")) {
                            self.push(finding("PY-REFLECTION", self.text(n)), n);
                        }
                    }
                }
            }
            "for_statement" | "while_statement" => {
                let danger = n.kind() == "for_statement"
                    && n.child_by_field_name("right")
                        .is_some_and(|r| self.is_dangerous_walk(r));
                self.loop_depth += 1;
                self.walk_danger += usize::from(danger);
                loops.push((n.id(), danger));
            }
            _ => {}
        }
        true
    }

    fn note_import(&mut self, module: &str, n: Node<'t>) {
        let root = module.split('.').next().unwrap_or(module);
        if matches!(root, "ctypes" | "cffi" | "_ctypes") {
            self.push(finding("PY-NATIVE", self.text(n)), n);
        }
    }

    fn import(&mut self, n: Node<'t>) {
        for c in Self::children(n) {
            match c.kind() {
                "dotted_name" => {
                    let full = self.text(c).to_owned();
                    let first = full.split('.').next().unwrap_or(&full).to_owned();
                    self.note_import(&full, n);
                    self.aliases.insert(first.clone(), first);
                }
                "aliased_import" => {
                    if let (Some(name), Some(alias)) = (
                        c.child_by_field_name("name"),
                        c.child_by_field_name("alias"),
                    ) {
                        let full = self.text(name).to_owned();
                        self.note_import(&full, n);
                        self.aliases.insert(self.text(alias).to_owned(), full);
                    }
                }
                _ => {}
            }
        }
    }

    fn import_from(&mut self, n: Node<'t>) {
        let Some(m) = n.child_by_field_name("module_name") else {
            return;
        };
        if m.kind() != "dotted_name" {
            return;
        }
        let module = self.text(m).to_owned();
        self.note_import(&module, n);
        for c in Self::children(n) {
            if c.id() == m.id() {
                continue;
            }
            match c.kind() {
                "dotted_name" => {
                    let name = self.text(c).to_owned();
                    self.aliases
                        .insert(name.clone(), format!("{module}.{name}"));
                }
                "aliased_import" => {
                    if let (Some(name), Some(alias)) = (
                        c.child_by_field_name("name"),
                        c.child_by_field_name("alias"),
                    ) {
                        self.aliases.insert(
                            self.text(alias).to_owned(),
                            format!("{module}.{}", self.text(name)),
                        );
                    }
                }
                "wildcard_import" => self.star.push(module.clone()),
                _ => {}
            }
        }
    }

    fn assignment(&mut self, n: Node<'t>) {
        let (Some(left), Some(right)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() != "identifier" {
            return;
        }
        let name = self.text(left).to_owned();
        if self.is_tainted(right) {
            self.tainted.insert(name.clone());
        } else {
            self.tainted.remove(&name);
        }
        match self.const_value(right, 0) {
            Some(c) => {
                self.consts.insert(name.clone(), c);
            }
            None => {
                self.consts.remove(&name);
            }
        }
        // `f = os.system`, `o = __import__("os")`
        if matches!(right.kind(), "attribute" | "identifier" | "call") {
            if let Some(q) = self.resolve(right, 0) {
                let root = q.split('.').next().unwrap_or(&q);
                if q != name
                    && (self
                        .aliases
                        .values()
                        .any(|v| v.split('.').next() == Some(root))
                        || right.kind() == "call")
                {
                    self.aliases.insert(name, q);
                    return;
                }
            }
        }
        self.aliases.remove(&name);
    }

    /// Qualified name of a callee or module expression.
    fn resolve(&self, n: Node<'t>, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match n.kind() {
            "identifier" => {
                let t = self.text(n);
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
            "attribute" => {
                let obj = n.child_by_field_name("object")?;
                let attr = n.child_by_field_name("attribute")?;
                Some(format!(
                    "{}.{}",
                    self.resolve(obj, depth + 1)?,
                    self.text(attr)
                ))
            }
            "call" => {
                let f = self.resolve(n.child_by_field_name("function")?, depth + 1)?;
                let args = self.args(n);
                match f.as_str() {
                    "__import__" | "importlib.import_module" | "builtins.__import__" => {
                        args.positional.first().and_then(|a| self.string(*a))
                    }
                    "getattr" | "builtins.getattr" => {
                        let obj = self.resolve(*args.positional.first()?, depth + 1)?;
                        let name = self.string(*args.positional.get(1)?)?;
                        Some(format!("{obj}.{name}"))
                    }
                    _ => None,
                }
            }
            "parenthesized_expression" => self.resolve(n.named_child(0)?, depth + 1),
            _ => None,
        }
    }

    /// Literal value of a string node (no f-string interpolation).
    fn string(&self, n: Node<'t>) -> Option<String> {
        match n.kind() {
            "string" => {
                let mut prefix_raw = false;
                let mut out = String::new();
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    match c.kind() {
                        "string_start" => {
                            prefix_raw = self.text(c).contains(['r', 'R']);
                        }
                        "string_content" => {
                            let t = self.text(c);
                            if prefix_raw || !t.contains('\\') {
                                out.push_str(t);
                            } else {
                                out.push_str(&unescape_py(t));
                            }
                        }
                        "interpolation" => return None,
                        _ => {}
                    }
                }
                Some(out)
            }
            "concatenated_string" => {
                let mut out = String::new();
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    out.push_str(&self.string(c)?);
                }
                Some(out)
            }
            "parenthesized_expression" => self.string(n.named_child(0)?),
            _ => None,
        }
    }

    fn const_value(&self, n: Node<'t>, depth: usize) -> Option<Const> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match n.kind() {
            "list" | "tuple" => Some(Const::List(
                Self::children(n)
                    .into_iter()
                    .map(|c| self.path_value(c, depth + 1))
                    .collect(),
            )),
            _ => self.path_value(n, depth).map(Const::Str),
        }
    }

    /// A path or string value, following `Path.home()`, `expanduser`, `os.path.join`, `/`, `+`.
    fn path_value(&self, n: Node<'t>, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        match n.kind() {
            "string" | "concatenated_string" => self.string(n),
            "identifier" => match self.consts.get(self.text(n)) {
                Some(Const::Str(s)) => Some(s.clone()),
                _ => None,
            },
            "parenthesized_expression" => self.path_value(n.named_child(0)?, depth + 1),
            "binary_operator" => {
                let l = self.path_value(n.child_by_field_name("left")?, depth + 1)?;
                let r = self.path_value(n.child_by_field_name("right")?, depth + 1)?;
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("");
                match op {
                    "/" => Some(join(&l, &r)),
                    "+" => Some(format!("{l}{r}")),
                    _ => None,
                }
            }
            "subscript" => {
                let v = self.resolve(n.child_by_field_name("value")?, depth + 1)?;
                let k = self.string(n.child_by_field_name("subscript")?)?;
                (v == "os.environ" && k == "HOME").then(|| "~".to_owned())
            }
            "call" => {
                let func = n.child_by_field_name("function")?;
                let args = self.args(n);
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
                            let v = self.path_value(*a, depth + 1)?;
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
                        if func.kind() == "attribute" {
                            let obj = func.child_by_field_name("object")?;
                            let m = self.text(func.child_by_field_name("attribute")?);
                            let base = self.path_value(obj, depth + 1)?;
                            return match m {
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

    fn args(&self, call: Node<'t>) -> Args<'t> {
        let mut a = Args {
            positional: Vec::new(),
            keywords: Vec::new(),
            splat: false,
        };
        if let Some(list) = call.child_by_field_name("arguments") {
            let mut cursor = list.walk();
            for c in list.named_children(&mut cursor) {
                match c.kind() {
                    "keyword_argument" => {
                        if let (Some(k), Some(v)) = (
                            c.child_by_field_name("name"),
                            c.child_by_field_name("value"),
                        ) {
                            a.keywords.push((self.text(k).to_owned(), v));
                        }
                    }
                    "list_splat" | "dictionary_splat" => a.splat = true,
                    "comment" => {}
                    _ => a.positional.push(c),
                }
            }
        }
        a
    }

    fn is_tainted(&self, n: Node<'t>) -> bool {
        let mut cursor = n.walk();
        let mut stack = vec![n];
        let mut seen = 0usize;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 4096 {
                return true;
            }
            match x.kind() {
                "identifier" if self.tainted.contains(self.text(x)) => return true,
                "call" => {
                    if let Some(f) = x
                        .child_by_field_name("function")
                        .and_then(|f| self.resolve(f, 0))
                    {
                        if DOWNLOADERS.iter().any(|d| f == *d) {
                            return true;
                        }
                    }
                }
                _ => {}
            }
            stack.extend(x.named_children(&mut cursor));
        }
        false
    }

    fn is_dangerous_walk(&self, n: Node<'t>) -> bool {
        if n.kind() != "call" {
            return false;
        }
        let f = n
            .child_by_field_name("function")
            .and_then(|f| self.resolve(f, 0));
        if !matches!(
            f.as_deref(),
            Some("os.walk" | "os.scandir" | "os.listdir" | "glob.glob" | "glob.iglob")
        ) {
            let method = n
                .child_by_field_name("function")
                .filter(|f| f.kind() == "attribute");
            let Some(method) = method else { return false };
            let m = method
                .child_by_field_name("attribute")
                .map(|a| self.text(a));
            if !matches!(m, Some("rglob" | "glob" | "iterdir" | "walk")) {
                return false;
            }
            return method
                .child_by_field_name("object")
                .and_then(|o| self.path_value(o, 0))
                .is_some_and(|p| paths::is_catastrophic(paths::classify(&p)));
        }
        let args = self.args(n);
        args.positional
            .first()
            .and_then(|a| self.path_value(*a, 0))
            .is_some_and(|p| paths::is_catastrophic(paths::classify(&p)))
    }

    fn call(&mut self, n: Node<'t>) {
        let Some(func) = n.child_by_field_name("function") else {
            return;
        };
        let q = self.resolve(func, 0);
        let ev = self.text(n);
        if let Some(q) = &q {
            self.sink.calls.push(CallView {
                qualified_name: q.clone(),
                line: pos(n).0,
                column: pos(n).1,
            });
        }
        let args = self.args(n);
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
            if let Some(dst) = args.positional.get(1).and_then(|a| self.path_value(*a, 0)) {
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
                Some(a) => match self.string(*a) {
                    Some(code) => {
                        let base = self.base.or(Some(pos(n)));
                        scan(&code, self.sink, self.nest + 1, base);
                    }
                    None if self.is_tainted(*a) || self.reads_downloaded(*a) => {
                        self.push(finding("PY-DOWNLOAD-EXEC", ev), n)
                    }
                    None => self.push(finding("PY-EVAL", ev), n),
                },
                None => self.push(finding("PY-EVAL", ev), n),
            },
            "__import__" | "importlib.import_module" | "importlib.__import__" => {
                match args.positional.first().and_then(|a| self.string(*a)) {
                    Some(m) => self.note_import(&m, n),
                    None => self.push(finding("PY-DYNAMIC-IMPORT", ev), n),
                }
            }
            "getattr" | "setattr" | "delattr" => {
                let target = args.positional.first().and_then(|a| self.resolve(*a, 0));
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
                    .is_some_and(|a| self.string(*a).is_none());
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
                    .keywords
                    .iter()
                    .find(|(k, _)| k == "Loader")
                    .map(|(_, v)| *v)
                    .or_else(|| args.positional.get(1).copied())
                    .map(|v| self.text(v));
                if !loader.is_some_and(|l| l.ends_with("SafeLoader") || l.ends_with("BaseLoader")) {
                    self.push(finding("PY-DESERIALIZE", ev), n);
                }
            }
            "numpy.load" | "np.load" => {
                if args
                    .keywords
                    .iter()
                    .any(|(k, v)| k == "allow_pickle" && self.text(*v) == "True")
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
                    .keywords
                    .iter()
                    .find(|(k, _)| k == "mode")
                    .map(|(_, v)| *v)
                    .or_else(|| args.positional.get(1).copied())
                    .and_then(|m| self.string(m))
                    .unwrap_or_else(|| "r".to_owned());
                let target = args.positional.first().and_then(|a| self.path_value(*a, 0));
                self.file_access(target, mode.contains(['w', 'a', 'x', '+']), ev, n);
            }
            "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.move"
            | "shutil.copytree" | "os.rename" | "os.replace" | "os.symlink" => {
                let src = args.positional.first().and_then(|a| self.path_value(*a, 0));
                let dst = args.positional.get(1).and_then(|a| self.path_value(*a, 0));
                self.file_access(src, false, ev, n);
                self.file_access(dst, true, ev, n);
            }
            "os.chmod" | "os.chown" | "os.lchown" | "shutil.chown" => {
                let target = args.positional.first().and_then(|a| self.path_value(*a, 0));
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
    fn method_call(&mut self, func: Node<'t>, args: &Args<'t>, ev: &str, n: Node<'t>) {
        if func.kind() != "attribute" {
            return;
        }
        let Some(obj) = func.child_by_field_name("object") else {
            return;
        };
        let m = func
            .child_by_field_name("attribute")
            .map(|a| self.text(a))
            .unwrap_or("");
        match m {
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
                    .and_then(|m| self.string(*m))
                    .unwrap_or_default();
                let p = self.path_value(obj, 0);
                self.file_access(p, mode.contains(['w', 'a', 'x', '+']), ev, n);
            }
            _ => {}
        }
    }

    fn delete(&mut self, target: Option<Node<'t>>, ev: &str, n: Node<'t>) {
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

    fn file_access(&mut self, target: Option<String>, write: bool, ev: &str, n: Node<'t>) {
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
    fn reads_downloaded(&self, n: Node<'t>) -> bool {
        let t = self.text(n);
        self.downloaded_files.iter().any(|f| t.contains(f.as_str()))
            || self.consts.iter().any(|(k, v)| {
                matches!(v, Const::Str(s) if self.downloaded_files.contains(s))
                    && t.contains(k.as_str())
            })
    }

    /// A shell command string: literal → bash scan; computed → review, or deny when downloaded.
    fn shell_string(&mut self, arg: Option<Node<'t>>, rule: &'static str, ev: &str, n: Node<'t>) {
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
                let base = self.base.or(Some(pos(n)));
                super::bash::scan(&cmd, self.sink, self.nest + 1, base);
            }
            None if self.is_tainted(arg) => self.push(finding("PY-DOWNLOAD-EXEC", ev), n),
            None => self.push(finding(rule, ev), n),
        }
    }

    fn subprocess(&mut self, q: &str, args: &Args<'t>, ev: &str, n: Node<'t>) {
        let shell_kw = args
            .keywords
            .iter()
            .find(|(k, _)| k == "shell")
            .map(|(_, v)| self.text(*v));
        let shell = q.ends_with("_shell")
            || shell_kw.is_some_and(|v| v != "False" && v != "0" && v != "None");
        let first = args.positional.first().copied().or_else(|| {
            args.keywords
                .iter()
                .find(|(k, _)| k == "args")
                .map(|(_, v)| *v)
        });
        let Some(first) = first else { return };
        if q.ends_with("_exec") {
            // asyncio.create_subprocess_exec(prog, *args): positional items are the argv.
            let items: Vec<Option<String>> = args
                .positional
                .iter()
                .map(|a| self.path_value(*a, 0))
                .collect();
            return self.argv(items, ev, n);
        }
        if first.kind() == "string"
            || first.kind() == "concatenated_string"
            || matches!(self.const_value(first, 0), Some(Const::Str(_)))
        {
            return self.shell_string(Some(first), "PY-SUBPROCESS-SHELL", ev, n);
        }
        let items = match first.kind() {
            "list" | "tuple" => Some(
                Self::children(first)
                    .iter()
                    .map(|c| self.argv_item(*c))
                    .collect::<Vec<_>>(),
            ),
            "identifier" => match self.consts.get(self.text(first)) {
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
                        let base = self.base.or(Some(pos(n)));
                        super::bash::scan(&cmd, self.sink, self.nest + 1, base);
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

    fn argv_item(&self, n: Node<'t>) -> Option<String> {
        if let Some(q) = self.resolve(n, 0) {
            if q == "sys.executable" {
                return Some("python3".to_owned());
            }
        }
        self.path_value(n, 0)
    }

    /// An argument vector without a shell: scan it as the equivalent quoted command line.
    fn argv(&mut self, items: Vec<Option<String>>, ev: &str, n: Node<'t>) {
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
        let base = self.base.or(Some(pos(n)));
        let mut sub = Sink {
            cwd_class: self.sink.cwd_class,
            ..Sink::default()
        };
        super::bash::scan(&line.join(" "), &mut sub, self.nest + 1, base);
        for f in sub.findings {
            // Quoting the argv is ours, not the author's: do not call it obfuscation.
            if f.rule_id != "BASH-OBFUSCATION" {
                self.sink.push_at(f, base);
            }
        }
    }
}

struct Args<'t> {
    positional: Vec<Node<'t>>,
    keywords: Vec<(String, Node<'t>)>,
    #[allow(dead_code)]
    splat: bool,
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

/// Decode the common Python string escapes.
fn unescape_py(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some('x') => {
                let h: String = chars.by_ref().take(2).collect();
                out.extend(u32::from_str_radix(&h, 16).ok().and_then(char::from_u32));
            }
            Some('u') => {
                let h: String = chars.by_ref().take(4).collect();
                out.extend(u32::from_str_radix(&h, 16).ok().and_then(char::from_u32));
            }
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}
