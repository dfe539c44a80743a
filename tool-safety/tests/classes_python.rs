//! The Python scanner on per-class corpora (`fixtures/classes/python/`): each program carries
//! its expected decision and the effect kind or rule id the scan must report.
//!
//! A program starts at a header line `#### expect=allow|review|deny [want=KIND|RULE]
//! [host=HOST]`; `want` names an effect kind (`network`, `process_control`...) or a finding's
//! rule id, and `host` a host some network effect must list.

mod common;

use std::path::Path;

use common::assert_allowed_listing_the_kernel_read;
use tool_safety::{
    EffectKind, SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner, ScriptLang,
};

const CLASSES: &[&str] = &[
    "network", "process", "hostinfo", "deser", "alloc", "dynamic", "shell", "benign",
];

/// Programs each class holds at least (benign: at least 30).
const MIN_PER_CLASS: usize = 15;
const MIN_BENIGN: usize = 30;

struct Program {
    line: usize,
    expect: SafetyDecision,
    want: Option<String>,
    host: Option<String>,
    src: String,
}

fn programs(text: &str) -> Vec<Program> {
    let mut out: Vec<Program> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(header) = l.strip_prefix("#### ") {
            let mut p = Program {
                line: i + 1,
                expect: SafetyDecision::Allow,
                want: None,
                host: None,
                src: String::new(),
            };
            for kv in header.split_whitespace() {
                match kv.split_once('=') {
                    Some(("expect", "allow")) => p.expect = SafetyDecision::Allow,
                    Some(("expect", "review")) => p.expect = SafetyDecision::NeedsHumanReview,
                    Some(("expect", "deny")) => p.expect = SafetyDecision::Deny,
                    Some(("want", w)) => p.want = Some(w.to_owned()),
                    Some(("host", h)) => p.host = Some(h.to_owned()),
                    _ => panic!("line {}: bad header field {kv:?}", i + 1),
                }
            }
            out.push(p);
        } else if let Some(p) = out.last_mut() {
            p.src.push_str(l);
            p.src.push('\n');
        }
    }
    out
}

/// `src` as a call not declared `open_world`, in a workspace at `/work/ws`.
fn scan(scanner: &Scanner, src: &str) -> tool_safety::SafetyReport {
    scanner.scan(
        &SafetyScanRequest::new("classes", ScriptLang::Python, src.to_string())
            .with_workspace("/work/ws")
            .with_cwd("/work/ws")
            .with_open_world(false),
    )
}

#[test]
fn each_class_is_flagged_and_benign_code_allowed() {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/classes/python");
    let mut failures = Vec::new();
    for class in CLASSES {
        let text = std::fs::read_to_string(dir.join(format!("{class}.py"))).expect("corpus");
        let progs = programs(&text);
        let min = if *class == "benign" {
            MIN_BENIGN
        } else {
            MIN_PER_CLASS
        };
        assert!(
            progs.len() >= min,
            "{class}: {} programs, want {min}",
            progs.len()
        );
        let mut right = 0;
        let mut flagged = 0;
        for p in &progs {
            let r = scan(&scanner, &p.src);
            flagged += usize::from(r.decision != SafetyDecision::Allow);
            let mut why = Vec::new();
            if r.decision != p.expect {
                why.push(format!("decision {:?}, want {:?}", r.decision, p.expect));
            }
            if let Some(w) = &p.want {
                let seen = r.effects.iter().any(|e| e.kind.name() == w)
                    || r.findings.iter().any(|f| &f.rule_id == w);
                if !seen {
                    why.push(format!("no {w}"));
                }
            }
            if let Some(h) = &p.host {
                let listed = r.effects.iter().any(
                    |e| matches!(&e.kind, EffectKind::Network { host: Some(x), .. } if x == h),
                );
                if !listed {
                    why.push(format!("host {h} not listed"));
                }
            }
            if why.is_empty() {
                right += 1;
            } else {
                failures.push(format!(
                    "{class}.py:{}: {}; rules {:?}, effects {:?}",
                    p.line,
                    why.join(", "),
                    r.rule_ids(),
                    r.effects.iter().map(|e| e.kind.name()).collect::<Vec<_>>()
                ));
            }
        }
        eprintln!(
            "{class}: {right}/{} as expected, {flagged}/{} not allowed",
            progs.len(),
            progs.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The Python side of the `uname` decision (`classes_bash.rs`): one field of the kernel's
/// record (`platform.system()`, `.machine()`, `.release()`...), how code picks a build or a code
/// path, is listed as `reads kernel` and not reviewed, as bash's `uname -s`/`-m`/`-r` are; the
/// whole record with the node name (`platform.uname()`, `os.uname()`, `platform.node()`) is
/// reviewed, and so is any field joined with a read the issue names (CPU, memory, processes).
#[test]
fn platform_fields_are_listed_and_the_whole_record_reviewed() {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let scan = |src: &str| scan(&scanner, src);
    for src in [
        "import platform\nif platform.system() == 'Linux':\n    print('ok')\n",
        "import platform as pf\nprint(pf.machine(), pf.release())\n",
        "from platform import architecture\nprint(architecture())\n",
    ] {
        assert_allowed_listing_the_kernel_read(src, &scan(src));
    }
    for src in [
        "import platform\nprint(platform.uname())\n",
        "import os\nprint(os.uname())\n",
        "import platform\nprint(platform.node())\n",
        "import platform, psutil\nprint(platform.system(), psutil.virtual_memory())\n",
    ] {
        let r = scan(src);
        assert_eq!(
            r.decision,
            SafetyDecision::NeedsHumanReview,
            "{src}: {:?}",
            r.rule_ids()
        );
    }
}
