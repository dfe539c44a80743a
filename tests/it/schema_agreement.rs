//! Whatever a tool's schema accepts, its handler receives (issue 16): integers the schema's
//! `integer` takes (`1.0`, `1e2`) deserialize into integer parameters, sized integers state
//! their type's bounds, and length limits count what the schema counts. The property test holds
//! every example tool to it: a value the validator accepts never fails deserialization.

use proptest::prelude::*;
use serde_json::{json, Map, Number, Value};
use tool_core::registry::RegisteredTool;
use tool_core::{tool, Registry, ToolContext};

/// Take sized integers.
///
/// # Arguments
/// * `count` - a u32
/// * `offset` - an i8
/// * `ports` - u16s
/// * `scale` - a float
#[tool(risk = "safe")]
fn sized(count: u32, offset: Option<i8>, ports: Option<Vec<u16>>, scale: Option<f64>) -> String {
    format!("{count} {offset:?} {ports:?} {scale:?}")
}

/// An order.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    Asc,
    Desc,
}

/// Page through results.
///
/// # Arguments
/// * `query` - what to look for
/// * `page` - which page
/// * `order` - the order
/// * `label` - a label
#[tool(risk = "safe")]
fn search(
    query: String,
    #[arg(default = 1)]
    #[schemars(range(min = 1))]
    page: u32,
    #[arg(default = Order::Asc)] order: Order,
    #[arg(default = "all".to_owned())] label: String,
) -> String {
    format!("{query} {page} {order:?} {label}")
}

fn own() -> Registry {
    Registry::builder()
        .with_inventory_where(|m| m == module_path!())
        .build()
        .expect("valid")
}

fn examples() -> Registry {
    tool_examples::registry().expect("valid")
}

fn ctx() -> ToolContext {
    ToolContext::new("s1", "c1", std::env::temp_dir())
}

/// What the executor does with arguments: validate, then hand them to the handler. `None` when
/// the validator refuses; otherwise the handler's refusal, if any. Nothing runs: the handler's
/// future is dropped.
fn accept(tool: &RegisteredTool, args: &Value) -> Option<Result<(), String>> {
    if !tool.validator().is_valid(args) {
        return None;
    }
    // A sync tool's adapter hands its body to the blocking pool: it needs a runtime.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let _guard = rt.enter();
    Some(
        (tool.def().handler())(ctx(), args.clone())
            .map(drop)
            .map_err(|e| e.message),
    )
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).expect("json")
}

async fn output(tool: &RegisteredTool, args: Value) -> Value {
    let fut = (tool.def().handler())(ctx(), args).expect("arguments accepted");
    match fut.await {
        tool_core::ToolOutcome::Ok { output, .. } => output,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_declared_default_is_in_the_schema_and_not_required() {
    let reg = own();
    let s = &reg.get("search").expect("search").decl().input_schema;
    assert_eq!(s["required"], json!(["query"]));
    assert_eq!(s["properties"]["page"]["default"], 1);
    assert_eq!(s["properties"]["page"]["minimum"], 1);
    assert_eq!(s["properties"]["order"]["default"], "asc");
    assert_eq!(s["properties"]["label"]["default"], "all");
}

#[tokio::test]
async fn a_declared_default_reaches_the_handler_when_the_call_leaves_it_out() {
    let reg = own();
    let t = reg.get("search").expect("search");
    let args = json!({"query": "x"});
    assert!(t.validator().is_valid(&args));
    assert_eq!(output(t, args).await, "x 1 Asc all");
    let args = json!({"query": "x", "page": 3, "order": "desc", "label": "new"});
    assert_eq!(output(t, args).await, "x 3 Desc new");
    assert_eq!(accept(t, &json!({"query": "x", "page": 0})), None);
}

#[test]
fn sized_integers_state_their_types_bounds_in_the_schema() {
    let reg = own();
    let props = &reg.get("sized").expect("sized").decl().input_schema["properties"];
    assert_eq!(props["count"]["minimum"], 0);
    assert_eq!(props["count"]["maximum"], u32::MAX);
    assert_eq!(props["offset"]["minimum"], -128);
    assert_eq!(props["offset"]["maximum"], 127);
    assert_eq!(props["ports"]["items"]["maximum"], u16::MAX);
}

#[test]
fn integral_floats_the_schema_accepts_reach_integer_parameters() {
    let reg = own();
    let t = reg.get("sized").expect("sized");
    for text in [
        r#"{"count": 1.0}"#,
        r#"{"count": 1e2, "offset": -3.0}"#,
        r#"{"count": 7, "ports": [80.0, 4.43e2]}"#,
        r#"{"count": 0, "scale": 2}"#,
        r#"{"count": 0, "scale": 2.5}"#,
    ] {
        assert_eq!(accept(t, &parsed(text)), Some(Ok(())), "{text}");
    }
}

#[test]
fn integers_outside_the_type_or_with_a_fraction_are_refused_by_the_validator() {
    let reg = own();
    let t = reg.get("sized").expect("sized");
    for text in [
        r#"{"count": 5000000000}"#,
        r#"{"count": -1}"#,
        r#"{"count": 1.5}"#,
        r#"{"count": 1, "offset": 128}"#,
        r#"{"count": 1, "ports": [65536]}"#,
        r#"{"count": 1e300}"#,
    ] {
        assert_eq!(accept(t, &parsed(text)), None, "{text}");
    }
}

#[test]
fn write_file_counts_characters_as_its_max_length_does() {
    let reg = examples();
    let t = reg.get("write_file").expect("write_file");
    let max = tool_examples::MAX_FILE_CHARS;
    // Two bytes a character: within `maxLength`, twice the character count in bytes.
    let at_limit = json!({"path": "a.txt", "content": "é".repeat(max)});
    let over = json!({"path": "a.txt", "content": "é".repeat(max + 1)});
    let outcome = accept(t, &at_limit).expect("the validator accepts");
    // Deserialization passed; only the path guard, which this test does not run, is missing.
    let err = outcome.expect_err("no guarded path");
    assert!(
        err.contains("was not checked by the workspace guard"),
        "{err}"
    );
    assert_eq!(accept(t, &over), None);
}

/// Values for one property: every JSON kind, with integers at the edges of the sized types,
/// integral floats, and the strings the schemas name (enum values).
fn value(strings: Vec<String>) -> impl Strategy<Value = Value> {
    let edges: Vec<i128> = vec![
        0,
        1,
        -1,
        127,
        128,
        255,
        256,
        65_535,
        65_536,
        i32::MAX as i128,
        u32::MAX as i128 + 1,
        i64::MAX as i128,
        u64::MAX as i128,
        i64::MIN as i128,
    ];
    let leaf = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => prop::sample::select(edges).prop_map(|n| match u64::try_from(n) {
            Ok(u) => Value::Number(Number::from(u)),
            Err(_) => Value::Number(Number::from(n as i64)),
        }),
        1 => (-70_000i64..70_000).prop_map(|n| json!(n)),
        1 => (-70_000i64..70_000).prop_map(|n| json!(n as f64)),
        1 => any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        4 => prop::sample::select(strings).prop_map(Value::String),
        2 => "[a-z./é]{0,12}".prop_map(Value::String),
    ];
    let leaf = leaf.boxed();
    prop_oneof![
        6 => leaf.clone(),
        1 => prop::collection::vec(leaf.clone(), 0..3).prop_map(Value::Array),
        1 => prop::collection::btree_map("[a-z]{1,3}", leaf, 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

/// The strings a schema allows by name: `const` and `enum` values.
fn strings_in(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Array(a) => a.iter().for_each(|v| strings_in(v, out)),
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("const", Value::String(s)) => out.push(s.clone()),
                    ("enum", Value::Array(vs)) => {
                        out.extend(vs.iter().filter_map(Value::as_str).map(str::to_owned))
                    }
                    _ => strings_in(v, out),
                }
            }
        }
        _ => {}
    }
}

/// Arguments for `tool`: each property present or not, with a value from [`value`].
fn arguments(tool: &RegisteredTool) -> impl Strategy<Value = Value> {
    let schema = &tool.decl().input_schema;
    let names: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let props: Vec<_> = names
        .into_iter()
        .map(|name| {
            // The strings the property's own schema names (through a `$ref` too): enum values.
            let prop = &schema["properties"][&name];
            let mut strings = vec!["a.txt".to_owned()];
            strings_in(prop, &mut strings);
            if let Some(target) = prop["$ref"]
                .as_str()
                .and_then(|r| r.strip_prefix("#/$defs/"))
            {
                strings_in(&schema["$defs"][target], &mut strings);
            }
            let required = schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|n| n == name.as_str()));
            let present = if required { 0.95 } else { 0.5 };
            (Just(name), prop::option::weighted(present, value(strings)))
        })
        .collect();
    props.prop_map(|pairs| {
        let map: Map<String, Value> = pairs
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect();
        Value::Object(map)
    })
}

/// The handler's refusals that are not deserialization: the path guard this test leaves out.
fn is_guard_refusal(message: &str) -> bool {
    message.contains("was not checked by the workspace guard")
}

fn check_tool(tool: &RegisteredTool) {
    let name = tool.decl().name.clone();
    // Seeded: the same cases on every run, so the "proves something" check below cannot flake.
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(
        ProptestConfig {
            cases: 400,
            failure_persistence: None,
            ..ProptestConfig::default()
        },
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let accepted = std::cell::Cell::new(0u32);
    let result = runner.run(&arguments(tool), |args| {
        if let Some(outcome) = accept(tool, &args) {
            accepted.set(accepted.get() + 1);
            if let Err(message) = outcome {
                prop_assert!(
                    is_guard_refusal(&message),
                    "`{name}` accepted {args} but its handler refused: {message}"
                );
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        accepted.get() > 0,
        "`{name}`: no generated argument passed the validator; the test proves nothing"
    );
}

#[test]
fn every_value_the_validator_accepts_deserializes_for_every_example_tool() {
    let reg = examples();
    assert!(reg.len() >= 9);
    for tool in reg.iter() {
        check_tool(tool);
    }
    for tool in own().iter() {
        check_tool(tool);
    }
}

/// A dynamic tool reads the JSON itself: it receives what its schema states too (the default of a
/// property the call left out, an integral number as an integer), so `n.as_u64()` works for
/// `1.0` and `page` is there although the model omitted it.
#[tokio::test]
async fn a_builder_tool_receives_its_schema_defaults_and_integers() {
    use tool_core::registry::ToolDef;
    use tool_core::{CallOptions, CallStatus, Executor, ExecutorConfig, Risk, ToolOutcome};
    let def = ToolDef::builder("paged")
        .description("Page through results")
        .risk(Risk::Safe)
        .input_schema(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0},
                "page": {"type": "integer", "default": 3},
                "scale": {"type": "number"}
            },
            "required": ["n"],
            "additionalProperties": false
        }))
        .handler(|_ctx, args: Value| async move {
            let n = args["n"].as_u64().ok_or("n is not an unsigned integer")?;
            let page = args["page"].as_u64().ok_or("page is missing")?;
            Ok::<_, String>(ToolOutcome::ok(
                json!({"n": n, "page": page, "scale": args["scale"]}),
            ))
        })
        .build()
        .expect("valid");
    let reg = std::sync::Arc::new(Registry::builder().tool(def).build().expect("valid"));
    let ws = tempfile::tempdir().expect("tempdir");
    let exec = Executor::new(reg, ExecutorConfig::new(ws.path())).expect("executor");
    let session = exec.new_session();
    for (text, want) in [
        (
            r#"{"tool": "paged", "args": {"n": 1.0}}"#,
            json!({"n": 1, "page": 3, "scale": null}),
        ),
        (
            r#"{"tool": "paged", "args": {"n": 1e2, "page": 2.0, "scale": 2.5}}"#,
            json!({"n": 100, "page": 2, "scale": 2.5}),
        ),
    ] {
        let r = exec.execute(&session, text, CallOptions::default()).await;
        assert_eq!(r.status, CallStatus::Ok, "{text}: {r:?}");
        assert_eq!(r.output, Some(want), "{text}");
    }
    // What the schema refuses still never reaches the handler.
    let r = exec
        .execute(
            &session,
            r#"{"tool": "paged", "args": {"n": 1.5}}"#,
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Refused, "{r:?}");
}
