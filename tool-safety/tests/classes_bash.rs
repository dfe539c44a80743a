//! Per-class corpora of bash the scanner must see through (obfuscated effects, network, process
//! control, host information, allocation, nested interpreters) and a benign corpus of developer
//! tooling that must stay allowed. Each test prints its class's figure.

mod common;

use std::path::{Path, PathBuf};

use common::assert_allowed_listing_the_kernel_read;
use tool_safety::{
    EffectKind, SafetyDecision, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner, ScriptLang,
};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/classes/bash")
}

/// The snippets of `file`, separated by `###` lines, without their comment lines.
fn snippets(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir().join(file)).expect("corpus file");
    text.split("\n###")
        .map(|s| {
            s.lines()
                .filter(|l| !l.trim_start().starts_with("# "))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_owned()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

fn scan(src: &str, open_world: bool) -> SafetyReport {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let req = SafetyScanRequest::new("classes", ScriptLang::Bash, src).with_open_world(open_world);
    scanner.scan(&req)
}

/// Scan every snippet of `file` as an open-world call; fail listing those `ok` rejects.
fn class(file: &str, min: usize, ok: impl Fn(&SafetyReport) -> bool) {
    class_in(file, min, true, ok);
}

/// [`class`] for a call not declared `open_world` (the conservative default of `scan`).
fn class_closed(file: &str, min: usize, ok: impl Fn(&SafetyReport) -> bool) {
    class_in(file, min, false, ok);
}

fn class_in(file: &str, min: usize, open_world: bool, ok: impl Fn(&SafetyReport) -> bool) {
    let all = snippets(file);
    assert!(all.len() >= min, "{file}: corpus too small: {}", all.len());
    let missed: Vec<String> = all
        .iter()
        .filter_map(|s| {
            let r = scan(s, open_world);
            (!ok(&r)).then(|| format!("{s:?} -> {} {:?}", r.decision, r.rule_ids()))
        })
        .collect();
    println!(
        "{file}: {}/{} as expected",
        all.len() - missed.len(),
        all.len()
    );
    assert!(
        missed.is_empty(),
        "{file}: {} / {} not as expected:\n{}",
        missed.len(),
        all.len(),
        missed.join("\n")
    );
}

fn has(r: &SafetyReport, prefix: &str) -> bool {
    r.rule_ids().iter().any(|id| id.starts_with(prefix))
}

/// A DYNAMIC-EXEC finding, or a dynamic-execution effect a stricter built-in rule spoke for.
fn dynamic(r: &SafetyReport) -> bool {
    has(r, "DYNAMIC-EXEC")
        || r.effects
            .iter()
            .any(|e| matches!(e.kind, EffectKind::DynamicExec { .. }))
}

#[test]
fn obfuscated_chmod_is_denied_or_flagged_dynamic() {
    class("obfuscated_chmod.sh", 20, |r| {
        r.decision == SafetyDecision::Deny || dynamic(r)
    });
}

#[test]
fn network_is_reviewed_with_its_host() {
    class_closed("network.sh", 8, |r| {
        let host = r
            .effects
            .iter()
            .any(|e| matches!(&e.kind, EffectKind::Network { host: Some(h), .. } if !h.is_empty()));
        r.decision != SafetyDecision::Allow && host
    });
}

#[test]
fn process_kill_is_not_allowed() {
    class("process_kill.sh", 8, |r| {
        r.decision != SafetyDecision::Allow && has(r, "EFFECT-KILL")
    });
}

#[test]
fn host_info_is_reviewed() {
    class("host_info.sh", 8, |r| {
        r.decision != SafetyDecision::Allow && has(r, "HOST-INFO")
    });
}

/// Decision on `uname` (issue 25: "host information reads (process lists, CPU/memory/network
/// interfaces, `ifconfig`, `ps`, `netstat`) as review"): `uname` in any form, `-a` included,
/// prints the kernel's name, release, version and machine and the node name, which is what
/// configure scripts, `config.guess` and Makefiles read to pick a build; the benign corpus has
/// `uname -a > out/platform.txt`. It names none of the issue's classes, so it is listed as an
/// effect (`reads kernel`) and not reviewed, like `ps … | grep NAME`. Joined with any read the
/// issue names (a process list, CPU, memory, network interfaces, `hostname -I`), the script is
/// reviewed for that read.
#[test]
fn uname_is_listed_not_reviewed_and_the_named_reads_are() {
    for src in [
        "uname -a",
        "uname -s > build/platform.txt",
        "uname -m && uname -r",
    ] {
        assert_allowed_listing_the_kernel_read(src, &scan(src, false));
    }
    for src in [
        "uname -a; ps aux",
        "uname -a && lscpu",
        "uname -a; free -m",
        "uname -a; ip addr",
        "hostname -I",
        "uname -n; netstat -an",
    ] {
        let r = scan(src, false);
        assert!(
            r.decision != SafetyDecision::Allow && has(&r, "HOST-INFO"),
            "{src}: {} {:?}",
            r.decision,
            r.rule_ids()
        );
    }
}

#[test]
fn allocation_is_reviewed_with_its_size() {
    class("allocation.sh", 6, |r| {
        r.decision != SafetyDecision::Allow
            && r.findings
                .iter()
                .any(|f| f.rule_id == "ALLOC-LARGE" && f.metadata.contains_key("size"))
    });
}

#[test]
fn nested_interpreters_are_not_allowed() {
    class("nested_interpreters.sh", 8, |r| {
        r.decision != SafetyDecision::Allow
    });
}

#[test]
fn benign_tooling_stays_allowed() {
    class("benign.sh", 25, |r| r.decision == SafetyDecision::Allow);
    // Not declared open_world: the same scripts, none of which touches the network.
    class_closed("benign.sh", 25, |r| r.decision == SafetyDecision::Allow);
}

/// Found by the `scan_bash` fuzz target: an `xargs` option whose second character is not ASCII
/// (`xargs -\u{FFFD}…`) sliced the word inside a character and panicked (the scanner catches the panic
/// and reports `SCAN-ERROR`, which this test looks for). It is now an unknown option like any other, and the command after it is still
/// judged; the joined `-I{}` form still reads its value.
#[test]
fn an_xargs_option_with_a_multibyte_character_is_scanned_not_a_panic() {
    for src in [
        "find . | xargs -\u{FFFD}n1 rm",
        "ls | xargs -\u{e9} rm",
        "$(firlsrc | xargs -\u{8e}\u{8e}n1 ehxo\not/x\n",
    ] {
        let r = scan(src, false);
        assert!(
            !r.findings.iter().any(|f| f.rule_id == "SCAN-ERROR"),
            "{src}: {:?}",
            r.findings
        );
    }
    let r = scan("find . -name '*.tmp' | xargs -I{} rm {}", false);
    assert!(
        r.effects.iter().any(|e| e.kind.name() == "file_delete"),
        "{:?}",
        r.effects.iter().map(|e| e.kind.name()).collect::<Vec<_>>()
    );
}
