//! The scanners never panic or overflow the stack: adversarial nesting, odd bytes, random input.

use proptest::prelude::*;
use tool_core::safety::{SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

fn scan(lang: ScriptLang, s: &str) -> tool_core::safety::SafetyReport {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("scanner");
    scanner.scan(&SafetyScanRequest::new("t", lang, s))
}

fn no_panic(r: &tool_core::safety::SafetyReport) -> bool {
    !r.findings
        .iter()
        .any(|f| f.metadata.get("reason").map(String::as_str) == Some("panic"))
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let n = 20_000;
    let cases = [
        (
            ScriptLang::Bash,
            format!("{}ls{}", "$(".repeat(n), ")".repeat(n)),
        ),
        (
            ScriptLang::Bash,
            format!("{}ls{}", "( ".repeat(n), " )".repeat(n)),
        ),
        (
            ScriptLang::Bash,
            format!(
                "{}true{}",
                "if true; then ".repeat(2000),
                "; fi".repeat(2000)
            ),
        ),
        (
            ScriptLang::Python,
            format!("x = {}1{}", "(".repeat(n), ")".repeat(n)),
        ),
        (
            ScriptLang::Python,
            format!("x = {}1{}", "[".repeat(n), "]".repeat(n)),
        ),
        (ScriptLang::Python, format!("f{}", "(x)".repeat(n))),
    ];
    for (lang, s) in cases {
        let r = scan(lang, &s);
        assert!(no_panic(&r));
        assert_ne!(r.decision, SafetyDecision::Allow, "{lang} nesting allowed");
    }
}

#[test]
fn nested_interpreters_stop_at_the_depth_limit() {
    let mut s = "rm -rf /".to_owned();
    for _ in 0..8 {
        s = format!("bash -c {}", shell_quote(&s));
    }
    let r = scan(ScriptLang::Bash, &s);
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert!(r.rule_ids().contains(&"SCAN-ERROR"), "{:?}", r.rule_ids());
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_bash_never_panics(s in "[ -~\n\t$'\"\\\\()|&;<>{}\u{430}\u{200b}]{0,300}") {
        prop_assert!(no_panic(&scan(ScriptLang::Bash, &s)));
    }

    #[test]
    fn random_python_never_panics(s in "[ -~\n\t\u{430}]{0,300}") {
        prop_assert!(no_panic(&scan(ScriptLang::Python, &s)));
    }
}

/// Inputs the fuzzers found, kept so they stay fixed.
#[test]
fn fuzzer_findings_scan_without_a_panic() {
    // A replacement character right where a URL scheme would end (`is_url` sliced it).
    let bash = b"wget\t\t'\t\t//me\t'\xafT".as_slice();
    let python = b"Q,,[[0[[2(,,\x22\x0a(httpx0[[2(,,\x22\x0a(httpx..\x0a\x0a\x0a(\x22\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xef\xff\xff______2{\xe1,=".as_slice();
    for ((lang, bytes), ws) in [(ScriptLang::Bash, bash), (ScriptLang::Python, python)]
        .into_iter()
        .flat_map(|c| [(c, None), (c, Some("/w/project"))])
    {
        let script = String::from_utf8_lossy(bytes).into_owned();
        let mut req = SafetyScanRequest::new("fuzz", lang, script);
        if let Some(w) = ws {
            req = req.with_workspace(w).with_cwd(w);
        }
        let r = Scanner::new(SafetyPolicy::default())
            .expect("default policy is valid")
            .scan(&req);
        assert!(no_panic(&r), "{:?}", r.findings);
    }
}
