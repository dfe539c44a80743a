//! Scan time of a 4 KB bash script and a 4 KB Python file, next to the parse alone: the parsers
//! the scanner uses (tree-sitter-bash, ruff_python_parser) and the alternatives weighed against
//! them (brush-parser for bash, tree-sitter-python and rustpython-parser for Python, with
//! `--features bench-parsers`), on the same inputs.

use criterion::{criterion_group, criterion_main, Criterion};
use tool_safety::{SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner, ScriptLang};

const BASH_UNIT: &str = r#"set -euo pipefail
cd "$(dirname "$0")/.."
for f in src/*.rs; do
  grep -n 'unwrap()' "$f" | head -n 3 || true
done
if [ -d target ]; then rm -rf target/debug/incremental; fi
cargo build --release 2>&1 | tee build.log
git status --short | awk '{print $2}' | xargs -r git add
curl -fsSL https://api.example.com/v1/items | jq '.items[] | .id' > ids.txt
export PATH="$HOME/.cargo/bin:$PATH"
tar -czf "dist/app-$(date +%Y%m%d).tar.gz" -C build .
"#;

const PY_UNIT: &str = r#"import json
import subprocess
from pathlib import Path


class Report:
    def __init__(self, root):
        self.root = Path(root)
        self.items = []

    def collect(self):
        for p in sorted(self.root.rglob("*.json")):
            data = json.loads(p.read_text())
            self.items.extend(x for x in data.get("items", []) if x.get("ok"))
        return self

    def write(self, out):
        Path(out).write_text(json.dumps(self.items, indent=2))


def head():
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout

"#;

/// Repeat `unit` to exactly `n` bytes, cut at a line end so the result still parses.
fn sized(unit: &str, n: usize) -> String {
    let mut s = String::new();
    while s.len() < n {
        s.push_str(unit);
    }
    let cut = s[..n].rfind('\n').map_or(n, |i| i + 1);
    s.truncate(cut);
    s
}

fn bench(c: &mut Criterion) {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let bash = sized(BASH_UNIT, 4096);
    let py = sized(PY_UNIT, 4096);
    let bash_req = SafetyScanRequest::new("bench", ScriptLang::Bash, bash.clone());
    let py_req = SafetyScanRequest::new("bench", ScriptLang::Python, py.clone());
    assert_eq!(scanner.scan(&bash_req).decision, SafetyDecision::Allow);
    assert_eq!(scanner.scan(&py_req).decision, SafetyDecision::Allow);

    let mut g = c.benchmark_group("scan");
    g.bench_function("bash_4k", |b| {
        b.iter(|| scanner.scan(std::hint::black_box(&bash_req)))
    });
    g.bench_function("python_4k", |b| {
        b.iter(|| scanner.scan(std::hint::black_box(&py_req)))
    });
    g.finish();

    let mut g = c.benchmark_group("parse_only");
    let mut bp = tree_sitter::Parser::new();
    bp.set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("bash grammar");
    g.bench_function("tree_sitter_bash_4k", |b| {
        b.iter(|| bp.parse(std::hint::black_box(&bash), None))
    });
    ruff_python_parser::parse_module(&py).expect("ruff parses");
    g.bench_function("ruff_python_parser_python_4k", |b| {
        b.iter(|| ruff_python_parser::parse_module(std::hint::black_box(&py)))
    });

    #[cfg(feature = "bench-parsers")]
    alternatives(&mut g, &bash, &py);
    g.finish();
}

/// brush-parser, tree-sitter-python and rustpython-parser on the same inputs (parse only).
#[cfg(feature = "bench-parsers")]
fn alternatives(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    bash: &str,
    py: &str,
) {
    // brush-parser: tokenizer + PEG parser; words stay strings (their expansions are a further
    // parse tree-sitter has already done). The uncached tokenizer, or repeats would be memoized.
    let brush_opts = brush_parser::ParserOptions::default();
    let tok_opts = brush_parser::TokenizerOptions::default();
    let tokens = brush_parser::uncached_tokenize_str(bash, &tok_opts).expect("brush tokenizes");
    brush_parser::parse_tokens(&tokens, &brush_opts).expect("brush parses");
    g.bench_function("brush_parser_bash_4k", |b| {
        b.iter(|| {
            let t = brush_parser::uncached_tokenize_str(std::hint::black_box(bash), &tok_opts);
            t.ok()
                .map(|t| brush_parser::parse_tokens(&t, &brush_opts).is_ok())
        })
    });

    rustpython_parser::parse(py, rustpython_parser::Mode::Module, "<bench>")
        .expect("rustpython parses");
    g.bench_function("rustpython_parser_python_4k", |b| {
        b.iter(|| {
            rustpython_parser::parse(
                std::hint::black_box(py),
                rustpython_parser::Mode::Module,
                "<bench>",
            )
        })
    });

    let mut pp = tree_sitter::Parser::new();
    pp.set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("python grammar");
    g.bench_function("tree_sitter_python_4k", |b| {
        b.iter(|| pp.parse(std::hint::black_box(py), None))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
