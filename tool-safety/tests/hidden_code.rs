//! Code the scan cannot see beside what it can: the `DYNAMIC-EXEC` finding stays next to the
//! built-in rule that fired at the same place (`BASH-INDIRECT-EXEC`, `BASH-EVAL`, `PY-EVAL`), and
//! is denied as `DYNAMIC-EXEC-SENSITIVE` where any other finding of the script, a built-in rule's
//! included, asks for review.
//!
//! Regression: a `BASH-INDIRECT-EXEC` at the place of a `DYNAMIC-EXEC` covered it, and the deny
//! upgrade looked only at judged effects, so `bash -c "$x"; history -c` was only reviewed.

use tool_safety::{
    EffectKind, SafetyDecision, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner, ScriptLang,
};

fn scan(lang: ScriptLang, src: &str) -> SafetyReport {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    scanner.scan(&SafetyScanRequest::new("hidden", lang, src))
}

fn rules(r: &SafetyReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

/// The verdict of the script's dynamic-execution effects.
fn dynamic_verdicts(r: &SafetyReport) -> Vec<(Option<&str>, SafetyDecision)> {
    r.effects
        .iter()
        .filter(|e| matches!(e.kind, EffectKind::DynamicExec { .. }))
        .map(|e| (e.rule_id.as_deref(), e.verdict))
        .collect()
}

#[test]
fn hidden_code_beside_a_sensitive_built_in_finding_is_denied() {
    for (lang, src, other) in [
        (
            ScriptLang::Bash,
            "bash -c \"$x\"; history -c",
            "BASH-HISTORY",
        ),
        (
            ScriptLang::Bash,
            "c=$(cat cmd.txt); $c foo; sudo ls",
            "BASH-SUDO",
        ),
        (
            ScriptLang::Bash,
            "eval \"$y\"\nsudo systemctl restart nginx",
            "BASH-SUDO",
        ),
        (
            ScriptLang::Python,
            "import os\nexec(os.environ['X'])\nos.system('sudo reboot')",
            "BASH-SUDO",
        ),
    ] {
        let r = scan(lang, src);
        let ids = rules(&r);
        assert_eq!(r.decision, SafetyDecision::Deny, "{src}: {ids:?}");
        assert!(ids.contains(&"DYNAMIC-EXEC-SENSITIVE"), "{src}: {ids:?}");
        assert!(ids.contains(&other), "{src}: {ids:?}");
        // The built-in rule of the same place is kept beside it.
        assert!(
            ids.iter()
                .any(|i| matches!(*i, "BASH-INDIRECT-EXEC" | "BASH-EVAL" | "PY-EVAL")),
            "{src}: {ids:?}"
        );
        assert_eq!(
            dynamic_verdicts(&r),
            [(Some("DYNAMIC-EXEC-SENSITIVE"), SafetyDecision::Deny)],
            "{src}"
        );
    }
}

#[test]
fn hidden_code_alone_is_reviewed_with_both_findings() {
    // The built-in rule at the hidden code's own place speaks of that code: no upgrade.
    for (lang, src, builtin) in [
        (ScriptLang::Bash, "bash -c \"$x\"", "BASH-INDIRECT-EXEC"),
        (ScriptLang::Bash, "eval \"$y\"; $z", "BASH-EVAL"),
        (ScriptLang::Python, "code = input()\nexec(code)", "PY-EVAL"),
    ] {
        let r = scan(lang, src);
        let ids = rules(&r);
        assert_eq!(
            r.decision,
            SafetyDecision::NeedsHumanReview,
            "{src}: {ids:?}"
        );
        assert!(ids.contains(&"DYNAMIC-EXEC"), "{src}: {ids:?}");
        assert!(ids.contains(&builtin), "{src}: {ids:?}");
        assert!(!ids.contains(&"DYNAMIC-EXEC-SENSITIVE"), "{src}: {ids:?}");
    }
}
