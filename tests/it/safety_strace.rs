//! The scanner's effects against a dynamic trace of the same program.
//!
//! Each program of `fixtures/safety/effects/strace_sample.txt` (benign bash and Python programs
//! of the effects corpus, named by index, each with the files it needs) is copied into a fresh
//! temporary workspace and run there under
//! `strace -f -y -qq -e trace=%file,%network,%process,fchdir,getdents64` (on top of
//! `file,network`: `%process` and `fchdir` so that the working directory of every process is
//! known, as children inherit it and `cd` changes it; `getdents64` so that a listing is told from
//! a directory merely opened as a handle). The trace gives what the program touched: each path
//! opened (read, write), listed, created, deleted, renamed, linked, chmod-ed or executed,
//! resolved against the process's working directory or the directory descriptor strace names
//! (`-y`). The scan of the same
//! program, with the workspace as its root and cwd, gives the effects. Two checks:
//!
//! - **Nothing touched goes unnamed.** Every path the program touched in the workspace, and every
//!   path it changed outside, is covered by an effect of a matching kind: the same path, a
//!   directory above it (a recursive copy, delete or search), a glob that matches it, or an
//!   effect whose path is unknown. Left out, as what the interpreter and the tools load rather
//!   than what the script does: reads, listings and executions of paths outside the workspace
//!   under the system prefixes (`/usr`, `/lib`, `/etc`, `/proc`, `/sys`, `/dev`, the Python
//!   installation...), reads outside the workspace before the interpreter opened the script,
//!   anything in the run's private scratch directory (`TMPDIR`, where `mktemp` and `tempfile`
//!   create, and the program file itself), and calls that failed (a probe for a file that is not
//!   there touches nothing). A temporary file renamed onto a covered path (`sed -i`, `zip`) is
//!   part of writing that path.
//! - **Nothing named is made up.** Every file effect with a known path (no glob) names a path
//!   the trace mentions, in any call, failed or not (a program that checks before it deletes
//!   still looks at the path; a symbolic link names its target).
//!
//! Disagreements are listed per program with the trace line or the effect. A missing `strace`
//! skips the test with a message on stderr (CI installs it, `scripts/install-test-deps.sh`). The
//! trace parser is `test_support::strace`, with its own unit tests.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use test_support::paths::{glob_matches, glob_prefix_matches, join, under};
use test_support::strace::{touches, Access, Touch};
use tool_core::safety::{
    Effect, EffectKind, EffectTarget, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner,
};
use tool_core::ScriptLang;

/// What strace records: `file,network`, and what places paths: the working directory of each
/// process (`%process` for children, `fchdir`) and directory listings (`getdents64`).
const TRACE: &str = "trace=%file,%network,%process,fchdir,getdents64";

/// How long one program may run before it is killed (a hang is a failure, not a figure).
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Fewest programs the sample holds, per language and in all.
const MIN_PER_LANGUAGE: usize = 20;
const MIN_TOTAL: usize = 40;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/safety/effects")
}

fn corpus(file: &str) -> Vec<String> {
    std::fs::read_to_string(fixtures().join(file))
        .expect("corpus file")
        .split("\n###")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// A file or directory a sampled program needs.
enum Setup {
    Dir(String),
    File(String, String),
}

struct Sample {
    lang: ScriptLang,
    tag: &'static str,
    index: usize,
    program: String,
    setup: Vec<Setup>,
}

fn samples() -> Vec<Sample> {
    let bash = corpus("benign_bash.txt");
    let python = corpus("benign_python.txt");
    let text = std::fs::read_to_string(fixtures().join("strace_sample.txt")).expect("sample");
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split(" | ");
        let head: Vec<&str> = parts.next().unwrap_or("").split_whitespace().collect();
        assert_eq!(head.len(), 2, "bad sample line: {line}");
        let index: usize = head[1].parse().expect("an index");
        let (lang, tag, programs) = match head[0] {
            "bash" => (ScriptLang::Bash, "bash", &bash),
            "python" => (ScriptLang::Python, "python", &python),
            other => panic!("unknown language {other} in: {line}"),
        };
        assert!(seen.insert((tag, index)), "{tag} {index} sampled twice");
        let program = programs
            .get(index)
            .unwrap_or_else(|| panic!("{tag} {index}: no such program"))
            .clone();
        let setup = parts
            .map(|e| match e.strip_suffix('/') {
                Some(d) => Setup::Dir(d.to_owned()),
                None => {
                    let (p, c) = e.split_once('=').expect("PATH=CONTENT");
                    Setup::File(p.to_owned(), c.replace("\\n", "\n"))
                }
            })
            .collect();
        out.push(Sample {
            lang,
            tag,
            index,
            program,
            setup,
        });
    }
    out
}

/// Where the interpreter and the tools load from: reading there is not the script's doing.
fn system_prefixes(python_prefixes: &[String]) -> Vec<String> {
    let mut v: Vec<String> = [
        "/usr",
        "/lib",
        "/lib32",
        "/lib64",
        "/bin",
        "/sbin",
        "/etc",
        "/proc",
        "/sys",
        "/dev",
        "/run",
        "/var/lib",
        "/var/cache",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.extend(python_prefixes.iter().cloned());
    v
}

fn accounts_for(kind: &EffectKind, access: Access) -> bool {
    use EffectKind as K;
    match access {
        Access::Read => matches!(
            kind,
            K::FileRead | K::DirList | K::ProcessSpawn | K::FileWrite | K::FileCreate
        ),
        // Listing a directory is part of reading, searching, copying, creating or deleting in it.
        Access::List => kind.name() != "network" && kind_on_path(kind),
        Access::Write => matches!(kind, K::FileWrite | K::FileCreate | K::Link),
        Access::Delete => matches!(kind, K::FileDelete),
        // Copying a file copies its mode: a write accounts for a chmod of what it writes.
        Access::Chmod => matches!(kind, K::Chmod | K::FileWrite | K::FileCreate),
        Access::Link => matches!(kind, K::Link | K::FileCreate),
        Access::Exec => matches!(kind, K::ProcessSpawn),
        Access::Probe => true,
    }
}

fn kind_on_path(kind: &EffectKind) -> bool {
    matches!(
        kind,
        EffectKind::FileRead
            | EffectKind::FileWrite
            | EffectKind::FileCreate
            | EffectKind::FileDelete
            | EffectKind::Chmod
            | EffectKind::Link
            | EffectKind::DirList
            | EffectKind::ProcessSpawn
    )
}

/// The absolute paths an effect names (relative ones against the workspace, `~` against HOME).
fn effect_paths(e: &Effect, ws: &str, home: &str) -> Vec<String> {
    e.target
        .values()
        .iter()
        .filter(|v| !v.contains("://"))
        .map(|v| {
            if let Some(rest) = v.strip_prefix('~') {
                join(home, rest.trim_start_matches('/'))
            } else {
                join(ws, v)
            }
        })
        .collect()
}

fn covered(t: &Touch, effects: &[Effect], ws: &str, home: &str) -> bool {
    effects.iter().any(|e| {
        accounts_for(&e.kind, t.access)
            && (matches!(e.target, EffectTarget::Unknown) && kind_on_path(&e.kind)
                || effect_paths(e, ws, home).iter().any(|p| {
                    if p.contains(['*', '?']) {
                        // The directories a glob is expanded in are listed on the way.
                        glob_matches(p, &t.path)
                            || t.access == Access::List && glob_prefix_matches(p, &t.path)
                    } else {
                        under(&t.path, p)
                    }
                }))
    })
}

/// The interpreter, resolved past wrappers (a `pyenv` shim), and its installation prefixes.
struct Python {
    exe: String,
    prefixes: Vec<String>,
}

fn python() -> Python {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, os; print(os.path.realpath(sys.executable)); print(sys.prefix); print(sys.base_prefix)",
        ])
        .output()
        .expect("python3 runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut lines = text.lines().map(str::to_owned);
    let exe = lines.next().expect("sys.executable");
    Python {
        exe,
        prefixes: lines.collect(),
    }
}

fn strace_present() -> bool {
    Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn scan(s: &Sample, ws: &str) -> SafetyReport {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    scanner.scan(
        &SafetyScanRequest::new("trace", s.lang, s.program.as_str())
            .with_workspace(ws)
            .with_cwd(ws)
            .with_open_world(false),
    )
}

/// Run one sample under strace; the trace text, or why it did not run.
fn run_traced(s: &Sample, root: &Path, py: &Python) -> Result<(String, String, String), String> {
    let ws = root.join("ws");
    let home = root.join("home");
    let tmp = root.join("tmp");
    let bin = root.join("bin");
    for d in [&ws, &home, &tmp, &bin] {
        std::fs::create_dir_all(d).expect("temp dirs");
    }
    for e in &s.setup {
        match e {
            Setup::Dir(d) => std::fs::create_dir_all(ws.join(d)).expect("setup dir"),
            Setup::File(p, c) => {
                let p = ws.join(p);
                std::fs::create_dir_all(p.parent().expect("parent")).expect("setup dir");
                std::fs::write(p, c).expect("setup file");
            }
        }
    }
    let ws = ws.canonicalize().expect("workspace path");
    let script = bin.canonicalize().expect("bin").join("program");
    std::fs::write(&script, format!("{}\n", s.program)).expect("program file");
    let trace = root.join("trace.txt");
    let py_dir = Path::new(&py.exe).parent().expect("python dir");
    let mut cmd = Command::new("strace");
    cmd.args(["-f", "-y", "-qq", "-e", TRACE, "-o"]).arg(&trace);
    match s.lang {
        ScriptLang::Bash => cmd.arg("bash"),
        _ => cmd.args([py.exe.as_str(), "-B"]),
    };
    cmd.arg(&script)
        .current_dir(&ws)
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", py_dir.display()),
        )
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("strace did not start: {e}"))?;
    let begun = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if begun.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {RUN_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("output");
    if !status.success() {
        return Err(format!(
            "exited with {status}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = std::fs::read_to_string(&trace).map_err(|e| format!("no trace: {e}"))?;
    Ok((
        text,
        ws.to_string_lossy().into_owned(),
        script.to_string_lossy().into_owned(),
    ))
}

#[test]
fn effects_agree_with_an_strace_of_the_benign_sample() {
    if !strace_present() {
        eprintln!(
            "SKIPPED effects_agree_with_an_strace_of_the_benign_sample: strace is not installed \
             (scripts/install-test-deps.sh installs it)"
        );
        return;
    }
    let py = python();
    let samples = samples();
    let per = |tag: &str| samples.iter().filter(|s| s.tag == tag).count();
    assert!(
        samples.len() >= MIN_TOTAL
            && per("bash") >= MIN_PER_LANGUAGE
            && per("python") >= MIN_PER_LANGUAGE,
        "the sample is too small: {} bash, {} python",
        per("bash"),
        per("python")
    );
    let mut problems = Vec::new();
    let (mut touched_total, mut named_total) = (0, 0);
    for s in &samples {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("temp path");
        let (trace, ws, script) = match run_traced(s, &root, &py) {
            Ok(t) => t,
            Err(why) => {
                problems.push(format!(
                    "{} {}: did not run: {why}\n{}",
                    s.tag, s.index, s.program
                ));
                continue;
            }
        };
        let home = root.join("home").to_string_lossy().into_owned();
        let report = scan(s, &ws);
        let (touches, unresolved) = touches(&trace, &ws, &script);
        let mut mine = Vec::new();
        for u in unresolved {
            mine.push(format!("a path the trace does not place: {u}"));
        }
        let prefixes = system_prefixes(&py.prefixes);
        let scratch = root.to_string_lossy().into_owned();
        // Renames onto a covered path: the temporary file they replace it with, and the removal
        // of the old file before, are part of writing it.
        let replaced: Vec<(&str, &str)> = touches
            .iter()
            .filter(|t| t.ok && t.access == Access::Delete)
            .filter_map(|t| Some((t.path.as_str(), t.renamed_to.as_deref()?)))
            .filter(|(_, to)| {
                let w = Touch {
                    path: (*to).to_owned(),
                    access: Access::Write,
                    ok: true,
                    started: true,
                    renamed_to: None,
                    line: String::new(),
                };
                covered(&w, &report.effects, &ws, &home)
            })
            .collect();
        let atomic: BTreeSet<&str> = replaced.iter().flat_map(|(a, b)| [*a, *b]).collect();
        let mut seen = BTreeSet::new();
        for t in touches.iter().filter(|t| t.ok && t.access != Access::Probe) {
            // A directory opened for reading is a handle (`find` and `mkdir -p` keep one on
            // `.`); what is read from it shows as its listing.
            if t.access == Access::Read && Path::new(&t.path).is_dir() {
                continue;
            }
            let inside = under(&t.path, &ws);
            let changes = matches!(
                t.access,
                Access::Write | Access::Delete | Access::Chmod | Access::Link
            );
            let relevant = if inside {
                true
            } else if changes {
                // Outside the workspace every change counts, but for the private scratch
                // directory (`TMPDIR`, where `mktemp` and `tempfile` create) and devices.
                !t.path.starts_with("/dev/") && !under(&t.path, &scratch) || under(&t.path, &home)
            } else {
                t.started
                    && !prefixes.iter().any(|p| under(&t.path, p))
                    && !under(&t.path, &scratch)
            };
            if !relevant || atomic.contains(t.path.as_str()) {
                continue;
            }
            if !seen.insert((t.path.clone(), t.access)) {
                continue;
            }
            touched_total += 1;
            // `mkdir -p a/b`, `os.makedirs`: creating a directory creates the ones above it.
            let parent_of_created = t.line.starts_with("mkdir")
                && report.effects.iter().any(|e| {
                    e.kind == EffectKind::FileCreate
                        && effect_paths(e, &ws, &home)
                            .iter()
                            .any(|p| under(p, &t.path))
                });
            if !parent_of_created && !covered(t, &report.effects, &ws, &home) {
                mine.push(format!(
                    "touched but not named: {:?} {} (trace: {})",
                    t.access,
                    t.path
                        .strip_prefix(&ws)
                        .map_or(t.path.as_str(), |r| r.trim_start_matches('/')),
                    t.line
                ));
            }
        }
        let mentioned: BTreeSet<String> = touches.iter().map(|t| t.path.clone()).collect();
        let fd_paths: BTreeSet<String> = trace
            .split("</")
            .skip(1)
            .filter_map(|s| s.split_once('>').map(|(p, _)| join("/", p)))
            .collect();
        for e in report
            .effects
            .iter()
            .filter(|e| kind_on_path(&e.kind) && e.kind.name() != "process_spawn")
        {
            for p in effect_paths(e, &ws, &home) {
                if p.contains(['*', '?', '[']) {
                    continue;
                }
                named_total += 1;
                let hit = mentioned.iter().chain(&fd_paths).any(|m| under(m, &p));
                if !hit {
                    mine.push(format!(
                        "named but never touched: {} {} (line {}: {})",
                        e.kind.name(),
                        p,
                        e.line,
                        e.evidence
                    ));
                }
            }
        }
        if !mine.is_empty() {
            problems.push(format!(
                "{} {}:\n{}\n  effects: {}\n  - {}",
                s.tag,
                s.index,
                s.program,
                serde_json::to_string(&report.effects).expect("json"),
                mine.join("\n  - ")
            ));
        }
    }
    eprintln!(
        "strace agreement: {} programs ({} bash, {} python), {touched_total} touched paths \
         named, {named_total} named paths touched, {} programs disagree",
        samples.len(),
        per("bash"),
        per("python"),
        problems.len()
    );
    assert!(
        problems.is_empty(),
        "{} of {} programs disagree with their trace:\n\n{}",
        problems.len(),
        samples.len(),
        problems.join("\n\n")
    );
}

#[test]
fn coverage_needs_a_matching_kind_and_place() {
    let fx = |kind: EffectKind, target: EffectTarget| Effect {
        kind,
        target,
        line: 1,
        column: 1,
        evidence: String::new(),
        verdict: Default::default(),
        rule_id: None,
    };
    let t = |path: &str, access| Touch {
        path: path.to_owned(),
        access,
        ok: true,
        started: true,
        renamed_to: None,
        line: String::new(),
    };
    let read_src = [fx(
        EffectKind::FileRead,
        EffectTarget::Resolved("src".into()),
    )];
    assert!(covered(
        &t("/w/src/a.rs", Access::Read),
        &read_src,
        "/w",
        "/h"
    ));
    assert!(!covered(
        &t("/w/src/a.rs", Access::Delete),
        &read_src,
        "/w",
        "/h"
    ));
    assert!(!covered(&t("/w/srcx", Access::Read), &read_src, "/w", "/h"));
    let glob = [fx(
        EffectKind::FileDelete,
        EffectTarget::Resolved("out/*.tmp".into()),
    )];
    assert!(covered(
        &t("/w/out/a.tmp", Access::Delete),
        &glob,
        "/w",
        "/h"
    ));
    assert!(!covered(
        &t("/w/out/a.txt", Access::Delete),
        &glob,
        "/w",
        "/h"
    ));
    let unknown = [fx(EffectKind::FileWrite, EffectTarget::Unknown)];
    assert!(covered(&t("/w/any", Access::Write), &unknown, "/w", "/h"));
    assert!(!covered(&t("/w/any", Access::Delete), &unknown, "/w", "/h"));
}

/// Pieces of bash programs that exercise effect extraction: commands that touch files, the
/// network and processes, with literal, variable, brace, glob, `~` and `..` operands.
fn bash_piece() -> impl Strategy<Value = String> {
    let cmd = prop::sample::select(vec![
        "cat",
        "rm -rf",
        "cp -r",
        "mv",
        "ln -s",
        "chmod 777",
        "ls",
        "find",
        "tee",
        "curl -o",
        "wget -O",
        "curl --data-binary",
        "kill -9",
        "touch",
        "mkdir -p",
        "tar czf",
        "source",
        "xargs rm",
        "sh -c",
        "awk",
        "sed -i",
        "grep -r",
        "echo",
        "cd",
        "export X=",
    ]);
    let arg = prop::sample::select(vec![
        "/etc/passwd",
        "$D",
        "${D}/x",
        "~/.ssh/id_rsa",
        "../..",
        "out/{a,b}",
        "/e?c/*",
        "$(echo /)",
        "\"$D/$F\"",
        "'x y'",
        "http://h.example/u",
        "@/etc/shadow",
        "-1",
        "*",
        ".",
        "$1",
        "$HOME",
        "`pwd`",
        "{}",
        "\\;",
    ]);
    (cmd, prop::collection::vec(arg, 0..4), 0..4usize).prop_map(|(c, args, glue)| {
        let sep = ["\n", " | ", " && ", "; "][glue];
        format!("{c} {}{sep}", args.join(" "))
    })
}

fn python_piece() -> impl Strategy<Value = String> {
    let call = prop::sample::select(vec![
        "open({})",
        "open({}, 'w')",
        "os.remove({})",
        "shutil.rmtree({})",
        "os.listdir({})",
        "shutil.copy({}, {})",
        "os.rename({}, {})",
        "requests.post({}, data={})",
        "subprocess.run([{}])",
        "os.symlink({}, {})",
        "Path({}).write_text({})",
        "os.kill({}, 9)",
        "glob.glob({})",
        "os.environ[{}]",
        "exec({})",
    ]);
    let arg = prop::sample::select(vec![
        "'/etc/passwd'",
        "p",
        "os.path.join(b, 'x')",
        "f'{b}/y'",
        "Path('/root') / '.ssh'",
        "'%s/z' % b",
        "'a' + b",
        "os.sep",
        "chr(47)",
        "'~/.aws/credentials'",
        "'../..'",
        "os.path.expanduser('~')",
        "'https://h.example'",
        "10**12",
        "b",
        "'AWS_SECRET_KEY'",
    ]);
    let assign = prop::sample::select(vec!["p = ", "b = ", ""]);
    (assign, call, prop::collection::vec(arg, 2)).prop_map(|(a, c, args)| {
        let mut s = c.to_owned();
        for x in &args {
            s = s.replacen("{}", x, 1);
        }
        format!("{a}{s}\n")
    })
}

fn check_effects(lang: ScriptLang, script: &str) -> Result<(), TestCaseError> {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("scanner");
    let r = scanner.scan(
        &SafetyScanRequest::new("props", lang, script)
            .with_workspace("/w/project")
            .with_cwd("/w/project"),
    );
    prop_assert!(
        !r.findings
            .iter()
            .any(|f| f.metadata.get("reason").map(String::as_str) == Some("panic")),
        "panic on {script:?}"
    );
    let lines = u32::try_from(script.lines().count().max(1)).unwrap_or(u32::MAX);
    prop_assert!(r.effects.len() <= 256);
    for e in &r.effects {
        prop_assert!(
            e.line >= 1 && e.line <= lines + 1,
            "line {} of {lines}",
            e.line
        );
        prop_assert!(e.column >= 1);
        let back: Effect = serde_json::from_value(serde_json::to_value(e).expect("json"))
            .expect("an effect reads back");
        prop_assert_eq!(&back, e);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn bash_effect_extraction_never_panics(pieces in prop::collection::vec(bash_piece(), 1..8), vars in "[a-z/.]{0,12}") {
        let script = format!("D={vars}\nF=$D/f\n{}", pieces.concat());
        check_effects(ScriptLang::Bash, &script)?;
    }

    #[test]
    fn python_effect_extraction_never_panics(pieces in prop::collection::vec(python_piece(), 1..8), base in "[a-z/.~]{0,12}") {
        let script = format!("import os, shutil, glob, subprocess, requests\nfrom pathlib import Path\nb = '{base}'\np = b\n{}", pieces.concat());
        check_effects(ScriptLang::Python, &script)?;
    }
}
