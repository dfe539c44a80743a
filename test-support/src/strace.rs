//! A parser for traces written by `strace -f -y -qq -o FILE`: the calls, with `<unfinished ...>`
//! and `<... resumed>` halves joined, and the paths they touched, each resolved against the
//! working directory of its process or the directory descriptor strace names (`-y`).

use std::collections::{BTreeMap, BTreeSet};

use crate::paths::join;

/// How a call used a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    Read,
    List,
    Write,
    Delete,
    Chmod,
    Link,
    Exec,
    /// Looked at it (`stat`, `access`, `chdir`...): no touch, but the path is mentioned.
    Probe,
}

/// One path a traced call used.
#[derive(Debug, Clone)]
pub struct Touch {
    pub path: String,
    pub access: Access,
    pub ok: bool,
    /// The script had been opened by then.
    pub started: bool,
    /// For a rename's source: where it went.
    pub renamed_to: Option<String>,
    pub line: String,
}

/// Split strace arguments at top-level commas (quotes, brackets and `<fd path>` kept whole).
pub fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                cur.push(c);
                while let Some(d) = chars.next() {
                    cur.push(d);
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            cur.push(e);
                        }
                    } else if d == '"' {
                        break;
                    }
                }
            }
            '(' | '[' | '{' | '<' => {
                depth += 1;
                cur.push(c);
            }
            ')' | ']' | '}' | '>' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => {
                out.push(cur.trim().to_owned());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

/// The string of a quoted argument (`"a\nb"`), C escapes decoded; `None` when not a string.
pub fn unquote(arg: &str) -> Option<String> {
    let body = arg.strip_prefix('"')?;
    let body = body.strip_suffix("\"...").or(body.strip_suffix('"'))?;
    let mut out = Vec::new();
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            i += 1;
            match b[i] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'x' if i + 2 < b.len() => {
                    let h = std::str::from_utf8(&b[i + 1..i + 3]).ok()?;
                    out.push(u8::from_str_radix(h, 16).ok()?);
                    i += 2;
                }
                d @ b'0'..=b'7' => {
                    let mut v = u32::from(d - b'0');
                    while i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) && v < 32 {
                        i += 1;
                        v = v * 8 + u32::from(b[i] - b'0');
                    }
                    out.push(u8::try_from(v).ok()?);
                }
                other => out.push(other),
            }
        } else {
            out.push(b[i]);
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The path strace shows for a descriptor argument (`3</a/b>`, `AT_FDCWD</a>`).
pub fn fd_path(arg: &str) -> Option<String> {
    let start = arg.find("</")?;
    Some(arg[start + 1..].strip_suffix('>')?.to_owned())
}

/// One complete call: the process, the call name, its arguments and its result.
pub struct Call {
    pub pid: u32,
    pub name: String,
    pub args: Vec<String>,
    pub ret: String,
    pub line: String,
}

/// Parse a trace written by `strace -f -y -qq -o FILE`, joining `<unfinished ...>` and
/// `<... resumed>` halves; calls come in the order they started.
pub fn parse_calls(trace: &str) -> Vec<Call> {
    let mut pending: BTreeMap<u32, (usize, String)> = BTreeMap::new();
    let mut complete: Vec<(usize, u32, String)> = Vec::new();
    for (n, line) in trace.lines().enumerate() {
        let Some((pid, rest)) = line.trim_start().split_once(char::is_whitespace) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with("---") || rest.starts_with("+++") {
            continue;
        }
        if let Some(head) = rest.strip_suffix("<unfinished ...>") {
            pending.insert(pid, (n, head.to_owned()));
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let tail = tail.split_once("resumed>").map_or("", |(_, t)| t);
            if let Some((start, head)) = pending.remove(&pid) {
                complete.push((start, pid, format!("{head}{tail}")));
            }
        } else {
            complete.push((n, pid, rest.to_owned()));
        }
    }
    complete.sort_by_key(|(n, _, _)| *n);
    complete
        .into_iter()
        .filter_map(|(_, pid, text)| {
            // `name(args) = ret`, with the ` = ` padded to a column.
            let open = text.find('(')?;
            let eq = text.rfind(" = ")?;
            let head = text[..eq].trim_end().strip_suffix(')')?;
            Some(Call {
                pid,
                name: text[..open].to_owned(),
                args: split_args(head.get(open + 1..)?),
                ret: text[eq + 3..].trim().to_owned(),
                line: text,
            })
        })
        .collect()
}

/// Access of an `open` by its flags.
pub fn open_access(flags: &str) -> Access {
    if ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
        .iter()
        .any(|f| flags.contains(f))
    {
        Access::Write
    } else if flags.contains("O_DIRECTORY") {
        // A handle on a directory; reading its entries (`getdents64`) is the listing.
        Access::Probe
    } else {
        Access::Read
    }
}

/// The touches of a trace; `script` is the program file the interpreter opens first.
pub fn touches(trace: &str, start_cwd: &str, script: &str) -> (Vec<Touch>, Vec<String>) {
    let mut cwd: BTreeMap<u32, String> = BTreeMap::new();
    let mut out = Vec::new();
    let mut unresolved = Vec::new();
    let mut started = false;
    let mut first_pid = None;
    for call in parse_calls(trace) {
        let pid = call.pid;
        let root = *first_pid.get_or_insert(pid);
        if pid == root {
            cwd.entry(pid).or_insert_with(|| start_cwd.to_owned());
        }
        // strace shows the working directory with every `AT_FDCWD`: the truth for this process.
        for a in &call.args {
            if a.starts_with("AT_FDCWD<") {
                if let Some(p) = fd_path(a) {
                    cwd.insert(pid, p);
                }
            }
        }
        let ok = !call.ret.starts_with('-') && !call.ret.starts_with('?');
        let a = &call.args;
        // (base argument, path argument, access) triples of this call.
        let mut uses: Vec<(Option<usize>, usize, Access)> = Vec::new();
        let mut rename: Option<(usize, usize, Option<usize>, usize)> = None;
        let mut new_cwd = None;
        let mut link_target: Option<(Option<usize>, usize, usize)> = None;
        let mut listed: Vec<(String, String)> = Vec::new();
        match call.name.as_str() {
            "open" | "creat" => {
                let acc = if call.name == "creat" {
                    Access::Write
                } else {
                    open_access(a.get(1).map_or("", String::as_str))
                };
                uses.push((None, 0, acc));
            }
            "openat" | "openat2" => {
                uses.push((Some(0), 1, open_access(a.get(2).map_or("", String::as_str))));
            }
            "mkdir" | "mknod" | "truncate" | "utime" | "utimes" => {
                uses.push((None, 0, Access::Write))
            }
            "mkdirat" | "mknodat" | "utimensat" | "futimesat" => {
                uses.push((Some(0), 1, Access::Write))
            }
            "unlink" | "rmdir" => uses.push((None, 0, Access::Delete)),
            "unlinkat" => uses.push((Some(0), 1, Access::Delete)),
            "rename" => rename = Some((usize::MAX, 0, None, 1)),
            "renameat" | "renameat2" => rename = Some((0, 1, Some(2), 3)),
            "link" => {
                uses.push((None, 0, Access::Read));
                uses.push((None, 1, Access::Link));
            }
            "linkat" => {
                uses.push((Some(0), 1, Access::Read));
                uses.push((Some(2), 3, Access::Link));
            }
            // The target of a symbolic link is not touched, but named: relative to the link.
            "symlink" => {
                uses.push((None, 1, Access::Link));
                link_target = Some((None, 0, 1));
            }
            "symlinkat" => {
                uses.push((Some(1), 2, Access::Link));
                link_target = Some((Some(1), 0, 2));
            }
            "chmod" | "chown" | "lchown" => uses.push((None, 0, Access::Chmod)),
            "fchmodat" | "fchmodat2" | "fchownat" => uses.push((Some(0), 1, Access::Chmod)),
            "execve" => uses.push((None, 0, Access::Exec)),
            "execveat" => uses.push((Some(0), 1, Access::Exec)),
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Ok(child) = call.ret.parse::<u32>() {
                    if let Some(c) = cwd.get(&pid).cloned() {
                        cwd.entry(child).or_insert(c);
                    }
                }
            }
            "chdir" => {
                uses.push((None, 0, Access::Probe));
                if ok {
                    if let (Some(p), Some(c)) = (a.first().and_then(|x| unquote(x)), cwd.get(&pid))
                    {
                        new_cwd = Some(join(c, &p));
                    }
                }
            }
            "getdents64" | "getdents" => {
                if let Some(p) = a.first().and_then(|x| fd_path(x)) {
                    listed.push((p, call.line.clone()));
                }
            }
            "fchdir" => {
                if ok {
                    if let Some(p) = a.first().and_then(|x| fd_path(x)) {
                        cwd.insert(pid, p);
                    }
                }
            }
            name if name.ends_with("at") || name == "statx" || name == "faccessat2" => {
                uses.push((Some(0), 1, Access::Probe))
            }
            _ => uses.push((None, 0, Access::Probe)),
        }
        let resolve = |base: Option<usize>, path: usize| -> Option<Option<String>> {
            let p = unquote(a.get(path)?)?;
            if p.is_empty() {
                // `AT_EMPTY_PATH`: the descriptor itself, when it is a file (not a pipe).
                let fd = base.and_then(|b| a.get(b)).and_then(|x| fd_path(x))?;
                return Some(Some(fd));
            }
            if p.starts_with('/') {
                return Some(Some(join("/", &p)));
            }
            let dir = match base.and_then(|b| a.get(b)) {
                Some(x) => fd_path(x),
                None => cwd.get(&pid).cloned(),
            };
            Some(dir.map(|d| join(&d, &p)))
        };
        let opens_script = ok
            && uses.iter().any(|(b, p, acc)| {
                *acc == Access::Read && resolve(*b, *p).flatten().as_deref() == Some(script)
            });
        started |= opens_script;
        let mut push = |path: Option<Option<String>>, access, renamed_to: Option<String>| match path
        {
            Some(Some(p)) => out.push(Touch {
                path: p,
                access,
                ok,
                started,
                renamed_to,
                line: call.line.clone(),
            }),
            Some(None) => unresolved.push(format!("pid {pid}: {}", call.line)),
            None => {}
        };
        if let Some((ob, op, nb, np)) = rename {
            let ob = (ob != usize::MAX).then_some(ob);
            let to = resolve(nb, np);
            push(resolve(ob, op), Access::Delete, to.clone().flatten());
            push(to, Access::Write, None);
        }
        if let Some((b, target, link)) = link_target {
            let at = resolve(b, link).flatten();
            if let (Some(at), Some(t)) = (at, a.get(target).and_then(|x| unquote(x))) {
                let dir = at.rsplit_once('/').map_or("/", |(d, _)| d).to_owned();
                push(Some(Some(join(&dir, &t))), Access::Probe, None);
            }
        }
        for (b, p, acc) in uses {
            push(resolve(b, p), acc, None);
        }
        for (p, line) in listed {
            out.push(Touch {
                path: p,
                access: Access::List,
                ok,
                started,
                renamed_to: None,
                line,
            });
        }
        if let Some(c) = new_cwd {
            cwd.insert(pid, c);
        }
    }
    // A path opened for reading that is listed or that other paths were reached through is a
    // directory: the open is a handle, its listing is the `getdents64`.
    let dirs: BTreeSet<String> = out
        .iter()
        .filter_map(|t| match t.access {
            Access::List => Some(t.path.clone()),
            _ => t.path.rsplit_once('/').map(|(d, _)| d.to_owned()),
        })
        .collect();
    for t in &mut out {
        if t.access == Access::Read && dirs.contains(&t.path) {
            t.access = Access::Probe;
        }
    }
    (out, unresolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(t: &[Touch]) -> Vec<(&str, Access, bool)> {
        t.iter()
            .map(|t| (t.path.as_str(), t.access, t.ok))
            .collect()
    }

    #[test]
    fn arguments_split_at_top_level_commas_only() {
        assert_eq!(
            split_args(r#"AT_FDCWD</w>, "a,b", [1, 2], {x=1, y=2}, 3</p, q>"#),
            vec![
                "AT_FDCWD</w>",
                r#""a,b""#,
                "[1, 2]",
                "{x=1, y=2}",
                "3</p, q>"
            ]
        );
        // An escaped quote does not end the string.
        assert_eq!(split_args(r#""a\",b", 0"#), vec![r#""a\",b""#, "0"]);
        assert!(split_args("").is_empty());
    }

    #[test]
    fn quoted_arguments_decode_c_escapes() {
        assert_eq!(unquote(r#""a\nb\tc""#).as_deref(), Some("a\nb\tc"));
        assert_eq!(unquote(r#""x\x41\101\"q""#).as_deref(), Some("xAA\"q"));
        // strace cuts long strings with `...` after the closing quote.
        assert_eq!(unquote(r#""abc"..."#).as_deref(), Some("abc"));
        assert_eq!(unquote("O_RDONLY"), None);
        assert_eq!(unquote("3</a>"), None);
    }

    #[test]
    fn descriptor_arguments_name_their_path() {
        assert_eq!(fd_path("3</a/b>").as_deref(), Some("/a/b"));
        assert_eq!(fd_path("AT_FDCWD</w>").as_deref(), Some("/w"));
        assert_eq!(fd_path("3"), None);
        assert_eq!(fd_path("AT_FDCWD"), None);
    }

    #[test]
    fn unfinished_calls_join_their_resumed_half_in_start_order() {
        let calls = parse_calls(
            "5 read(3</a>, <unfinished ...>\n\
             6 close(4) = 0\n\
             5 <... read resumed>\"xy\", 2) = 2\n\
             5 +++ exited with 0 +++\n\
             not a call line\n",
        );
        let seen: Vec<(u32, &str, &str)> = calls
            .iter()
            .map(|c| (c.pid, c.name.as_str(), c.ret.as_str()))
            .collect();
        assert_eq!(seen, vec![(5, "read", "2"), (6, "close", "0")]);
        assert_eq!(calls[0].args, vec!["3</a>", "\"xy\"", "2"]);
    }

    #[test]
    fn open_flags_decide_the_access() {
        assert_eq!(open_access("O_RDONLY|O_CLOEXEC"), Access::Read);
        assert_eq!(open_access("O_WRONLY|O_CREAT|O_TRUNC"), Access::Write);
        assert_eq!(open_access("O_RDWR"), Access::Write);
        assert_eq!(open_access("O_RDONLY|O_DIRECTORY"), Access::Probe);
    }

    #[test]
    fn the_trace_parser_reads_strace_lines() {
        let trace = "\
10 openat(AT_FDCWD</w>, \"a/b.txt\", O_RDONLY|O_CLOEXEC) = 3</w/a/b.txt>
10 clone(child_stack=NULL, flags=SIGCHLD) = 11
11 chdir(\"sub\") = 0
11 mkdir(\"new\", 0777) = 0
10 renameat2(AT_FDCWD</w>, \"x\", AT_FDCWD</w>, \"y\", RENAME_NOREPLACE <unfinished ...>
11 unlinkat(4</w/sub/new>, \"f\\\"q\", 0) = -1 ENOENT (No such file or directory)
10 <... renameat2 resumed>) = 0
10 --- SIGCHLD {si_signo=SIGCHLD} ---
";
        let (t, unresolved) = touches(trace, "/w", "/w/a/b.txt");
        assert!(unresolved.is_empty(), "{unresolved:?}");
        assert_eq!(
            got(&t),
            vec![
                ("/w/a/b.txt", Access::Read, true),
                ("/w/sub", Access::Probe, true),
                ("/w/sub/new", Access::Write, true),
                ("/w/x", Access::Delete, true),
                ("/w/y", Access::Write, true),
                ("/w/sub/new/f\"q", Access::Delete, false),
            ]
        );
        assert!(t[0].started && t.iter().all(|t| t.started));
        assert_eq!(t[3].renamed_to.as_deref(), Some("/w/y"));
    }

    #[test]
    fn reads_before_the_script_opens_are_not_started() {
        let trace = "\
1 openat(AT_FDCWD</w>, \"/usr/lib/libc.so\", O_RDONLY) = 3</usr/lib/libc.so>
1 openat(AT_FDCWD</w>, \"/b/program\", O_RDONLY) = 3</b/program>
1 openat(AT_FDCWD</w>, \"data\", O_RDONLY) = 3</w/data>
";
        let (t, _) = touches(trace, "/w", "/b/program");
        let started: Vec<(&str, bool)> = t.iter().map(|t| (t.path.as_str(), t.started)).collect();
        assert_eq!(
            started,
            vec![
                ("/usr/lib/libc.so", false),
                ("/b/program", true),
                ("/w/data", true)
            ]
        );
    }

    #[test]
    fn listings_links_and_descriptor_directories_are_placed() {
        let trace = "\
2 openat(AT_FDCWD</w>, \"d\", O_RDONLY|O_DIRECTORY) = 3</w/d>
2 getdents64(3</w/d>, 0x1 /* 2 entries */, 32768) = 48
2 symlinkat(\"../t\", AT_FDCWD</w>, \"d/l\") = 0
2 fchdir(3</w/d>) = 0
2 unlink(\"f\") = 0
2 execve(\"/bin/ls\", [\"ls\"], 0x2 /* 3 vars */) = 0
";
        let (t, unresolved) = touches(trace, "/w", "/none");
        assert!(unresolved.is_empty(), "{unresolved:?}");
        assert_eq!(
            got(&t),
            vec![
                ("/w/d", Access::Probe, true),
                ("/w/d", Access::List, true),
                // The target of a symbolic link is named relative to the link.
                ("/w/t", Access::Probe, true),
                ("/w/d/l", Access::Link, true),
                // After `fchdir`, relative paths resolve in the new directory.
                ("/w/d/f", Access::Delete, true),
                ("/bin/ls", Access::Exec, true),
            ]
        );
    }

    #[test]
    fn a_read_of_a_directory_others_are_reached_through_is_a_handle() {
        let trace = "\
3 open(\"/w/d\", O_RDONLY) = 3</w/d>
3 open(\"/w/d/a\", O_RDONLY) = 4</w/d/a>
";
        let (t, _) = touches(trace, "/w", "/none");
        assert_eq!(
            got(&t),
            vec![
                ("/w/d", Access::Probe, true),
                ("/w/d/a", Access::Read, true)
            ]
        );
    }

    #[test]
    fn a_relative_path_of_an_unknown_process_is_reported_unplaced() {
        // pid 9 was never seen being cloned from a process whose directory is known.
        let trace = "\
1 getpid() = 1
9 unlink(\"x\") = 0
";
        let (t, unresolved) = touches(trace, "/w", "/none");
        assert!(t.iter().all(|t| t.path != "/w/x"), "{t:?}");
        assert_eq!(unresolved, vec!["pid 9: unlink(\"x\") = 0".to_owned()]);
    }
}
