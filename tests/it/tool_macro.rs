//! `#[tool]` end to end: every accepted form compiles, registers through inventory, declares what
//! its attribute says, and its handler adapter deserializes, refuses and converts as promised.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_core::{
    tool, ContextModifier, Json, Modified, Registry, Risk, ScriptLang, ToolContext, ToolOutcome,
    WorkspacePath,
};

/// Add two integers.
///
/// # Arguments
/// * `a` - the first addend
/// * `b` - the second addend
#[tool(risk = "safe", concurrency_safe, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greet someone.
///
/// # Arguments
/// - name: who to greet
/// - shout: upper-case the greeting
#[tool(risk = "safe")]
async fn greet(name: String, shout: Option<bool>) -> String {
    let text = format!("hello, {name}");
    if shout.unwrap_or(false) {
        text.to_uppercase()
    } else {
        text
    }
}

/// A temperature unit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Bounds the result is clamped to.
#[derive(Debug, Deserialize, JsonSchema)]
struct Clamp {
    low: f64,
    high: f64,
}

/// A converted temperature.
#[derive(Debug, Serialize, JsonSchema)]
struct Converted {
    value: f64,
    unit: String,
}

/// Convert a Celsius temperature.
///
/// # Arguments
/// * `celsius` - the temperature in degrees Celsius
/// * `unit` - the unit to convert to
/// * `clamp` - optional bounds for the result
#[tool(risk = "safe", name = "convert-temp", timeout = "2s", open_world)]
fn convert(celsius: f64, unit: Unit, clamp: Option<Clamp>) -> Result<Json<Converted>, String> {
    let value = match unit {
        Unit::Celsius => celsius,
        Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
    };
    let value = match clamp {
        Some(c) if c.low > c.high => return Err("clamp.low is above clamp.high".to_owned()),
        Some(c) => value.clamp(c.low, c.high),
        None => value,
    };
    Ok(Json(Converted {
        value,
        unit: format!("{unit:?}").to_lowercase(),
    }))
}

/// Report the id of the current call.
#[tool(risk = "read_only")]
fn whoami(ctx: &ToolContext) -> String {
    ctx.call_id().to_owned()
}

/// Tag the current session.
///
/// # Arguments
/// * `tag` - the tag
/// * `ctx` - the context is not an argument, but may be documented
#[tool(risk = "read_only")]
async fn session_tag(tag: String, ctx: ToolContext) -> String {
    format!("{}:{tag}", ctx.session_id())
}

/// Remember a value for the rest of the session.
#[tool(idempotent)]
fn remember(key: String, value: String) -> Modified<String> {
    Modified::new(
        format!("remembered {key}"),
        ContextModifier::new().with(format!("memory/{key}"), value),
    )
}

/// Forget a value.
#[tool]
async fn forget(key: String) -> Result<(String, ContextModifier), String> {
    Ok((
        "forgotten".to_owned(),
        ContextModifier::new().with(format!("memory/{key}"), Value::Null),
    ))
}

/// Fail with the given reason.
#[tool(risk = "safe")]
fn fail(reason: String) -> Result<String, String> {
    Err(reason)
}

/// Show the first bytes of a file.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `max_bytes` - read at most this many bytes
#[tool(risk = "read_only", concurrency_safe)]
fn peek(path: WorkspacePath, max_bytes: Option<u32>) -> String {
    format!("{} {max_bytes:?}", path.display())
}

/// Run a shell command.
///
/// # Arguments
/// * `command` - the bash command line
/// * `cwd` - working directory, relative to the workspace
/// * `timeout_secs` - give up after this many seconds
#[tool(
    risk = "dangerous",
    script_args = ["command"],
    script_lang = "bash",
    path_args = ["cwd"],
    timeout = "30s"
)]
fn shell(command: String, cwd: Option<WorkspacePath>, timeout_secs: Option<u64>) -> String {
    format!("{command} in {cwd:?} for {timeout_secs:?}")
}

/// Copy a file.
#[tool(path_args = ["source", "destination"])]
fn copy(source: String, destination: std::path::PathBuf) -> String {
    format!("{source} -> {}", destination.display())
}

fn no_etc(args: &Value) -> Result<(), String> {
    match args.get("target").and_then(Value::as_str) {
        Some(t) if t.starts_with("etc") => Err("etc is off limits".to_owned()),
        _ => Ok(()),
    }
}

/// Touch a target.
#[tool(check_permissions = no_etc)]
fn touch(target: String) -> String {
    target
}

/// Classify a file kind by name (the `file` here is a kind, not a path).
#[tool(risk = "safe", not_paths = ["file"], description = "  Classify a file kind.  ")]
fn classify(file: String) -> &'static str {
    if file.ends_with(".rs") {
        "rust"
    } else {
        "other"
    }
}

/// Tag a text (a parameter named like its function must not shadow it).
#[tool(risk = "safe")]
fn tag(tag: String, r#type: Option<String>) -> String {
    format!("{tag}:{}", r#type.unwrap_or_default())
}

/// Repeat a text.
///
/// # Arguments
/// * `text` - what to repeat
/// * `times` - how often
#[tool(risk = "safe")]
fn repeat(
    #[schemars(length(min = 1, max = 16))] text: String,
    #[schemars(range(min = 1, max = 3))] times: Option<u8>,
) -> String {
    text.repeat(usize::from(times.unwrap_or(1)))
}

mod renamed {
    use tool_core as core_renamed;

    /// Echo the text back.
    #[core_renamed::tool(crate = core_renamed, risk = "safe")]
    pub fn echo(text: String) -> String {
        text
    }
}

fn registry() -> Registry {
    Registry::builder()
        .with_inventory_where(|m| m == "it::tool_macro" || m.starts_with("it::tool_macro::"))
        .build()
        .expect("every declared tool is valid")
}

fn ctx() -> ToolContext {
    ToolContext::new("s1", "c1", std::env::temp_dir())
}

async fn call(name: &str, args: Value) -> Result<ToolOutcome, String> {
    let reg = registry();
    let tool = reg
        .get(name)
        .unwrap_or_else(|| panic!("tool {name} registered"));
    let fut = (tool.def().handler())(ctx(), args).map_err(|e| e.message)?;
    Ok(fut.await)
}

fn ok_output(outcome: ToolOutcome) -> (Value, Option<ContextModifier>) {
    match outcome {
        ToolOutcome::Ok {
            output, modifier, ..
        } => (output, modifier),
        ToolOutcome::Error { message, .. } => panic!("expected ok, got error {message}"),
    }
}

#[test]
fn every_tool_registers_once_under_its_name() {
    let reg = registry();
    let names: Vec<&str> = reg.iter().map(|t| t.decl().name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add",
            "classify",
            "convert-temp",
            "copy",
            "echo",
            "fail",
            "forget",
            "greet",
            "peek",
            "remember",
            "repeat",
            "session_tag",
            "shell",
            "tag",
            "touch",
            "whoami"
        ]
    );
    assert_eq!(
        reg.get("add").expect("add").decl().source,
        "it::tool_macro::add"
    );
    assert_eq!(
        reg.get("echo").expect("echo").decl().source,
        "it::tool_macro::renamed::echo"
    );
}

#[test]
fn schema_is_a_closed_object_with_required_non_options() {
    let reg = registry();
    let add = reg.get("add").expect("add").decl();
    assert_eq!(add.description, "Add two integers.");
    let s = &add.input_schema;
    assert_eq!(s["type"], "object");
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["required"], json!(["a", "b"]));
    assert_eq!(s["properties"]["a"]["type"], "integer");
    assert_eq!(s["properties"]["a"]["description"], "the first addend");
    assert!(
        s.get("title").is_none(),
        "the internal struct name leaks: {s}"
    );

    let greet = reg.get("greet").expect("greet").decl();
    let s = &greet.input_schema;
    assert_eq!(s["required"], json!(["name"]));
    assert_eq!(s["properties"]["name"]["description"], "who to greet");
    assert_eq!(
        s["properties"]["shout"]["description"],
        "upper-case the greeting"
    );
    assert_eq!(s["properties"]["shout"]["type"], json!(["boolean", "null"]));
}

#[test]
fn declarations_follow_the_attribute() {
    let reg = registry();
    let add = reg.get("add").expect("add").decl();
    assert_eq!(add.risk, Risk::Safe);
    assert!(add.concurrency_safe && add.idempotent && !add.open_world);
    assert!(add.read_only() && !add.destructive());
    assert_eq!(add.timeout, None);
    assert_eq!(add.output_schema, None);

    // No risk given: mutation, not concurrency-safe (fail closed).
    let remember = reg.get("remember").expect("remember").decl();
    assert_eq!(remember.risk, Risk::Mutation);
    assert!(!remember.concurrency_safe && remember.idempotent);

    let shell = reg.get("shell").expect("shell").decl();
    assert_eq!(shell.risk, Risk::Dangerous);
    assert!(shell.destructive());
    assert_eq!(shell.script_args, ["command"]);
    assert_eq!(shell.script_lang, Some(ScriptLang::Bash));
    assert_eq!(shell.path_args, ["cwd"]);
    assert_eq!(shell.timeout, Some(Duration::from_secs(30)));
    assert_eq!(shell.input_schema["required"], json!(["command"]));
    assert_eq!(
        shell.input_schema["properties"]["cwd"]["type"],
        json!(["string", "null"])
    );

    let convert = reg.get("convert-temp").expect("convert").decl();
    assert!(convert.open_world);
    assert_eq!(convert.timeout, Some(Duration::from_secs(2)));

    let classify = reg.get("classify").expect("classify").decl();
    assert_eq!(classify.description, "Classify a file kind.");
    assert!(classify.path_args.is_empty());
}

#[test]
fn path_parameters_are_guarded_strings() {
    let reg = registry();
    let peek = reg.get("peek").expect("peek").decl();
    // A `WorkspacePath` parameter is a path argument without being listed.
    assert_eq!(peek.path_args, ["path"]);
    assert_eq!(
        peek.input_schema["properties"]["path"],
        json!({"type": "string", "minLength": 1, "description": "the file, relative to the workspace"})
    );
    assert_eq!(peek.input_schema["required"], json!(["path"]));
    let copy = reg.get("copy").expect("copy").decl();
    assert_eq!(copy.path_args, ["source", "destination"]);
    assert_eq!(
        copy.input_schema["properties"]["destination"]["type"],
        "string"
    );
}

#[test]
fn enum_and_struct_parameters_and_json_output_have_schemas() {
    let reg = registry();
    let convert = reg.get("convert-temp").expect("convert").decl();
    let s = &convert.input_schema;
    assert_eq!(s["required"], json!(["celsius", "unit"]));
    assert_eq!(
        s["properties"]["unit"]["description"],
        "the unit to convert to"
    );
    let text = s.to_string();
    assert!(
        text.contains("celsius") && text.contains("fahrenheit"),
        "{text}"
    );
    assert!(
        text.contains("\"low\"") && text.contains("\"high\""),
        "{text}"
    );
    let out = convert
        .output_schema
        .as_ref()
        .expect("Json<T> adds an output schema");
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["value", "unit"]));
    // The validator accepts what the deserializer accepts.
    let tool = reg.get("convert-temp").expect("convert");
    assert!(tool.validator().is_valid(
        &json!({"celsius": 1.0, "unit": "fahrenheit", "clamp": {"low": 0.0, "high": 10.0}})
    ));
    assert!(!tool
        .validator()
        .is_valid(&json!({"celsius": 1.0, "unit": "kelvin"})));
    assert!(!tool
        .validator()
        .is_valid(&json!({"celsius": 1.0, "unit": "celsius", "extra": 1})));
}

#[tokio::test]
async fn sync_handler_runs_and_converts_its_return() {
    let (out, modifier) = ok_output(call("add", json!({"a": 2, "b": 3})).await.expect("runs"));
    assert_eq!(out, json!(5));
    assert!(modifier.is_none());
}

#[tokio::test]
async fn bad_arguments_are_refused_before_running() {
    let err = call("add", json!({"a": "2", "b": 3}))
        .await
        .expect_err("string is not i64");
    assert!(err.starts_with("invalid arguments"), "{err}");
    let err = call("add", json!({"a": 2, "b": 3, "c": 4}))
        .await
        .expect_err("unknown field");
    assert!(err.contains("unknown field"), "{err}");
    let err = call("add", json!({"a": 2}))
        .await
        .expect_err("missing field");
    assert!(err.contains("missing field"), "{err}");
}

#[tokio::test]
async fn async_handler_with_optional_argument() {
    let (out, _) = ok_output(call("greet", json!({"name": "ada"})).await.expect("runs"));
    assert_eq!(out, json!("hello, ada"));
    let (out, _) = ok_output(
        call("greet", json!({"name": "ada", "shout": true}))
            .await
            .expect("runs"),
    );
    assert_eq!(out, json!("HELLO, ADA"));
}

#[tokio::test]
async fn json_output_and_result_errors() {
    let (out, _) = ok_output(
        call(
            "convert-temp",
            json!({"celsius": 100.0, "unit": "fahrenheit"}),
        )
        .await
        .expect("runs"),
    );
    assert_eq!(out, json!({"value": 212.0, "unit": "fahrenheit"}));
    let outcome = call(
        "convert-temp",
        json!({"celsius": 1.0, "unit": "celsius", "clamp": {"low": 5.0, "high": 0.0}}),
    )
    .await
    .expect("runs");
    assert_eq!(outcome, ToolOutcome::error("clamp.low is above clamp.high"));
    let outcome = call("fail", json!({"reason": "ok"})).await.expect("runs");
    assert_eq!(outcome, ToolOutcome::error("ok"));
}

#[tokio::test]
async fn context_parameters_receive_the_call_context() {
    let (out, _) = ok_output(call("whoami", json!({})).await.expect("runs"));
    assert_eq!(out, json!("c1"));
    let (out, _) = ok_output(
        call("session_tag", json!({"tag": "x"}))
            .await
            .expect("runs"),
    );
    assert_eq!(out, json!("s1:x"));
    let whoami = registry();
    let schema = &whoami.get("whoami").expect("whoami").decl().input_schema;
    assert_eq!(schema["properties"], json!({}));
    assert_eq!(schema["additionalProperties"], false);
}

#[tokio::test]
async fn modifiers_are_returned() {
    let (out, modifier) = ok_output(
        call("remember", json!({"key": "k", "value": "v"}))
            .await
            .expect("runs"),
    );
    assert_eq!(out, json!("remembered k"));
    assert_eq!(
        modifier.expect("a modifier"),
        ContextModifier::new().with("memory/k", "v")
    );
    let (_, modifier) = ok_output(call("forget", json!({"key": "k"})).await.expect("runs"));
    assert_eq!(
        modifier.expect("a modifier").keys().collect::<Vec<_>>(),
        ["memory/k"]
    );
}

#[tokio::test]
async fn unguarded_paths_are_refused() {
    // Only the path guard can provide a `WorkspacePath`; without it the adapter refuses.
    let err = call("peek", json!({"path": "a.txt"}))
        .await
        .expect_err("refused");
    assert!(
        err.contains("`path` was not checked by the workspace guard"),
        "{err}"
    );
    let err = call("copy", json!({"source": "a", "destination": "b"}))
        .await
        .expect_err("refused");
    assert!(err.contains("`source`"), "{err}");
    let err = call("shell", json!({"command": "ls", "cwd": "sub"}))
        .await
        .expect_err("refused");
    assert!(err.contains("`cwd`"), "{err}");
    // An absent optional path needs no guard.
    let (out, _) = ok_output(call("shell", json!({"command": "ls"})).await.expect("runs"));
    assert_eq!(out, json!("ls in None for None"));
}

#[tokio::test]
async fn permission_check_is_attached() {
    let reg = registry();
    let touch = reg.get("touch").expect("touch");
    let check = touch.def().permission_check().expect("declared");
    assert_eq!(
        check(&json!({"target": "etc/passwd"})),
        Err("etc is off limits".to_owned())
    );
    assert_eq!(check(&json!({"target": "notes"})), Ok(()));
    assert!(reg
        .get("add")
        .expect("add")
        .def()
        .permission_check()
        .is_none());
}

#[tokio::test]
async fn renamed_crate_and_not_paths() {
    let (out, _) = ok_output(call("echo", json!({"text": "hi"})).await.expect("runs"));
    assert_eq!(out, json!("hi"));
    let (out, _) = ok_output(
        call("classify", json!({"file": "x.rs"}))
            .await
            .expect("runs"),
    );
    assert_eq!(out, json!("rust"));
}

#[test]
fn parameter_schema_attributes_reach_the_schema() {
    let reg = registry();
    let tool = reg.get("repeat").expect("repeat");
    let props = &tool.decl().input_schema["properties"];
    assert_eq!(props["text"]["maxLength"], 16);
    assert_eq!(props["text"]["description"], "what to repeat");
    assert_eq!(props["times"]["maximum"], 3);
    let v = tool.validator();
    assert!(v.is_valid(&json!({"text": "ab", "times": 3})));
    assert!(v.is_valid(&json!({"text": "ab"})));
    assert!(!v.is_valid(&json!({"text": "ab", "times": 4})));
    assert!(!v.is_valid(&json!({"text": ""})));
    // The attributes are gone from the function itself, which stays callable.
    assert_eq!(repeat("ab".into(), Some(2)), "abab");
}

#[tokio::test]
async fn parameter_names_cannot_shadow_the_function() {
    let (out, _) = ok_output(
        call("tag", json!({"tag": "a", "type": "b"}))
            .await
            .expect("runs"),
    );
    assert_eq!(out, json!("a:b"));
}

#[test]
fn functions_stay_callable() {
    assert_eq!(add(1, 2), 3);
    assert_eq!(renamed::echo("x".into()), "x");
    assert_eq!(whoami(&ctx()), "c1");
}
