//! The JSON Schema Test Suite's Draft 2020-12 cases for the keywords the built-in checker covers
//! (vendored from the suite, with its license, under `tests/fixtures/json-schema-test-suite`).
//! Each group whose schema the checker compiles must give the suite's verdict on every case, and
//! the general engine's violations; the groups it does not cover use keywords it leaves to the
//! general engine.

use serde_json::Value;
use tool_core::schema::{compare_engines, Agreement, Validator};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/json-schema-test-suite/draft2020-12"
);

#[test]
fn the_suite_cases_for_the_covered_keywords_pass_on_the_built_in_checker() {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .expect("the vendored suite")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let (mut groups, mut covered, mut cases) = (0, 0, 0);
    let mut skipped = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable");
        let doc: Value = serde_json::from_str(&text).expect("json");
        for group in doc.as_array().expect("a list of groups") {
            groups += 1;
            let schema = &group["schema"];
            let name = format!("{}: {}", file.display(), group["description"]);
            if Validator::builtin(schema).is_err() {
                skipped.push(name);
                continue;
            }
            covered += 1;
            for case in group["tests"].as_array().expect("tests") {
                cases += 1;
                let expected = case["valid"].as_bool().expect("valid");
                match compare_engines(schema, &case["data"]) {
                    Ok(Agreement::Same { valid }) => assert_eq!(
                        valid, expected,
                        "{name} / {}: the suite says {expected}",
                        case["description"]
                    ),
                    Ok(Agreement::NotCovered) => unreachable!("compiled above"),
                    Err(e) => panic!("{name} / {}: {e}", case["description"]),
                }
            }
        }
    }
    eprintln!(
        "{covered} of {groups} groups, {cases} cases; not covered: {:#?}",
        skipped
    );
    assert!(
        covered * 10 >= groups * 8,
        "{covered} of {groups} groups covered"
    );
    assert!(cases > 550, "{cases} cases");
}
