//! Calls: the rules on each resolved callee (`os.system`, `subprocess`, `eval`, file access, ...).

use ruff_python_ast::{Expr, ExprBinOp, ExprCall, Number, Operator, StmtFunctionDef};
use ruff_text_size::{Ranged, TextRange};

use crate::catalog::{finding, id, RuleId};
use crate::effects::{EffectKind, EffectTarget};
use crate::paths::{self, PathClass};
use crate::sink::CallView;
use tool_rules::ScriptLang;

use super::walk::*;

impl<'t, 's: 't> Py<'_, 's> {
    pub(super) fn call(&mut self, c: &'t ExprCall) {
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
        self.call_effects(&q, c, &args);
        self.huge_buffer(&q, c);
        self.inline_call(c, &args);
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
                    id::PY_SUBPROCESS_SHELL
                } else {
                    id::PY_OS_EXEC
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
                self.push(finding(id::PY_OS_EXEC, ev), n);
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
                Some(a) if self.decodes(a) => self.push(finding(id::PY_DECODE_EXEC, ev), n),
                Some(a) => match self.string(a) {
                    Some(code) => {
                        let base = self.base.or(Some(self.pos(n)));
                        scan(&code, self.sink, self.nest + 1, base);
                    }
                    None if self.is_tainted(a) || self.reads_downloaded(a) => {
                        self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n)
                    }
                    None => self.push(finding(id::PY_EVAL, ev), n),
                },
                None => self.push(finding(id::PY_EVAL, ev), n),
            },
            "__import__" | "importlib.import_module" | "importlib.__import__" => {
                match args.positional.first().and_then(|a| self.string(a)) {
                    Some(m) => self.note_import(&m, n),
                    None => self.push(finding(id::PY_DYNAMIC_IMPORT, ev), n),
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
                    self.push(finding(id::PY_REFLECTION, ev), n);
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
                self.push(finding(id::PY_DESERIALIZE, ev), n);
            }
            "yaml.load" | "yaml.load_all" => {
                let loader = args
                    .keyword("Loader")
                    .or_else(|| args.positional.get(1).copied())
                    .map(|v| self.text(v.range()));
                if !loader.is_some_and(|l| l.ends_with("SafeLoader") || l.ends_with("BaseLoader")) {
                    self.push(finding(id::PY_DESERIALIZE, ev), n);
                }
            }
            "numpy.load" | "np.load" => {
                if args
                    .keywords
                    .iter()
                    .any(|(k, v)| *k == "allow_pickle" && self.text(v.range()) == "True")
                {
                    self.push(finding(id::PY_DESERIALIZE, ev), n);
                }
            }
            "socket.socket"
            | "socket.create_connection"
            | "socket.create_server"
            | "socket.fromfd"
            | "socket.socketpair" => {
                self.socket_at = Some(self.at(n));
                self.push(finding(id::PY_SOCKET, ev), n);
            }
            q if q.starts_with("ctypes.") || q.starts_with("cffi.") => {
                self.push(finding(id::PY_NATIVE, ev), n)
            }
            "os.fork" | "os.forkpty" => {
                if self.loop_depth > 0 {
                    self.push(finding(id::PY_FORK_BOMB, ev), n);
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
            "sys.setrecursionlimit" => {
                if args
                    .positional
                    .first()
                    .and_then(|a| int_value(a, 0))
                    .is_some_and(|n| n >= 100_000)
                {
                    self.push(finding(id::PY_RESOURCE, ev), n);
                }
            }
            "os.getenv" | "os.environ.get" | "os.environ.pop" | "os.getenvb" => {
                if let Some(name) = args.positional.first().and_then(|a| self.string(a)) {
                    self.env_read(&name, n);
                }
            }
            "os.chmod" | "os.chown" | "os.lchown" | "shutil.chown" => {
                let target = args.positional.first().and_then(|a| self.path_value(a, 0));
                if target
                    .as_deref()
                    .is_some_and(|t| self.downloaded_files.iter().any(|d| d == t))
                {
                    // Made executable after it was downloaded.
                    self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n);
                }
                if target.as_deref().is_some_and(|t| {
                    matches!(
                        paths::classify(t),
                        PathClass::Root
                            | PathClass::SystemTop
                            | PathClass::SystemSub
                            | PathClass::Home
                    )
                }) {
                    self.push(finding(id::PY_WRITE_SYSTEM, ev), n);
                }
            }
            _ => self.method_call(func, &args, ev, n),
        }
    }

    /// `Path(...).unlink()`, `.write_text()`, `.read_text()` and friends.
    pub(super) fn method_call(&mut self, func: &'t Expr, args: &Args<'t>, ev: &str, n: TextRange) {
        let Expr::Attribute(a) = func else {
            return;
        };
        let obj = &*a.value;
        self.path_method_effect(a.attr.as_str(), obj, args, ev, n);
        match a.attr.as_str() {
            "write" | "writelines" => {
                // `open(p, 'wb').write(r.content)`, `f.write(data)` with `f` opened for writing.
                let dest = match obj {
                    Expr::Name(h) => self.handles.get(h.id.as_str()).cloned(),
                    o => self.opened_for_write(o),
                };
                let downloaded = args.positional.first().is_some_and(|d| self.is_tainted(d));
                if let (Some(dest), true) = (dest, downloaded) {
                    if !self.downloaded_files.contains(&dest) {
                        self.downloaded_files.push(dest);
                    }
                }
            }
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

    pub(super) fn delete(&mut self, target: Option<&'t Expr>, ev: &str, n: TextRange) {
        if self.walk_danger > 0 {
            self.push(finding(id::PY_RM_ROOT, ev), n);
            return;
        }
        let Some(p) = target.and_then(|t| self.path_value(t, 0)) else {
            return;
        };
        let class = paths::classify(&p);
        let rule = match class {
            PathClass::Root | PathClass::Home | PathClass::HomeSensitive | PathClass::SystemTop => {
                id::PY_RM_ROOT
            }
            PathClass::SystemSub => id::PY_RM_SYSTEM,
            PathClass::Other => return,
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(p);
        self.push(f, n);
    }

    pub(super) fn file_access(
        &mut self,
        target: Option<String>,
        write: bool,
        ev: &str,
        n: TextRange,
    ) {
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
                let mut f = finding(id::PY_WRITE_SYSTEM, ev);
                f.subject_path = Some(p);
                self.push(f, n);
            }
        } else if paths::is_credential_file(&p) {
            self.cred_read_at.get_or_insert((ev.to_owned(), self.at(n)));
            self.push(finding(id::PY_CRED_READ, ev), n);
        }
    }

    /// `exec(open(downloaded).read())`
    pub(super) fn reads_downloaded(&self, e: &Expr) -> bool {
        let t = self.text(e.range());
        self.downloaded_files.iter().any(|f| t.contains(f.as_str()))
            || self.consts.iter().any(|(k, v)| {
                matches!(v, Const::Str(s) if self.downloaded_files.contains(s))
                    && t.contains(k.as_str())
            })
    }

    /// A shell command string: literal → bash scan; computed → review, or deny when downloaded.
    pub(super) fn shell_string(
        &mut self,
        arg: Option<&'t Expr>,
        rule: RuleId,
        ev: &str,
        n: TextRange,
    ) {
        let Some(arg) = arg else { return };
        match self.path_value(arg, 0) {
            Some(cmd) => {
                if self
                    .downloaded_files
                    .iter()
                    .any(|f| cmd.contains(f.as_str()))
                {
                    self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n);
                }
                let base = self.base.or(Some(self.pos(n)));
                self.sink
                    .scan_nested(ScriptLang::Bash, &cmd, self.nest + 1, base);
            }
            None if self.is_tainted(arg) => self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n),
            None => self.push(finding(rule, ev), n),
        }
    }

    pub(super) fn subprocess(&mut self, q: &str, args: &Args<'t>, ev: &str, n: TextRange) {
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
            return self.shell_string(Some(first), id::PY_SUBPROCESS_SHELL, ev, n);
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
                    None => self.push(finding(id::PY_SUBPROCESS_SHELL, ev), n),
                }
            }
            Some(items) => self.argv(items, ev, n),
            None if self.is_tainted(first) => self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n),
            None if shell => self.push(finding(id::PY_SUBPROCESS_SHELL, ev), n),
            // A computed argv without a shell: the program is whatever the list holds; the list
            // itself was built from code the scan already walked.
            None => {}
        }
    }

    pub(super) fn argv_item(&self, e: &'t Expr) -> Option<String> {
        if let Some(q) = self.resolve(e, 0) {
            if q == "sys.executable" {
                return Some("python3".to_owned());
            }
        }
        self.path_value(e, 0)
    }

    /// An argument vector without a shell: scan it as the equivalent quoted command line.
    pub(super) fn argv(&mut self, items: Vec<Option<String>>, ev: &str, n: TextRange) {
        if items.iter().any(|i| {
            i.as_deref()
                .is_some_and(|s| self.downloaded_files.iter().any(|f| s.contains(f.as_str())))
        }) {
            self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n);
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
        for e in sub.effects {
            let at = base.unwrap_or((e.line, e.column));
            self.sink.effect(e.kind, e.target, at, &e.evidence);
        }
    }
}

impl<'t, 's: 't> Py<'_, 's> {
    /// The effect of a `pathlib` method on a path the scan resolved: `Path('/etc').read_text()`,
    /// `.unlink()`, `.write_text()`, `(Path.home() / '.ssh').iterdir()`...
    fn path_method_effect(
        &mut self,
        method: &str,
        obj: &'t Expr,
        args: &Args<'t>,
        ev: &str,
        n: TextRange,
    ) {
        let kind = match method {
            "read_text" | "read_bytes" => EffectKind::FileRead,
            "write_text" | "write_bytes" => EffectKind::FileWrite,
            "touch" | "mkdir" => EffectKind::FileCreate,
            "unlink" | "rmdir" | "rename" | "replace" => EffectKind::FileDelete,
            "chmod" | "lchmod" | "chown" => EffectKind::Chmod,
            "symlink_to" | "hardlink_to" => EffectKind::Link,
            "iterdir" | "glob" | "rglob" | "walk" => EffectKind::DirList,
            "open" => {
                let mode = args
                    .positional
                    .first()
                    .copied()
                    .or_else(|| args.keyword("mode"))
                    .and_then(|m| self.string(m))
                    .unwrap_or_default();
                if mode.contains(['w', 'a', 'x', '+']) {
                    EffectKind::FileWrite
                } else {
                    EffectKind::FileRead
                }
            }
            _ => return,
        };
        // Only receivers that are paths: `Path(...)`, `Path.home() / ...`, names bound to them.
        if !self.is_path_expr(obj, 0) {
            return;
        }
        let Some(p) = self.path_value(obj, 0) else {
            return;
        };
        let at = self.at(n);
        self.sink.effect(kind, EffectTarget::Resolved(p), at, ev);
        if matches!(method, "symlink_to" | "hardlink_to") {
            if let Some(src) = args.positional.first().and_then(|a| self.path_value(a, 0)) {
                self.sink
                    .effect(EffectKind::FileRead, EffectTarget::Resolved(src), at, ev);
            }
        }
    }

    /// `true` when `e` builds a `pathlib` path (or names one bound to a path constant).
    fn is_path_expr(&self, e: &'t Expr, depth: usize) -> bool {
        if depth > MAX_EXPR_DEPTH {
            return false;
        }
        match e {
            Expr::Call(c) => {
                let q = self.resolve(&c.func, 0).unwrap_or_default();
                q.ends_with("Path")
                    || q.ends_with("Path.home")
                    || q.ends_with("Path.cwd")
                    || matches!(&*c.func, Expr::Attribute(a)
                        if matches!(a.attr.as_str(), "expanduser" | "resolve" | "absolute" | "joinpath" | "with_name" | "with_suffix")
                            && self.is_path_expr(&a.value, depth + 1))
            }
            Expr::BinOp(b) if b.op == Operator::Div => self.is_path_expr(&b.left, depth + 1),
            Expr::Attribute(a) if a.attr.as_str() == "parent" => {
                self.is_path_expr(&a.value, depth + 1)
            }
            Expr::Name(_) => self.path_value(e, 0).is_some(),
            _ => false,
        }
    }

    /// The file `e` opens for writing (`open(p, 'w')`, `Path(p).open('wb')`), if constant.
    pub(super) fn opened_for_write(&self, e: &'t Expr) -> Option<String> {
        let Expr::Call(c) = e else { return None };
        let args = Args::of(&c.arguments);
        let q = self.resolve(&c.func, 0).unwrap_or_default();
        let (path, mode) = if matches!(q.as_str(), "open" | "io.open" | "builtins.open") {
            (
                args.positional.first().and_then(|a| self.path_value(a, 0)),
                args.positional
                    .get(1)
                    .copied()
                    .or_else(|| args.keyword("mode")),
            )
        } else if let Expr::Attribute(a) = &*c.func {
            if a.attr.as_str() != "open" {
                return None;
            }
            (
                self.path_value(&a.value, 0),
                args.positional.first().copied(),
            )
        } else {
            return None;
        };
        let mode = mode.and_then(|m| self.string(m))?;
        mode.contains(['w', 'a', 'x', '+'])
            .then_some(path)
            .flatten()
    }

    /// An environment variable read by name (`os.environ['X']`, `os.getenv('X')`).
    pub(super) fn env_read(&mut self, name: &str, n: TextRange) {
        let at = self.at(n);
        let ev = self.text(n).to_owned();
        self.sink.effect(
            EffectKind::EnvRead {
                name: name.to_owned(),
            },
            EffectTarget::Resolved(name.to_owned()),
            at,
            &ev,
        );
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
    fn inline_call(&mut self, c: &'t ExprCall, args: &Args<'t>) {
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
