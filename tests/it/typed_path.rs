//! The executor's typed path (a `#[tool]`'s arguments read straight into its parameter types)
//! against the general path (parse into JSON, validate against the schema, take apart): for
//! every tool here with a typed entry, generated instances (valid, boundary, near-valid) and
//! hand-written hostile texts give the same result from both, field for field; the typed path is
//! taken for the calls it can take and never where a step needs the JSON arguments.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tool_core::call::{parse_call, ParseLimits};
use tool_core::executor::{CallInput, CallOptions};
use tool_core::{tool, CallResult, Executor, ExecutorConfig, State, ToolContext, WorkspacePath};

use crate::exec_support::module_registry;
use crate::validator_diff::gen::Gen;

/// Every sized integer, a string and a boolean.
#[allow(clippy::too_many_arguments)]
#[tool(risk = "read_only")]
async fn typed_scalars(
    s: String,
    b: bool,
    a: i8,
    c: i16,
    d: i32,
    e: i64,
    f: u8,
    g: u16,
    h: u32,
    i: u64,
    j: usize,
    k: isize,
) -> String {
    format!("{s:?} {b} {a} {c} {d} {e} {f} {g} {h} {i} {j} {k}")
}

/// Optional scalars and an unguarded path.
#[tool(risk = "safe")]
async fn typed_options(
    s: Option<String>,
    b: Option<bool>,
    a: Option<u8>,
    e: Option<i64>,
    p: Option<PathBuf>,
) -> String {
    format!("{s:?} {b:?} {a:?} {e:?} {p:?}")
}

/// Lists of scalars.
#[tool(risk = "read_only")]
async fn typed_lists(v: Vec<String>, w: Vec<u16>, x: Vec<bool>, y: Vec<i32>) -> String {
    format!("{v:?} {w:?} {x:?} {y:?}")
}

/// Guarded paths of every kind, required and optional.
#[tool(
    risk = "read_only",
    path_args = ["as_buf", "as_str", "maybe_buf", "maybe_str"]
)]
async fn typed_paths(
    path: WorkspacePath,
    other: Option<WorkspacePath>,
    as_buf: PathBuf,
    as_str: String,
    maybe_buf: Option<PathBuf>,
    maybe_str: Option<String>,
) -> String {
    format!("{path:?} {other:?} {as_buf:?} {as_str:?} {maybe_buf:?} {maybe_str:?}")
}

/// A sync tool (a confined worker) with a context and a resource.
#[tool(risk = "read_only")]
fn typed_sync(
    ctx: &ToolContext,
    n: u32,
    label: State<Label>,
    path: Option<WorkspacePath>,
) -> String {
    format!("{} {n} {} {path:?}", ctx.call_id().len(), label.0 .0)
}

/// No parameters.
#[tool(risk = "safe")]
fn typed_none() -> String {
    "none".to_owned()
}

/// Needs approval: never typed.
#[tool(risk = "mutation")]
fn typed_mutation(n: u8) -> String {
    n.to_string()
}

/// A float: no typed entry (an integer over 64 bits reads as a float in serde, which the call
/// parser refuses).
#[tool(risk = "safe")]
fn untyped_float(x: f64) -> String {
    x.to_string()
}

/// A declared default: no typed entry.
#[tool(risk = "safe")]
fn untyped_default(#[arg(default = 3)] n: u8) -> String {
    n.to_string()
}

/// A schema attribute: no typed entry.
#[tool(risk = "safe")]
fn untyped_attr(#[schemars(range(max = 3))] n: u8) -> String {
    n.to_string()
}

/// A user type: no typed entry.
#[tool(risk = "safe")]
fn untyped_user(p: Point) -> String {
    format!("{} {}", p.x, p.y)
}

#[derive(Clone)]
struct Label(&'static str);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

const MODULE: &str = module_path!();

fn executor(
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (tempfile::TempDir, Executor) {
    let dir = tempfile::tempdir().expect("tempdir");
    for d in ["docs", "src"] {
        std::fs::create_dir_all(dir.path().join(d)).expect("dir");
    }
    std::fs::write(dir.path().join("docs/a.txt"), "a").expect("file");
    let exec = Executor::new(
        module_registry(MODULE),
        config(
            ExecutorConfig::new(dir.path())
                .error_budget(0)
                .resource(Label("here")),
        ),
    )
    .expect("executor");
    (dir, exec)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// What a result says, without its call id and duration (which differ between two runs).
fn seen(r: &CallResult) -> Value {
    json!({
        "tool": r.tool,
        "status": format!("{:?}", r.status),
        "code": r.code.map(|c| format!("{c:?}")),
        "step": r.step.map(|s| format!("{s:?}")),
        "message": r.message,
        "error_code": r.error_code,
        "violations": r.violations.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "output": r.output,
        "content": format!("{:?}", r.content),
        "modifier": format!("{:?}", r.modifier),
        "truncated": r.truncated,
        "approval": format!("{:?}", r.approval),
        "enforced": r.enforced,
        "call_id_given": r.call_id_given,
    })
}

/// Run `text` as it comes (typed path when it can) and as a parsed call (general path only);
/// panic on any difference. Returns whether the typed path took it and whether it ran.
fn compare(
    rt: &tokio::runtime::Runtime,
    exec: &Executor,
    limits: &ParseLimits,
    text: &str,
) -> (bool, bool) {
    let before = exec.typed_calls();
    let typed = rt.block_on(exec.execute_text(&exec.new_session(), text));
    let took = exec.typed_calls() > before;
    let parsed = parse_call(text, limits);
    let general = rt.block_on(exec.execute(
        &exec.new_session(),
        CallInput::Parsed(parsed),
        CallOptions::default(),
    ));
    assert_eq!(exec.typed_calls(), before + u64::from(took), "{text}");
    assert_eq!(
        seen(&typed),
        seen(&general),
        "the two paths differ on {text}"
    );
    (took, typed.is_ok())
}

/// `v` with every integral float that fits 64 bits as an integer.
fn integral(v: &Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f)
                if n.is_f64()
                    && f.fract() == 0.0
                    && f >= i64::MIN as f64
                    && f < u64::MAX as f64 =>
            {
                if f < 0.0 {
                    json!(f as i64)
                } else {
                    json!(f as u64)
                }
            }
            _ => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(integral).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), integral(v))).collect())
        }
        _ => v.clone(),
    }
}

/// Texts a hostile or careless model sends for `tool`, beside the generated instances.
fn hostile(tool: &str) -> Vec<String> {
    let args = [
        r#"{"n": 2.0}"#,
        r#"{"n": -0}"#,
        r#"{"n": 1e2}"#,
        r#"{"n": 1E0}"#,
        r#"{"n": 18446744073709551616}"#,
        r#"{"n": -9223372036854775809}"#,
        r#"{"n": 4294967296}"#,
        r#"{"n": 3, "n": 4}"#,
        r#"{"n": 3, "extra": 1}"#,
        r#"{"\u006e": 5}"#,
        r#"{"n": null}"#,
        r#"{"n": "5"}"#,
        r#"[5]"#,
        r#"[5, null]"#,
        r#""n""#,
        r#"null"#,
        r#"{}"#,
        r#"{"e": 9223372036854775807, "i": 18446744073709551615, "a": -128, "k": -1}"#,
        r#"{"s": "\ud800"}"#,
        r#"{"s": "a\u0000b", "b": true}"#,
        r#"{"s": "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}"#,
        r#"{"path": ""}"#,
        r#"{"path": "../outside"}"#,
        r#"{"path": "/etc/passwd"}"#,
        r#"{"path": "docs/a.txt", "as_buf": "docs", "as_str": "src/../docs/a.txt"}"#,
        r#"{"path": "docs/a.txt", "as_buf": "docs", "as_str": "x", "maybe_str": ""}"#,
        r#"{"path": "docs/a.txt", "as_buf": "docs", "as_str": "x", "other": null, "maybe_buf": "/tmp"}"#,
        r#"{"path": "docs\u002fa.txt", "as_buf": "docs", "as_str": "x"}"#,
        r#"{"v": [], "w": [65535, 0], "x": [true], "y": [-2147483648]}"#,
        r#"{"v": ["a", 1], "w": [], "x": [], "y": []}"#,
        r#"{"v": [], "w": [65536], "x": [], "y": []}"#,
        r#"{"v": [[]], "w": [], "x": [], "y": []}"#,
        r#"{"n": 7, "label": "x"}"#,
        r#"{"n": 7, "path": "docs"}"#,
        r#"{"n": 7}"#,
    ];
    let mut out: Vec<String> = args
        .iter()
        .map(|a| format!(r#"{{"tool": "{tool}", "args": {a}}}"#))
        .collect();
    out.extend([
        format!(r#"{{"tool": "{tool}", "args": {{}}, "tool": "{tool}"}}"#),
        format!(r#"{{"tool": "{tool}", "args": {{}}, "id": "x"}}"#),
        format!(r#"["{tool}", {{}}]"#),
        format!(r#"  {{"args": {{"n": 1}}, "tool": "{tool}"}}  "#),
        format!(r#"{{"tool": "{tool}", "args": {{"n": 1}}}} trailing"#),
        format!(r#"{{"tool": "{tool}\u0000", "args": {{}}}}"#),
        r#"{"tool": "typed_sc\u0061lars", "args": {}}"#.to_owned(),
        format!(r#"{{"name": "{tool}", "arguments": {{"n": 1}}}}"#),
        format!("```json\n{{\"tool\": \"{tool}\", \"args\": {{}}}}\n```"),
        format!("{tool}(n=1)"),
    ]);
    out
}

#[test]
fn both_paths_agree_on_every_instance_and_hostile_text() {
    let (_dir, exec) = executor(|c| c);
    let limits = ParseLimits::default();
    let rt = runtime();
    let mut typed_tools = 0;
    for tool in module_registry(MODULE).iter() {
        let name = &tool.decl().name;
        let expect_entry = name.starts_with("typed_");
        assert_eq!(tool.def().has_typed_entry(), expect_entry, "{name}");
        if !expect_entry {
            continue;
        }
        typed_tools += 1;
        let schema = &tool.decl().input_schema;
        // Each instance as generated and with its integral numbers written as integers (the
        // generator writes bounds as floats, `-128.0`, which only the general path reads).
        let mut texts: Vec<String> = Gen { root: schema }
            .values(schema, 0, 5_000)
            .iter()
            .flat_map(|args| [args.clone(), integral(args)])
            .map(|args| json!({"tool": name, "args": args}).to_string())
            .collect();
        texts.dedup();
        texts.extend(hostile(name));
        let (mut took, mut ran) = (0, 0);
        for text in &texts {
            let (t, ok) = compare(&rt, &exec, &limits, text);
            took += usize::from(t);
            ran += usize::from(ok);
            // The mutation tool needs approval (none here): never typed.
            assert!(!(t && name == "typed_mutation"), "{text}");
        }
        eprintln!("{name}: {} texts, {took} typed, {ran} ran", texts.len());
        if name != "typed_mutation" {
            assert!(took > 0, "`{name}`: no call took the typed path");
        }
    }
    assert_eq!(typed_tools, 7);
}

#[test]
fn a_valid_call_takes_the_typed_path_with_the_general_answer() {
    let (dir, exec) = executor(|c| c);
    let rt = runtime();
    let text = r#"{"tool": "typed_paths", "args": {"path": "docs/a.txt", "as_buf": "docs", "as_str": "src/../docs/a.txt", "maybe_str": "src"}}"#;
    let (took, ok) = compare(&rt, &exec, &ParseLimits::default(), text);
    assert!(took && ok);
    let r = rt.block_on(exec.execute_text(&exec.new_session(), text));
    let root = dir.path().canonicalize().expect("root");
    let out = r.output.expect("output").to_string();
    assert!(
        out.contains(&root.join("docs/a.txt").display().to_string()),
        "{out}"
    );
    assert!(out.contains("None"), "{out}");
}

#[test]
fn limits_below_the_arguments_leave_the_call_to_the_general_path() {
    for limits in [
        ParseLimits {
            max_string_len: 4,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_depth: 2,
            ..ParseLimits::default()
        },
        ParseLimits {
            max_bytes: 16,
            ..ParseLimits::default()
        },
    ] {
        let (_dir, exec) = executor(|c| c.parse_limits(limits.clone()));
        let rt = runtime();
        for text in [
            r#"{"tool": "typed_options", "args": {"s": "abcdef"}}"#,
            r#"{"tool": "typed_options", "args": {}}"#,
            r#"{"tool": "typed_lists", "args": {"v": ["a"], "w": [], "x": [], "y": []}}"#,
        ] {
            let (took, _) = compare(&rt, &exec, &limits, text);
            assert!(!took, "{limits:?}: {text}");
        }
    }
}

#[test]
fn steps_that_read_the_json_arguments_keep_the_general_path() {
    let text = r#"{"tool": "typed_options", "args": {"a": 1}}"#;
    let configs: [Box<dyn Fn(ExecutorConfig) -> ExecutorConfig>; 5] = [
        Box::new(|c| c.argument_filter(|_, _| Ok(()))),
        Box::new(|c| c.override_arg(Some("typed_options"), "a", json!(2))),
        Box::new(|c| c.default_arg(Some("typed_options"), "b", json!(true))),
        Box::new(|c| c.audit(Arc::new(tool_core::audit::MemoryAuditSink::new()))),
        Box::new(|c| c.dialect(tool_core::call::Dialect::OpenAiStrict)),
    ];
    let rt = runtime();
    for config in configs {
        let (_dir, exec) = executor(config);
        let (took, ok) = compare(&rt, &exec, &ParseLimits::default(), text);
        assert!(!took && ok, "{:?}", exec);
    }
    // And with none of them, the same call is typed.
    let (_dir, exec) = executor(|c| c);
    assert_eq!(
        compare(&rt, &exec, &ParseLimits::default(), text),
        (true, true)
    );
}
