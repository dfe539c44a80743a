//! Calls: the rules on each resolved callee (`os.system`, `subprocess`, `eval`, file access, ...).

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::{Ranged, TextRange};

use crate::catalog::{finding, id, RuleId};
use crate::paths::{self, PathClass};
use crate::sink::CallView;
use tool_rules::ScriptLang;

use super::alloc::int_value;
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
        // A C library function through `ctypes`: native code, and the effect of its `os` twin.
        self.native_call(&q, n);
        let q = match q.strip_prefix("ctypes.libc.") {
            Some(f) => {
                self.push(finding(id::PY_NATIVE, ev), n);
                match f {
                    "chmod" | "fchmod" | "lchmod" | "chown" | "lchown" | "system" | "unlink"
                    | "remove" | "rmdir" | "kill" | "killpg" | "execv" | "execve" | "execvp"
                    | "fork" | "rename" | "symlink" | "link" => format!("os.{f}"),
                    _ => q,
                }
            }
            None => q,
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
        self.process_call(&q, c);
        self.huge_buffer(&q, c);
        self.allocating_call(&q, c);
        self.loop_growth_call(c, &args);
        let deserialized = self.deserialize(&q, c, &args);
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
                Some(a) => {
                    let decoded = self.decodes(a);
                    if decoded {
                        self.push(finding(id::PY_DECODE_EXEC, ev), n);
                    }
                    match self.text_value(a) {
                        // Code the scan can spell, decoded or built: scanned as Python.
                        Some(code) => {
                            let base = self.base.or(Some(self.pos(n)));
                            scan(&code, self.sink, self.nest + 1, base);
                        }
                        None if decoded => {}
                        None if self.is_tainted(a) || self.reads_downloaded(a) => {
                            self.push(finding(id::PY_DOWNLOAD_EXEC, ev), n)
                        }
                        None => {
                            self.push(finding(id::PY_EVAL, ev), n);
                            self.dynamic(&format!("{q} of computed text"), n);
                        }
                    }
                }
                None => self.push(finding(id::PY_EVAL, ev), n),
            },
            "__import__" | "importlib.import_module" | "importlib.__import__" => {
                let arg = args.positional.first().copied();
                match arg.and_then(|a| self.text_value(a)) {
                    Some(m) => {
                        self.note_import(&m, n);
                        // A module name spelled indirectly hides what is imported.
                        if arg.is_some_and(|a| self.string(a).is_none()) {
                            self.push(finding(id::PY_DYNAMIC_IMPORT, ev), n);
                        }
                    }
                    None => {
                        self.push(finding(id::PY_DYNAMIC_IMPORT, ev), n);
                        self.dynamic("import of a computed name", n);
                    }
                }
            }
            "vars" | "dir"
                if args
                    .positional
                    .first()
                    .is_some_and(|a| self.text(a.range()) == "__builtins__") =>
            {
                self.dynamic("the builtins as a table", n);
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
                let unresolved = args
                    .positional
                    .get(1)
                    .is_some_and(|a| self.text_value(a).is_none());
                if is_module && unresolved {
                    self.dynamic("attribute of a computed name", n);
                }
            }
            _ if deserialized => {}
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
            "os.chmod" | "os.chown" | "os.lchown" | "shutil.chown" | "os.lchmod"
            | "shutil.copymode" | "shutil.copystat" => {
                // `copymode(src, dst)` gives `dst` the mode of `src`.
                let target = if q.starts_with("shutil.copy") {
                    args.positional.get(1)
                } else {
                    args.positional.first()
                };
                let target = target.and_then(|a| self.path_value(a, 0));
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
        // `'rm -rf %s' % d`, `'rm ' + d`, `'rm {}'.format(d)` of constants are the command
        // they spell; an f-string's fields are left to review.
        let cmd = match arg {
            Expr::FString(_) => self.path_value(arg, 0),
            _ => self.text_value(arg),
        };
        match cmd {
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
            || (!matches!(first, Expr::List(_) | Expr::Tuple(_) | Expr::Name(_))
                && self.path_value(first, 0).is_some())
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
