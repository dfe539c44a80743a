//! What each call will touch, with paths and URLs resolved by the constant values the walk
//! tracks (assignments, f-strings, `%`, `+`, `.format`, `os.path.join`, `expanduser`, `/`).

use ruff_python_ast::{Expr, ExprCall, FStringPart, InterpolatedStringElement, Operator};
use ruff_text_size::Ranged;

use crate::effects::{is_url, url_host, Direction, EffectKind, EffectTarget};
use crate::judge::CONTENT_OF_OUTSIDE;

use super::walk::*;

const HTTP_ROOTS: &[&str] = &["requests", "httpx", "urllib3", "aiohttp"];

/// Calls that open an archive: `(name, mode)` first.
const ARCHIVE_OPENERS: &[&str] = &["tarfile.open", "tarfile.TarFile", "zipfile.ZipFile"];

impl<'t, 's: 't> Py<'_, 's> {
    /// The value of an f-string with fields, a `%` or a `.format` of constants.
    pub(super) fn fmt_value(&self, e: &'t Expr, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        let val = |x: &'t Expr| self.str_value(x, depth + 1);
        match e {
            Expr::FString(f) => {
                let mut s = String::new();
                for part in f.value.iter() {
                    match part {
                        FStringPart::Literal(l) => s.push_str(&l.value),
                        FStringPart::FString(fs) => {
                            for el in fs.elements.iter() {
                                match el {
                                    InterpolatedStringElement::Literal(l) => s.push_str(&l.value),
                                    InterpolatedStringElement::Interpolation(i) => {
                                        s.push_str(&val(&i.expression)?)
                                    }
                                }
                            }
                        }
                    }
                }
                Some(s)
            }
            Expr::BinOp(b) if b.op == Operator::Mod => {
                // `%d` of a constant integer reads as its digits.
                let arg = |x: &'t Expr| {
                    val(x).or_else(|| super::alloc::int_value(x, 0).map(|n| n.to_string()))
                };
                let fmt = val(&b.left)?.replace("%d", "%s").replace("%i", "%s");
                let args: Vec<String> = match &*b.right {
                    Expr::Tuple(t) => t.elts.iter().map(arg).collect::<Option<_>>()?,
                    x => vec![arg(x)?],
                };
                fill(&fmt, "%s", &args)
            }
            Expr::BinOp(b) if b.op == Operator::Add => Some(val(&b.left)? + &val(&b.right)?),
            Expr::Call(c) => match &*c.func {
                Expr::Attribute(a) if a.attr.as_str() == "format" => {
                    let fmt = val(&a.value)?;
                    let args: Vec<String> =
                        c.arguments.args.iter().map(val).collect::<Option<_>>()?;
                    fill(&fmt, "{}", &args)
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn target_of(&self, e: Option<&'t Expr>) -> EffectTarget {
        match e.and_then(|e| self.text_value(e)) {
            Some(p) => EffectTarget::Resolved(p),
            None => EffectTarget::Unknown,
        }
    }

    fn fx(&mut self, kind: EffectKind, e: Option<&'t Expr>, c: &'t ExprCall) {
        let target = self.target_of(e);
        let at = self.at(c.range());
        let ev = self.text(c.range()).to_owned();
        self.sink.effect(kind, target, at, &ev);
    }

    /// The file whose content `e` holds: `open(p).read()`, `Path(p).read_text()`, `open(p)`, or
    /// a name bound to one of those.
    pub(super) fn content_source(&self, e: &'t Expr, depth: usize) -> Option<String> {
        if depth > MAX_EXPR_DEPTH {
            return None;
        }
        let d = depth + 1;
        match e {
            Expr::Name(n) => self.file_content.get(n.id.as_str()).cloned(),
            Expr::Call(c) => {
                let q = self.resolve(&c.func, 0).unwrap_or_default();
                if q == "open" || q == "io.open" {
                    return c.arguments.args.first().and_then(|a| self.path_value(a, 0));
                }
                if let Expr::Attribute(a) = &*c.func {
                    if matches!(
                        a.attr.as_str(),
                        "read" | "read_text" | "read_bytes" | "readlines"
                    ) {
                        return self
                            .content_source(&a.value, d)
                            .or_else(|| match &*a.value {
                                Expr::Call(inner) => inner
                                    .arguments
                                    .args
                                    .first()
                                    .and_then(|p| self.path_value(p, 0)),
                                _ => None,
                            });
                    }
                }
                None
            }
            Expr::Dict(m) => m
                .items
                .iter()
                .find_map(|i| self.content_source(&i.value, d)),
            Expr::Tuple(t) => t.elts.iter().find_map(|x| self.content_source(x, d)),
            Expr::Attribute(a) => self.content_source(&a.value, d),
            Expr::BinOp(b) => self
                .content_source(&b.left, d)
                .or_else(|| self.content_source(&b.right, d)),
            Expr::FString(_) => None,
            _ => None,
        }
    }

    /// Bind `name` to the file its value reads, for flows into a network send.
    pub(super) fn bind_content(&mut self, name: &str, value: &'t Expr) {
        match self.content_source(value, 0) {
            Some(p) => {
                self.file_content.insert(name.to_owned(), p);
            }
            None => {
                self.file_content.remove(name);
            }
        }
    }

    /// The effects of one call `q(...)`.
    pub(super) fn call_effects(&mut self, q: &str, c: &'t ExprCall, args: &Args<'t>) {
        let p0 = args.positional.first().copied();
        let p1 = args.positional.get(1).copied();
        match q {
            "open" | "io.open" | "codecs.open" => {
                let mode = p1
                    .or_else(|| args.keyword("mode"))
                    .and_then(|m| self.string(m))
                    .unwrap_or_default();
                let kind = if mode.contains(['w', 'a', 'x', '+']) {
                    EffectKind::FileWrite
                } else {
                    EffectKind::FileRead
                };
                self.fx(kind, p0.or_else(|| args.keyword("file")), c);
            }
            "os.remove" | "os.unlink" | "os.rmdir" | "os.removedirs" | "shutil.rmtree" => {
                self.fx(
                    EffectKind::FileDelete,
                    p0.or_else(|| args.keyword("path")),
                    c,
                );
            }
            "os.rename" | "os.replace" | "os.renames" | "shutil.move" => {
                self.fx(EffectKind::FileDelete, p0, c);
                self.fx(EffectKind::FileWrite, p1, c);
            }
            "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.copytree" => {
                self.fx(EffectKind::FileRead, p0, c);
                self.fx(EffectKind::FileWrite, p1, c);
            }
            "os.listdir" | "os.scandir" | "os.walk" | "glob.glob" | "glob.iglob" => {
                let dir = p0.or_else(|| args.keyword("root_dir"));
                match dir {
                    Some(d) => self.fx(EffectKind::DirList, Some(d), c),
                    None => {
                        let at = self.at(c.range());
                        let ev = self.text(c.range()).to_owned();
                        let t = EffectTarget::Resolved(".".to_owned());
                        self.sink.effect(EffectKind::DirList, t, at, &ev);
                    }
                }
            }
            "os.chmod" | "os.chown" | "os.lchown" | "shutil.chown" | "os.lchmod" => {
                self.fx(EffectKind::Chmod, p0, c)
            }
            "shutil.copymode" | "shutil.copystat" => {
                self.fx(EffectKind::FileRead, p0, c);
                self.fx(EffectKind::Chmod, p1, c);
            }
            "os.symlink" | "os.link" => {
                let src = p0.and_then(|e| self.path_value(e, 0));
                let dst = p1.and_then(|e| self.path_value(e, 0));
                match (q, src, dst) {
                    // A relative link target is taken from the link's own directory.
                    ("os.symlink", Some(s), Some(d)) if !s.starts_with(['/', '~']) => {
                        let dir = d.rsplit_once('/').map_or("", |(h, _)| h);
                        let at = self.at(c.range());
                        let ev = self.text(c.range()).to_owned();
                        let t = EffectTarget::Resolved(crate::judge::join_norm(dir, &s));
                        self.sink.effect(EffectKind::FileRead, t, at, &ev);
                    }
                    _ => self.fx(EffectKind::FileRead, p0, c),
                }
                self.fx(EffectKind::Link, p1, c);
            }
            "os.mkdir" | "os.makedirs" => self.fx(EffectKind::FileCreate, p0, c),
            // A database file is opened for writing, and created when missing.
            "sqlite3.connect" | "dbm.open" => {
                let db = p0.or_else(|| args.keyword("database"));
                if db.and_then(|d| self.string(d)).as_deref() != Some(":memory:") {
                    self.fx(EffectKind::FileWrite, db, c);
                }
            }
            q if ARCHIVE_OPENERS.contains(&q) => {
                let mode = p1
                    .or_else(|| args.keyword("mode"))
                    .and_then(|m| self.string(m))
                    .unwrap_or_else(|| "r".to_owned());
                let kind = if mode.starts_with(['w', 'a', 'x']) {
                    EffectKind::FileWrite
                } else {
                    EffectKind::FileRead
                };
                let name = p0
                    .or_else(|| args.keyword("name"))
                    .or_else(|| args.keyword("file"));
                self.fx(kind, name, c);
            }
            "os.kill" | "os.killpg" => {
                let Some(pid) = p0 else { return };
                let t = if self.signals_every_process(pid) {
                    crate::effects::every_process(None)
                } else {
                    self.text(pid.range()).to_owned()
                };
                if t.contains("getpid") || t.ends_with(".pid") {
                    return;
                }
                let at = self.at(c.range());
                let ev = self.text(c.range()).to_owned();
                self.sink.effect(
                    EffectKind::ProcessControl { target: t },
                    EffectTarget::Unknown,
                    at,
                    &ev,
                );
            }
            _ => {
                self.archive_member_call(c, args);
                self.http_call(q, c, args);
                self.net_call(q, c, args);
            }
        }
    }

    /// `true` when `e` is an archive opened by `tarfile` or `zipfile`, or a name bound to one.
    pub(super) fn is_archive(&self, e: &'t Expr) -> bool {
        match e {
            Expr::Name(n) => self.archives.contains(n.id.as_str()),
            Expr::Call(c) => self
                .resolve(&c.func, 0)
                .is_some_and(|q| ARCHIVE_OPENERS.contains(&q.as_str())),
            _ => false,
        }
    }

    /// Calls on an archive: `t.add(p)` and `z.write(p)` read `p`, `extractall(dir)` writes there.
    fn archive_member_call(&mut self, c: &'t ExprCall, args: &Args<'t>) {
        let Expr::Attribute(a) = &*c.func else { return };
        if !self.is_archive(&a.value) {
            return;
        }
        let p0 = args.positional.first().copied();
        match a.attr.as_str() {
            "add" | "write" => {
                self.fx(EffectKind::FileRead, p0.or_else(|| args.keyword("name")), c)
            }
            "extractall" | "extract" => {
                let dir = if a.attr.as_str() == "extractall" {
                    p0.or_else(|| args.keyword("path"))
                } else {
                    args.positional
                        .get(1)
                        .copied()
                        .or_else(|| args.keyword("path"))
                };
                match dir {
                    Some(d) => self.fx(EffectKind::FileWrite, Some(d), c),
                    None => {
                        let at = self.at(c.range());
                        let ev = self.text(c.range()).to_owned();
                        let t = EffectTarget::Resolved(".".to_owned());
                        self.sink.effect(EffectKind::FileWrite, t, at, &ev);
                    }
                }
            }
            _ => {}
        }
    }

    fn http_call(&mut self, q: &str, c: &'t ExprCall, args: &Args<'t>) {
        let (root, method) = q.rsplit_once('.').unwrap_or(("", q));
        let http = HTTP_ROOTS.iter().any(|r| {
            root.strip_prefix(r)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        let urllib = matches!(
            q,
            "urllib.request.urlopen" | "urllib.request.Request" | "urllib.request.urlretrieve"
        );
        if !(http || urllib) {
            return;
        }
        let url_arg = if method == "request" {
            args.positional.get(1).copied()
        } else {
            args.positional.first().copied()
        }
        .or_else(|| args.keyword("url"));
        let url = url_arg
            .and_then(|u| self.text_value(u))
            .filter(|u| is_url(u));
        let body = ["data", "json", "files", "content"]
            .iter()
            .find_map(|k| args.keyword(k))
            .or_else(|| {
                if urllib {
                    args.positional.get(1).copied()
                } else {
                    None
                }
            });
        let sends = body.and_then(|b| self.content_source(b, 0)).map(|p| {
            // A file read before the send: judged by where the file lies.
            if p.is_empty() {
                CONTENT_OF_OUTSIDE.to_owned()
            } else {
                p
            }
        });
        let upload = body.is_some() || matches!(method, "post" | "put" | "patch");
        let direction = if upload {
            Direction::Upload
        } else {
            Direction::Download
        };
        let (host, port) = url.as_deref().map_or((None, None), url_host);
        let at = self.at(c.range());
        let ev = self.text(c.range()).to_owned();
        self.sink
            .network(url, host, port, direction, sends, at, &ev);
        if q == "urllib.request.urlretrieve" {
            self.fx(EffectKind::FileWrite, args.positional.get(1).copied(), c);
        }
    }
}

/// `fmt` with each `hole` replaced by the next of `args`; `None` when the counts differ.
fn fill(fmt: &str, hole: &str, args: &[String]) -> Option<String> {
    let pieces: Vec<&str> = fmt.split(hole).collect();
    if pieces.len() != args.len() + 1 {
        return None;
    }
    let mut out = pieces[0].to_owned();
    for (a, p) in args.iter().zip(&pieces[1..]) {
        out.push_str(a);
        out.push_str(p);
    }
    Some(out)
}
