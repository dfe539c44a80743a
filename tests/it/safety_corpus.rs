//! False positives on a benign corpus of routine developer scripts, and no misses on a corpus of
//! dangerous ones.

use std::path::{Path, PathBuf};

use tool_core::safety::{SafetyDecision, SafetyPolicy, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/safety/corpus")
}

fn snippets(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(corpus().join(file)).expect("corpus file");
    text.split("\n###")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn scanner() -> Scanner {
    Scanner::new(SafetyPolicy::default()).expect("default policy is valid")
}

#[test]
fn benign_bash_corpus_has_no_false_positives() {
    let scanner = scanner();
    let all = snippets("benign_bash.txt");
    assert!(all.len() >= 60, "corpus too small: {}", all.len());
    let flagged: Vec<String> = all
        .iter()
        .filter_map(|s| {
            let r = scanner.scan(&SafetyScanRequest::new("bash", ScriptLang::Bash, s.clone()));
            (r.decision != SafetyDecision::Allow)
                .then(|| format!("{s:?} -> {} {:?}", r.decision, r.rule_ids()))
        })
        .collect();
    assert!(
        flagged.is_empty(),
        "{} / {} benign bash snippets flagged:\n{}",
        flagged.len(),
        all.len(),
        flagged.join("\n")
    );
}

#[test]
fn benign_python_corpus_has_no_false_positives() {
    let scanner = scanner();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus().join("benign_python"))
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 30, "corpus too small: {}", files.len());
    let flagged: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let src = std::fs::read_to_string(p).expect("python file");
            let r = scanner.scan(&SafetyScanRequest::new("python", ScriptLang::Python, src));
            (r.decision != SafetyDecision::Allow)
                .then(|| format!("{} -> {} {:?}", p.display(), r.decision, r.rule_ids()))
        })
        .collect();
    assert!(
        flagged.is_empty(),
        "{} / {} benign python files flagged:\n{}",
        flagged.len(),
        files.len(),
        flagged.join("\n")
    );
}

#[test]
fn dangerous_bash_corpus_is_never_allowed() {
    let scanner = scanner();
    let missed: Vec<String> = snippets("dangerous_bash.txt")
        .into_iter()
        .filter(|s| {
            scanner
                .scan(&SafetyScanRequest::new("bash", ScriptLang::Bash, s.clone()))
                .decision
                == SafetyDecision::Allow
        })
        .collect();
    assert!(
        missed.is_empty(),
        "dangerous snippets allowed:\n{}",
        missed.join("\n")
    );
}
