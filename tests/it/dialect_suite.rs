//! What we export, we accept, on the JSON Schema Test Suite (Draft 2020-12, vendored under
//! `tests/fixtures/json-schema-test-suite`): every suite schema a tool's arguments can have
//! becomes a tool, either as the arguments object itself (an object schema) or as its one required
//! property `value` (any other schema without references, which would change meaning when
//! nested). Through each dialect export (strict OpenAI, Gemini, Anthropic, MCP):
//!
//! - every suite instance the suite calls valid, in the dialect's form (strict OpenAI: `null` for
//!   each optional property left out), that the exported schema accepts is accepted by an
//!   executor reading that dialect, and reaches the handler as the canonical call's values;
//! - every instance the suite calls invalid is refused in every dialect: mapping back never
//!   widens what the canonical schema accepts.

use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::executor::{Executor, ExecutorConfig};
use tool_core::schema::export::Dialect;
use tool_core::{Registry, Risk, ToolDef};

use crate::dialect_round_trip::{as_handler_sees, dialect_args, export, run};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/json-schema-test-suite/draft2020-12"
);

const DIALECTS: [Dialect; 4] = [
    Dialect::OpenAiStrict,
    Dialect::Gemini,
    Dialect::Anthropic,
    Dialect::Mcp,
];

/// Keys whose meaning depends on where the schema sits in its document.
const PLACED: &[&str] = &[
    "$ref",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$defs",
];

fn has_placed_key(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, c)| PLACED.contains(&k.as_str()) || has_placed_key(c)),
        Value::Array(a) => a.iter().any(has_placed_key),
        _ => false,
    }
}

/// `true` when a property's `default` is refused by that property's own schema. The executor
/// fills defaults in before it validates, so such a tool refuses every call that leaves the
/// property out, where the suite (for which `default` is an annotation) accepts it.
fn has_self_refusing_default(v: &Value) -> bool {
    let Some(Value::Object(props)) = v.get("properties") else {
        return false;
    };
    props.values().any(|p| match p.get("default") {
        Some(d) => !tool_core::schema::compile(p).is_ok_and(|check| check.is_valid(d)),
        None => has_self_refusing_default(p),
    })
}

/// One suite group as a tool: its input schema, and each case as (arguments, the suite's verdict).
struct SuiteTool {
    what: String,
    schema: Value,
    cases: Vec<(Value, bool)>,
}

/// The suite's groups that a tool's arguments can have.
fn suite_tools() -> (Vec<SuiteTool>, usize) {
    let mut files: Vec<_> = std::fs::read_dir(DIR)
        .expect("the vendored suite")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let mut tools = Vec::new();
    let mut groups = 0;
    for file in &files {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(file).expect("readable")).expect("json");
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
        for group in doc.as_array().expect("a list of groups") {
            groups += 1;
            let schema = &group["schema"];
            let cases = group["tests"].as_array().expect("tests");
            let verdicts = cases.iter().map(|c| (&c["data"], c["valid"] == true));
            let what = format!("{stem}: {}", group["description"]);
            if has_self_refusing_default(schema) {
                continue;
            }
            let root_object = schema.get("type") == Some(&json!("object"));
            let tool = if root_object {
                SuiteTool {
                    what,
                    schema: schema.clone(),
                    // Arguments are an object: other instances are no call at all.
                    cases: verdicts
                        .filter(|(d, _)| d.is_object())
                        .map(|(d, v)| (d.clone(), v))
                        .collect(),
                }
            } else if has_placed_key(schema) {
                continue;
            } else {
                SuiteTool {
                    what,
                    schema: json!({
                        "type": "object",
                        "properties": {"value": schema},
                        "required": ["value"],
                        "additionalProperties": false,
                    }),
                    cases: verdicts.map(|(d, v)| (json!({"value": d}), v)).collect(),
                }
            };
            tools.push(tool);
        }
    }
    (tools, groups)
}

#[test]
fn suite_instances_valid_in_each_dialect_export_reach_the_handler_as_their_canonical_values() {
    let (suite, groups) = suite_tools();
    let mut builder = Registry::builder();
    let mut names = Vec::new();
    for (i, t) in suite.iter().enumerate() {
        let name = format!("suite_{i}");
        let def = ToolDef::builder(&name)
            .description(&t.what)
            .input_schema(t.schema.clone())
            .risk(Risk::Safe)
            .handler(|_, args: Value| async move { args })
            .build();
        // A schema the registry refuses is not one a tool can have.
        let Ok(def) = def else { continue };
        if Registry::builder().tool(def.clone()).build().is_err() {
            continue;
        }
        builder = builder.tool(def);
        names.push((name, i));
    }
    let registry = Arc::new(builder.build().expect("the suite registry"));
    let ws = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let canonical =
        Executor::new(registry.clone(), ExecutorConfig::new(ws.path())).expect("executor");
    let mut report = Vec::new();
    for dialect in DIALECTS {
        let exec = Executor::new(
            registry.clone(),
            ExecutorConfig::new(ws.path()).dialect(dialect),
        )
        .expect("executor");
        let (mut tools, mut refused_export, mut accepted, mut outside, mut refused) =
            (0, 0, 0, 0, 0);
        for (name, i) in &names {
            let t = &suite[*i];
            let decl = registry.get(name).expect("registered").decl().clone();
            // An export the dialect refuses (strict mode cannot say it) offers no call to accept.
            let exported = match export(dialect, &decl) {
                Ok(e) => e,
                Err(e) => {
                    if std::env::var_os("SUITE_DEBUG").is_some() {
                        eprintln!("{} {}: {e}", dialect.as_str(), t.what);
                    }
                    refused_export += 1;
                    continue;
                }
            };
            let Ok(validator) = tool_core::schema::compile(&exported) else {
                panic!(
                    "{} {}: the export {exported} does not compile",
                    dialect.as_str(),
                    t.what
                );
            };
            tools += 1;
            for (data, valid) in &t.cases {
                let args = dialect_args(dialect, &decl, data);
                let got = rt.block_on(run(&exec, name, &args));
                if !valid {
                    assert!(
                        got.is_err(),
                        "{} {}: {args} is invalid in the suite but was accepted: {got:?}",
                        dialect.as_str(),
                        t.what
                    );
                    refused += 1;
                    continue;
                }
                if !validator.is_valid(&args) {
                    // The export is narrower here (strict mode closes objects): no model
                    // following it sends this.
                    if std::env::var_os("SUITE_DEBUG").is_some() {
                        eprintln!(
                            "outside {} {}: {args} / {exported}",
                            dialect.as_str(),
                            t.what
                        );
                    }
                    outside += 1;
                    continue;
                }
                let seen = |r: Result<Value, String>| {
                    r.map(|mut v| {
                        as_handler_sees(&decl.input_schema, &decl.input_schema, &mut v);
                        v
                    })
                };
                let want = seen(rt.block_on(run(&canonical, name, data)));
                assert!(want.is_ok(), "{}: canonical {data}: {want:?}", t.what);
                assert_eq!(
                    seen(got),
                    want,
                    "{} {}: {args} against {data}",
                    dialect.as_str(),
                    t.what
                );
                accepted += 1;
            }
        }
        report.push(format!(
            "{}: {tools} tools ({refused_export} exports refused), {accepted} valid instances \
             accepted as canonical, {outside} outside the export, {refused} invalid refused",
            dialect.as_str()
        ));
        // Strict mode and Gemini cannot say an untyped schema, which most suite schemas are.
        let least = match dialect {
            Dialect::OpenAiStrict => [40, 50, 80],
            Dialect::Gemini => [15, 25, 40],
            _ => [140, 250, 220],
        };
        assert!(
            tools >= least[0] && accepted >= least[1] && refused >= least[2],
            "{}",
            report.join("\n")
        );
    }
    eprintln!(
        "{} of {groups} suite groups as tools\n{}",
        names.len(),
        report.join("\n")
    );
}
