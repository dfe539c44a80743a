//! The built-in checker against the general engine (issue 29): for every `#[tool]` linked into
//! this binary (the example tools, every test's tools and a corpus covering each constraint
//! the macro accepts), generated instances (valid, boundary, near-valid) get the same verdict
//! and the same violations, message for message, from both; and the JSON Schema Test Suite's
//! Draft 2020-12 cases for the keywords the checker covers pass on it.

mod corpus;
pub(crate) mod gen;
mod suite;

use serde_json::{json, Value};
use tool_core::schema::{compare_compiled, Agreement, Validator};
use tool_core::{Registry, ToolDef};

use gen::Gen;

/// Instances for `schema`, compared on both engines; returns (instances, valid ones).
fn compare_all(name: &str, schema: &Value) -> (usize, usize) {
    let builtin = Validator::builtin(schema)
        .unwrap_or_else(|e| panic!("`{name}`: the built-in checker refuses its schema: {e}"));
    let general = Validator::general(schema).expect("the general engine compiles it");
    let instances = Gen { root: schema }.values(schema, 0, 20_000);
    let mut valid = 0;
    for instance in &instances {
        match compare_compiled(&builtin, &general, schema, instance) {
            Ok(Agreement::Same { valid: true }) => valid += 1,
            Ok(_) => {}
            Err(e) => panic!("`{name}`: the engines disagree: {e}"),
        }
    }
    (instances.len(), valid)
}

#[test]
fn every_tool_schema_gets_the_same_verdicts_and_violations_from_both_engines() {
    // Tool names repeat across test modules: one registry per module.
    let modules = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let _ = Registry::builder().with_inventory_where(|m| {
        modules.borrow_mut().insert(m.to_owned());
        false
    });
    let registries: Vec<Registry> = modules
        .into_inner()
        .into_iter()
        .map(|m| {
            Registry::builder()
                .with_inventory_where(|x| x == m)
                .build()
                .unwrap_or_else(|e| panic!("{m}: {e}"))
        })
        .collect();
    let mut total = 0;
    let mut valid = 0;
    let mut schemas = 0;
    let mut tools = 0;
    let mut uncovered = Vec::new();
    for tool in registries.iter().flat_map(Registry::iter) {
        tools += 1;
        let decl = tool.decl();
        if Validator::builtin(&decl.input_schema).is_err() {
            // Left to the general engine, whole: nothing is checked in part.
            assert_eq!(tool.validator().engine_name(), "general", "{}", decl.name);
            uncovered.push(decl.name.clone());
            continue;
        }
        assert_eq!(
            tool.validator().engine_name(),
            "builtin",
            "`{}`: a `#[tool]` schema is checked by the built-in checker",
            decl.name
        );
        for schema in std::iter::once(decl.input_schema.value()).chain(decl.output_schema.as_ref())
        {
            let (n, ok) = compare_all(&decl.name, schema);
            total += n;
            valid += ok;
            schemas += 1;
        }
    }
    assert!(tools > 80, "{tools} tools");
    // Only hand-written `input_schema`s (from a file or a function) use keywords outside the
    // checker (`$anchor`, `if`/`then`): the general engine checks them.
    assert_eq!(uncovered, ["describe_range", "ignore_range", "reach"]);
    // Both kinds of instance are exercised, in quantity.
    assert!(
        valid > 500 && total - valid > 2_000,
        "{valid} valid of {total}"
    );
    eprintln!("{schemas} schemas, {total} instances, {valid} valid, 0 disagreements");
}

#[test]
fn the_corpus_tools_are_all_checked_by_the_built_in_checker() {
    let registry = Registry::builder()
        .with_inventory_where(|m| m.ends_with("validator_diff::corpus"))
        .build()
        .expect("valid");
    assert_eq!(registry.len(), 5);
    for tool in registry.iter() {
        assert_eq!(
            tool.validator().engine_name(),
            "builtin",
            "{}",
            tool.decl().name
        );
    }
    let nested = registry.get("diff_nested").expect("tool");
    assert_eq!(
        nested.output_validator().map(Validator::engine_name),
        Some("builtin")
    );
    // Constraints of nested types are enforced, not skipped.
    let v = nested.validator();
    let ok = json!({"filter": {"column": "ab", "values": ["x"]}});
    assert!(v.is_valid(&ok));
    for bad in [
        json!({"filter": {"column": "AB", "values": ["x"]}}),
        json!({"filter": {"column": "ab", "values": []}}),
        json!({"filter": {"column": "ab", "values": ["x"], "weight": 0.3}}),
        json!({"filter": {"column": "ab", "values": ["x"], "inner": {"column": "", "values": ["y"]}}}),
        json!({"filter": {"column": "ab", "values": ["x"]}, "tree": {"name": "a", "children": [{"name": 1, "children": []}]}}),
    ] {
        assert!(!v.is_valid(&bad), "{bad}");
    }
}

#[test]
fn a_message_reads_as_before_for_each_keyword() {
    let registry = Registry::builder()
        .with_inventory_where(|m| m.ends_with("validator_diff::corpus"))
        .build()
        .expect("valid");
    let said = |tool: &str, args: Value| -> Vec<String> {
        let t = registry.get(tool).expect("tool");
        let schema = &t.decl().input_schema;
        let general = Validator::general(schema).expect("compiles");
        compare_compiled(t.validator(), &general, schema, &args)
            .unwrap_or_else(|e| panic!("the engines disagree: {e}"));
        tool_core::schema::violations(t.validator(), &args)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        said("diff_numbers", json!({"a": null, "g": -1, "h": 11})),
        [
            r#"at `/a`: null is not of type "integer""#,
            "at `/g`: -1 is less than the minimum of 0",
            "at `/h`: 11 is greater than the maximum of 10",
        ]
    );
    assert_eq!(
        said(
            "diff_nested",
            json!({"filter": {"column": "a", "values": ["x"], "step": 7, "weight": 0.3}})
        ),
        [
            "at `/filter/step`: 7 is not a multiple of 5",
            "at `/filter/weight`: 0.3 is not a multiple of 0.25",
        ]
    );
    assert_eq!(
        said("diff_strings", json!({"name": "abcde", "code": "ab-123"})),
        [
            r#"at `/code`: "ab-123" does not match "^[A-Z]{2}-\d{3}$""#,
            "at `/name`: a string of 5 characters is longer than 4",
        ]
    );
    assert_eq!(
        said("diff_enums", json!({"level": "none", "extra": 1})),
        [
            "at `/`: Additional properties are not allowed ('extra' was unexpected)",
            r#"at `/level`: "none" is not one of "low", "medium", "high", "critical""#,
        ]
    );
    assert_eq!(
        said(
            "diff_enums",
            json!({"level": "low", "either": true, "shape": {"kind": "square"}})
        ),
        [
            "at `/either`: true matches none of the allowed alternatives",
            r#"at `/shape`: {"kind":"square"} matches none of the allowed alternatives"#,
        ]
    );
    assert_eq!(
        said("diff_collections", json!({})),
        [r#"at `/`: "list" is a required property"#]
    );
}

#[test]
fn dynamic_tools_are_checked_by_the_general_engine_compiled_on_first_use() {
    let def = ToolDef::builder("dyn_email")
        .description("x")
        .input_schema(
            json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}),
        )
        .handler(|_ctx, _args| async { "x" })
        .build()
        .expect("valid");
    let registry = Registry::builder().tool(def).build().expect("valid");
    let v = registry.get("dyn_email").expect("tool").validator();
    assert_eq!(v.engine_name(), "general");
    assert!(v.is_valid(&json!({"to": "a@example.com"})));
    assert!(!v.is_valid(&json!({"to": "not an address"})));
}

#[test]
fn a_schema_the_checker_does_not_cover_is_refused_by_it_never_checked_in_part() {
    for schema in [
        json!({"type": "object", "properties": {"to": {"type": "string", "format": "email"}}}),
        json!({"type": "object", "properties": {"p": {"pattern": "^(?=a)"}}}),
        json!({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}),
        json!({"type": "object", "patternProperties": {"^x": {"type": "integer"}}}),
        json!({"type": "object", "unevaluatedProperties": false}),
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s"}}}),
    ] {
        let e = Validator::builtin(&schema).expect_err("not covered");
        assert!(e.contains("not covered by the built-in checker"), "{e}");
    }
}
