//! No file of the runtime imports a file that imports it back.
//!
//! Every `.rs` file under a crate's `src` is a node; an edge goes from a file to the file that
//! holds what it names: `mod child;` (parent → child), `use crate::a::b::X` and `crate::a::X`
//! paths (→ the deepest module file of the path), `super::` and `self::` paths (resolved from the
//! file's own module). `#[cfg(test)]` items (`mod tests { use super::*; }`, `mod tests;`) are left
//! out: tests may look at their parent. The file graph must be acyclic; a cycle is printed with the
//! path that makes each edge.
//!
//! [`CRATES`] lists the roots checked, each with the directories left out (work moved elsewhere).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `(source directory relative to this crate's manifest, directories under it to leave out)`.
const CRATES: &[(&str, &[&str])] = &[
    ("src", &[]),
    ("../tool-safety/src", &[]),
    ("../tool-sandbox/src", &[]),
    ("../tool-macros/src", &[]),
];

/// Files each root's graph must hold: the scanner's language walks, so that leaving their
/// directories out cannot pass unnoticed.
const MUST_COVER: &[(&str, &[&str])] = &[(
    "../tool-safety/src",
    &[
        "bash/walk.rs",
        "bash/commands.rs",
        "bash/effects.rs",
        "bash/exec.rs",
        "python/walk.rs",
        "python/calls.rs",
        "python/effects.rs",
        "scanner.rs",
        "sink.rs",
    ],
)];

#[test]
fn no_import_cycle_between_files() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut report = String::new();
    for (src, excluded) in CRATES {
        let graph = FileGraph::load(&manifest.join(src), excluded);
        assert!(
            graph.files.len() > 1,
            "no source files found under {src}: the check would pass vacuously"
        );
        for (root, files) in MUST_COVER.iter().filter(|(r, _)| r == src) {
            for f in *files {
                assert!(
                    graph.files.contains_key(Path::new(f)),
                    "{root}/{f} is not in the import graph"
                );
            }
        }
        for cycle in graph.cycles() {
            report.push_str(&cycle);
        }
    }
    assert!(report.is_empty(), "import cycles between files:\n{report}");
}

#[test]
fn the_check_finds_a_parent_child_cycle() {
    let dir = tempdir("parent-child");
    write(
        &dir,
        "lib.rs",
        "mod a;\npub use a::Thing;\npub struct Root;\n",
    );
    write(
        &dir,
        "a.rs",
        "// use crate::Root; in a comment is no edge\nuse crate::Root;\npub struct Thing;\n",
    );
    let cycles = FileGraph::load(&dir, &[]).cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(cycles[0].contains("a.rs") && cycles[0].contains("lib.rs"));
}

#[test]
fn the_check_finds_a_cycle_through_use_groups_and_super() {
    let dir = tempdir("groups");
    write(&dir, "lib.rs", "pub mod x;\npub mod y;\n");
    write(&dir, "x/mod.rs", "mod inner;\npub struct X;\n");
    write(&dir, "x/inner.rs", "use crate::{y::{Y, other}};\n");
    write(
        &dir,
        "y.rs",
        "pub struct Y;\nfn f() { let _ = super::x::X; }\n",
    );
    let cycles = FileGraph::load(&dir, &[]).cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    for file in ["x/mod.rs", "x/inner.rs", "y.rs"] {
        assert!(
            cycles[0].contains(file),
            "{file} missing from {}",
            cycles[0]
        );
    }
}

#[test]
fn the_check_leaves_test_modules_strings_and_excluded_directories_out() {
    let dir = tempdir("clean");
    write(&dir, "lib.rs", "mod a;\nmod skipped;\npub struct Root;\n");
    write(
        &dir,
        "a.rs",
        "pub struct A;\nconst S: &str = \"crate::Root\";\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::Root;\n}\n\
         #[cfg(test)]\nmod more;\n",
    );
    write(&dir, "a/more.rs", "use crate::Root;\n");
    write(&dir, "skipped/mod.rs", "use crate::Root;\n");
    let graph = FileGraph::load(&dir, &["skipped"]);
    assert!(graph.cycles().is_empty(), "{:?}", graph.cycles());
    assert!(!graph.files.contains_key(Path::new("a/more.rs")));
    assert!(!graph.files.contains_key(Path::new("skipped/mod.rs")));
}

/// Files (relative to the source root) and their edges, each with the path that makes it.
struct FileGraph {
    files: BTreeMap<PathBuf, BTreeMap<PathBuf, String>>,
}

impl FileGraph {
    fn load(src: &Path, excluded: &[&str]) -> Self {
        let mut files = BTreeMap::new();
        let mut modules = BTreeMap::new();
        collect(src, src, excluded, &mut modules);
        // Files reached only through `#[cfg(test)] mod x;` are test code.
        let mut test_only = BTreeSet::new();
        let mut parsed = BTreeMap::new();
        for (module, file) in &modules {
            let text = std::fs::read_to_string(src.join(file)).expect("source file readable");
            let (code, test_mods) = strip(&text);
            for m in test_mods {
                let mut child = module.clone();
                child.push(m);
                if let Some(f) = modules.get(&child) {
                    test_only.insert(f.clone());
                }
            }
            parsed.insert(module.clone(), (file.clone(), code));
        }
        for (module, (file, code)) in &parsed {
            if test_only.contains(file) {
                continue;
            }
            let mut edges = BTreeMap::new();
            for (path, shown) in references(module, code) {
                // What is left out is outside the graph, not part of its parent.
                if excluded
                    .iter()
                    .any(|x| path.first().is_some_and(|p| p == x))
                {
                    continue;
                }
                if let Some(target) = resolve(&modules, &path) {
                    if target != *file && !test_only.contains(&target) {
                        edges.entry(target).or_insert(shown);
                    }
                }
            }
            files.insert(file.clone(), edges);
        }
        FileGraph { files }
    }

    /// One line per strongly connected component of more than one file, with a cycle through it.
    fn cycles(&self) -> Vec<String> {
        let nodes: Vec<&PathBuf> = self.files.keys().collect();
        let index: BTreeMap<&PathBuf, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let succ: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.files[*n]
                    .keys()
                    .filter_map(|t| index.get(t).copied())
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        for scc in tarjan(&succ).into_iter().filter(|c| c.len() > 1) {
            let members: BTreeSet<usize> = scc.iter().copied().collect();
            let start = *members.iter().next().expect("non-empty component");
            let cycle = shortest_cycle(&succ, &members, start);
            let mut line = String::new();
            for pair in cycle.windows(2) {
                let (from, to) = (nodes[pair[0]], nodes[pair[1]]);
                let why = &self.files[from][to];
                let _ = write!(line, "{} -> {} (`{why}`); ", from.display(), to.display());
            }
            let mut all: Vec<String> = scc
                .iter()
                .map(|&i| nodes[i].display().to_string())
                .collect();
            all.sort();
            let _ = writeln!(line, "[component: {}]", all.join(", "));
            out.push(line);
        }
        out
    }
}

/// Map module paths to files: `lib.rs` is `[]`, `a.rs` and `a/mod.rs` are `[a]`, `a/b.rs` is
/// `[a, b]`.
fn collect(
    root: &Path,
    dir: &Path,
    excluded: &[&str],
    modules: &mut BTreeMap<Vec<String>, PathBuf>,
) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("source directory readable")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(root)
            .expect("under the root")
            .to_path_buf();
        if path.is_dir() {
            if !(dir == root && excluded.iter().any(|x| rel == Path::new(x))) {
                collect(root, &path, excluded, modules);
            }
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let mut module: Vec<String> = rel
            .parent()
            .into_iter()
            .flat_map(|p| p.components())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let stem = path.file_stem().expect("file name").to_string_lossy();
        let top = dir == root && (stem == "lib" || stem == "main");
        if stem != "mod" && !top {
            module.push(stem.into_owned());
        }
        modules.insert(module, rel);
    }
}

/// The file holding the item `path` names: the deepest module file along the path.
fn resolve(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).cloned())
}

/// Source without comments, string and char literals, and `#[cfg(test)]` items; also the names of
/// `#[cfg(test)] mod x;` declarations.
fn strip(text: &str) -> (String, Vec<String>) {
    let code = strip_literals(text);
    let mut out = String::with_capacity(code.len());
    let mut test_mods = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let end = item_end(item);
        let words: Vec<&str> = item[..end]
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(i) = words.iter().position(|w| *w == "mod") {
            if let Some(name) = words.get(i + 1) {
                if item[..end].trim_end().ends_with(';') {
                    test_mods.push((*name).to_owned());
                }
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, test_mods)
}

/// Where the item starting at `s` ends: after its `;` or its closing brace at depth 0.
fn item_end(s: &str) -> usize {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 && c == '}' {
                    return i + 1;
                }
            }
            ';' if depth == 0 => return i + 1,
            _ => {}
        }
    }
    s.len()
}

/// Blank out comments and literals (kept as spaces so byte offsets stay meaningful).
fn strip_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(b' ');
        } else if c == b'r'
            && (i == 0 || !ident(b[i - 1]))
            && matches!(b.get(i + 1), Some(b'"' | b'#'))
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.extend_from_slice(b"\"\"");
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let lit_end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch_len) == Some(&b'\'')).then_some(i + 1 + ch_len)
            };
            match lit_end {
                Some(end) => {
                    i = end + 1;
                    out.extend_from_slice(b"' '");
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// Every path the code names from `crate`, `super` or `self`, as a module path from the crate
/// root (use groups expanded), with the text shown in a report; plus `mod x;` declarations.
fn references(module: &[String], code: &str) -> Vec<(Vec<String>, String)> {
    // `self` is the file's module: inline modules other than tests do not occur.
    let here = module.to_vec();
    let tokens = tokenize(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        let prev = i.checked_sub(1).map(|p| tokens[p].as_str());
        if t == "mod" && tokens.get(i + 2).is_some_and(|t| t == ";") {
            let name = tokens[i + 1].clone();
            let mut child = here.clone();
            child.push(name.clone());
            out.push((child, format!("mod {name};")));
            i += 3;
            continue;
        }
        let starts = matches!(t, "crate" | "super" | "self")
            && tokens.get(i + 1).is_some_and(|t| t == "::")
            && prev != Some("::");
        if !starts {
            i += 1;
            continue;
        }
        let mut paths = Vec::new();
        let end = use_tree(&tokens, i, Vec::new(), &mut paths);
        for raw in paths {
            if let Some(abs) = absolute(&here, &raw) {
                out.push((abs, raw.join("::")));
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// Resolve a path starting with `crate`, `super` or `self` against the file's module.
fn absolute(here: &[String], raw: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String>;
    let mut rest = raw;
    match raw.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &raw[1..];
        }
        Some("self") => {
            base = here.to_vec();
            rest = &raw[1..];
        }
        Some("super") => {
            base = here.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().filter(|s| *s != "self" && *s != "*").cloned());
    Some(base)
}

/// Parse a path or use tree at `tokens[i]`, pushing every leaf path; returns the index after it.
fn use_tree(
    tokens: &[String],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                loop {
                    match tokens.get(i).map(String::as_str) {
                        Some("}") => return i + 1,
                        Some(",") => i += 1,
                        None => return i,
                        _ => i = use_tree(tokens, i, prefix.clone(), out),
                    }
                }
            }
            Some(t) if t == "*" || is_ident(t) => {
                prefix.push(t.to_owned());
                i += 1;
                if tokens.get(i).is_some_and(|t| t == "::") {
                    i += 1;
                    continue;
                }
                out.push(prefix);
                return i;
            }
            _ => {
                out.push(prefix);
                return i;
            }
        }
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Identifiers, `::`, and single punctuation characters.
fn tokenize(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut end = at + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(code[at..end].to_owned());
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            out.push("::".to_owned());
        } else if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    out
}

/// Tarjan's strongly connected components.
fn tarjan(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        succ: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.succ[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let n = succ.len();
    let mut s = State {
        succ,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The shortest cycle from `start` back to itself inside `members` (breadth first).
fn shortest_cycle(succ: &[Vec<usize>], members: &BTreeSet<usize>, start: usize) -> Vec<usize> {
    let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &succ[v] {
            if !members.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![v];
                let mut at = v;
                while at != start {
                    at = parent[&at];
                    path.push(at);
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if w != start && !parent.contains_key(&w) {
                parent.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start, start]
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("no-import-cycles-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}
