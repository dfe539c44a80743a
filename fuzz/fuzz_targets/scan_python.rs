//! The Python scanner must not panic, overflow the stack or hang on any input.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tool_core::safety::{SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| Scanner::new(SafetyPolicy::default()).expect("default policy is valid"))
}

fuzz_target!(|data: &[u8]| {
    let script = String::from_utf8_lossy(data).into_owned();
    // Odd lengths are judged against a workspace too, so the effect judge runs on every path.
    let odd = data.len() % 2 == 1;
    let mut req = SafetyScanRequest::new("fuzz", ScriptLang::Python, script);
    if odd {
        req = req.with_workspace("/w/project").with_cwd("/w/project/src");
    }
    let report = scanner().scan(&req);
    // A scanner panic is caught and reported; the fuzzer must never see one.
    assert!(!report.findings.iter().any(|f| f.rule_id == "SCAN-ERROR" && f.metadata.get("reason").map(String::as_str) == Some("panic")));
    if report.findings.iter().any(|f| f.decision == SafetyDecision::Deny) {
        assert_eq!(report.decision, SafetyDecision::Deny);
    }
});
