//! Per-rule fixtures (semgrep/ruff style): every `bad*` file fires its rule with the rule's
//! default decision, every `ok*` file is allowed and does not fire it.

use std::path::{Path, PathBuf};

use tool_core::safety::{builtin_rules, SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/safety")
}

fn scanner() -> Scanner {
    Scanner::new(SafetyPolicy::default()).expect("default policy is valid")
}

#[test]
fn fixtures_fire_their_rule_and_benign_twins_are_allowed() {
    let scanner = scanner();
    let mut failures = Vec::new();
    let mut cases = 0;
    for (dir, lang) in [("bash", ScriptLang::Bash), ("python", ScriptLang::Python)] {
        let mut rules: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("fixture dir")
            .map(|e| e.expect("entry").path())
            .collect();
        rules.sort();
        for rule_dir in rules {
            let rule = rule_dir
                .file_name()
                .and_then(|n| n.to_str())
                .expect("utf-8 name")
                .to_owned();
            let info = builtin_rules()
                .iter()
                .find(|r| r.id == rule)
                .unwrap_or_else(|| panic!("unknown rule dir {rule}"));
            let mut files: Vec<PathBuf> = std::fs::read_dir(&rule_dir)
                .expect("rule dir")
                .map(|e| e.expect("entry").path())
                .collect();
            files.sort();
            for file in files {
                cases += 1;
                let name = file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .expect("utf-8 name")
                    .to_owned();
                let script = std::fs::read_to_string(&file).expect("fixture text");
                // A first line `# expect: RULE` names a rule of the other language (a Python
                // shell string is scanned by the bash rules).
                let rule = script
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("# expect: "))
                    .unwrap_or(&rule)
                    .trim()
                    .to_owned();
                let info = builtin_rules()
                    .iter()
                    .find(|r| r.id == rule)
                    .unwrap_or(info);
                let report = scanner.scan(&SafetyScanRequest::new("fixture", lang, script));
                let ids = report.rule_ids().join(",");
                if name.starts_with("bad") {
                    let hit = report.findings.iter().find(|f| f.rule_id == rule);
                    match hit {
                        Some(f)
                            if f.decision == info.decision && report.decision >= info.decision => {}
                        Some(f) => failures.push(format!(
                            "{rule}/{name}: decision {} (report {}), want {}",
                            f.decision, report.decision, info.decision
                        )),
                        None => {
                            failures.push(format!("{rule}/{name}: rule did not fire; got [{ids}]"))
                        }
                    }
                } else if report.decision != SafetyDecision::Allow
                    || report.findings.iter().any(|f| f.rule_id == rule)
                {
                    failures.push(format!(
                        "{rule}/{name}: benign twin got {} [{ids}]",
                        report.decision
                    ));
                }
            }
        }
    }
    assert!(cases > 80, "fixtures missing: only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} fixture failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_script_rule_has_a_bad_and_an_ok_fixture() {
    let mut missing = Vec::new();
    for r in builtin_rules() {
        if r.id.starts_with("SCAN-") || r.id.starts_with("REQ-") {
            continue; // request and scanner rules are covered by safety_policy.rs
        }
        let dir = if r.id.starts_with("PY-") {
            "python"
        } else {
            "bash"
        };
        let ext = if dir == "python" { "py" } else { "sh" };
        for kind in ["bad", "ok"] {
            if !root()
                .join(dir)
                .join(r.id)
                .join(format!("{kind}.{ext}"))
                .is_file()
            {
                missing.push(format!("{}/{kind}.{ext}", r.id));
            }
        }
    }
    assert!(missing.is_empty(), "missing fixtures: {missing:?}");
}
