//! The effects corpus: risky programs by kind (reading sensitive or outside files, exfiltration,
//! download-then-execute, writes outside the workspace, process control, raw network use,
//! persistence) and benign build, data and test scripts that stay in the workspace, all judged
//! against a workspace root. Figures are printed per category and language.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tool_core::safety::{SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

const WORKSPACE: &str = "/work/project";

/// Share of risky programs not allowed, per language, reached so far: raise it, never lower it.
const RISKY_NOT_ALLOWED_MIN: f64 = 1.0;

fn corpus(file: &str) -> Vec<String> {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/safety/effects")
        .join(file);
    std::fs::read_to_string(p)
        .expect("corpus file")
        .split("\n###")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn request(lang: ScriptLang, script: &str) -> SafetyScanRequest {
    SafetyScanRequest::new("corpus", lang, script)
        .with_workspace(WORKSPACE)
        .with_cwd(WORKSPACE)
        .with_open_world(false)
}

#[derive(Default)]
struct Tally {
    allow: usize,
    review: usize,
    deny: usize,
}

#[test]
fn risky_programs_are_stopped_and_benign_ones_run() {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let mut failures = Vec::new();
    let mut table = String::new();
    for (lang, tag) in [(ScriptLang::Bash, "bash"), (ScriptLang::Python, "python")] {
        let risky = corpus(&format!("risky_{tag}.txt"));
        let benign = corpus(&format!("benign_{tag}.txt"));
        assert!(
            risky.len() >= 35 && benign.len() >= 35,
            "{tag} corpus too small"
        );
        let mut by_cat: BTreeMap<String, Tally> = BTreeMap::new();
        let mut risky_stopped = 0;
        for s in &risky {
            let head = s.lines().next().unwrap_or("");
            let head = head
                .strip_prefix("# fx: ")
                .expect("risky programs start with `# fx:`");
            let (cat, critical) = match head.strip_suffix(" critical") {
                Some(c) => (c.to_owned(), true),
                None => (head.to_owned(), false),
            };
            let r = scanner.scan(&request(lang, s));
            let t = by_cat.entry(cat).or_default();
            match r.decision {
                SafetyDecision::Allow => t.allow += 1,
                SafetyDecision::NeedsHumanReview => t.review += 1,
                SafetyDecision::Deny => t.deny += 1,
            }
            if r.decision != SafetyDecision::Allow {
                risky_stopped += 1;
            }
            if critical && r.decision != SafetyDecision::Deny {
                failures.push(format!(
                    "critical not denied ({tag}): {s:?} -> {} {:?}",
                    r.decision,
                    r.rule_ids()
                ));
            }
        }
        let mut benign_allowed = 0;
        for s in &benign {
            let r = scanner.scan(&request(lang, s));
            match r.decision {
                SafetyDecision::Allow => benign_allowed += 1,
                SafetyDecision::Deny => failures.push(format!(
                    "benign denied ({tag}): {s:?} -> {:?} {:?}",
                    r.rule_ids(),
                    r.effects
                )),
                SafetyDecision::NeedsHumanReview => {
                    table.push_str(&format!(
                        "  benign reviewed ({tag}): {s:?} -> {:?}\n",
                        r.rule_ids()
                    ));
                }
            }
        }
        for (cat, t) in &by_cat {
            table.push_str(&format!(
                "{tag:6} {cat:16} allow {:3} review {:3} deny {:3}\n",
                t.allow, t.review, t.deny
            ));
        }
        let stopped = risky_stopped as f64 / risky.len() as f64;
        let allowed = benign_allowed as f64 / benign.len() as f64;
        table.push_str(&format!(
            "{tag:6} risky not allowed {risky_stopped}/{} ({:.1}%), benign allowed {benign_allowed}/{} ({:.1}%)\n",
            risky.len(),
            stopped * 100.0,
            benign.len(),
            allowed * 100.0
        ));
        if stopped < RISKY_NOT_ALLOWED_MIN {
            failures.push(format!(
                "{tag}: risky not allowed {stopped:.3} < {RISKY_NOT_ALLOWED_MIN}"
            ));
        }
        if allowed < 0.95 {
            failures.push(format!("{tag}: benign allowed {allowed:.3} < 0.95"));
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}\n{table}", failures.join("\n"));
}

#[test]
fn the_report_lists_what_a_script_touches() {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    let r = scanner.scan(&request(
        ScriptLang::Bash,
        "d=/etc\ncd \"$d\"\ncat shadow\n",
    ));
    let json = serde_json::to_value(&r).expect("report serializes");
    let effects = json["effects"].as_array().expect("effects array");
    assert!(
        effects.iter().any(|e| e["kind"] == "file_read"
            && e["target"]["value"] == "/etc/shadow"
            && e["line"] == 3),
        "{effects:?}"
    );
    assert_eq!(r.decision, SafetyDecision::Deny);
}
