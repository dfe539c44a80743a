//! Provider schema exports: every dialect on a stress set of declarations and on a set shaped like
//! the example tools. Protects the dialect rules (strict objects closed and fully required, Gemini
//! without `$ref`/`additionalProperties`), the explicit errors (tool and JSON path named) and
//! byte-for-byte determinism.

// The argument structs exist for their schemas only.
#![allow(dead_code)]

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_core::__private_0_1_0::{input_schema, output_schema};
use tool_core::schema::export::{self, gemini, mcp, openai, ExportError, ExportOptions, Format};
use tool_core::{Registry, Risk, ScriptLang, ToolDef};

// ---------------------------------------------------------------- stress set

/// A point on the grid.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Point {
    /// Column.
    x: i32,
    /// Row.
    y: i32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NestedArgs {
    /// Where to start.
    origin: Point,
    /// Where to stop, if anywhere.
    target: Option<Point>,
    /// Points on the way.
    waypoints: Vec<Point>,
    /// Optional label.
    label: Option<String>,
}

/// Temperature unit.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// A shape to draw.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Rect { w: f64, h: f64 },
}

/// A number or a text.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum NumOrText {
    Num(i64),
    Text(String),
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EnumArgs {
    unit: Unit,
    fallback_unit: Option<Unit>,
    shape: Shape,
    value: NumOrText,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MapArgs {
    /// Named points.
    named: HashMap<String, Point>,
}

/// A tree node.
#[derive(Deserialize, JsonSchema)]
struct Node {
    label: String,
    children: Vec<Node>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TreeArgs {
    /// The tree to store.
    root: Node,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConstraintArgs {
    /// Bytes to read.
    #[schemars(range(min = 1, max = 65536))]
    max_bytes: u32,
    /// A lowercase name.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z]+$"))]
    name: String,
    /// Where to send the report.
    #[schemars(email)]
    email: Option<String>,
    /// How many times.
    #[serde(default)]
    count: u8,
}

#[derive(Serialize, JsonSchema)]
struct Report {
    lines: Vec<String>,
    total: u64,
}

fn def(name: &str, schema: Value) -> tool_core::registry::ToolDefBuilder {
    ToolDef::builder(name)
        .description(format!("The {name} tool."))
        .input_schema(schema)
        .handler(|_, _| async { "ok" })
}

fn built(b: tool_core::registry::ToolDefBuilder) -> ToolDef {
    b.build().expect("valid declaration")
}

/// A hand-written schema: `$defs` reused twice, `oneOf` with `const`, a type array with `null`.
fn hand_written_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "from": {"$ref": "#/$defs/Ref", "description": "Source revision."},
            "to": {"$ref": "#/$defs/Ref"},
            "mode": {"oneOf": [
                {"const": "fast", "description": "Skip checks."},
                {"const": "safe", "description": "Run every check."}
            ]},
            "note": {"type": ["string", "null"], "maxLength": 200}
        },
        "required": ["from", "to", "mode"],
        "additionalProperties": false,
        "$defs": {"Ref": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"}}
    })
}

fn stress_defs() -> Vec<ToolDef> {
    vec![
        built(def("nested", input_schema::<NestedArgs>()).risk(Risk::Safe)),
        built(def("enums", input_schema::<EnumArgs>()).risk(Risk::Safe)),
        built(def("maps", input_schema::<MapArgs>())),
        built(def("tree", input_schema::<TreeArgs>())),
        built(
            def("constraints", input_schema::<ConstraintArgs>())
                .output_schema(output_schema::<Report>()),
        ),
        built(def("hand_written", hand_written_schema()).idempotent(true)),
        built(
            def(
                "levels",
                json!({
                    "type": "object",
                    "properties": {"level": {"enum": [1, 2, 3], "description": "Log level."}},
                    "required": ["level"],
                    "additionalProperties": false
                }),
            )
            .output_schema(output_schema::<Vec<Point>>()),
        ),
    ]
}

fn registry_of(defs: Vec<ToolDef>) -> Registry {
    defs.into_iter()
        .fold(Registry::builder(), |b, d| b.tool(d))
        .build()
        .expect("registry builds")
}

fn stress() -> Registry {
    registry_of(stress_defs())
}

/// The stress set without the tools some dialects cannot express.
fn stress_without(names: &[&str]) -> Registry {
    registry_of(
        stress_defs()
            .into_iter()
            .filter(|d| !names.contains(&d.decl().name.as_str()))
            .collect(),
    )
}

// ---------------------------------------------------------------- example-like set

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDirArgs {
    /// Directory, relative to the workspace.
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileArgs {
    /// File, relative to the workspace.
    path: String,
    /// Read at most this many bytes.
    #[schemars(range(min = 1, max = 65536))]
    max_bytes: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    /// File, relative to the workspace.
    path: String,
    /// Text to write.
    #[schemars(length(max = 65536))]
    content: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RunBashArgs {
    /// The command line.
    command: String,
    /// Working directory, relative to the workspace.
    cwd: Option<String>,
    /// Seconds before the command is killed.
    #[schemars(range(min = 1, max = 600))]
    timeout_secs: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherArgs {
    /// City name.
    city: String,
    /// Unit of the temperatures.
    unit: Unit,
}

#[derive(Serialize, JsonSchema)]
struct Weather {
    city: String,
    temperature: f64,
    unit: Unit,
}

fn examples() -> Registry {
    registry_of(vec![
        built(
            def("list_dir", input_schema::<ListDirArgs>())
                .risk(Risk::ReadOnly)
                .path_args(["path"])
                .concurrency_safe(true),
        ),
        built(
            def("read_file", input_schema::<ReadFileArgs>())
                .risk(Risk::ReadOnly)
                .path_args(["path"]),
        ),
        built(
            def("write_file", input_schema::<WriteFileArgs>())
                .risk(Risk::Destructive)
                .path_args(["path"]),
        ),
        built(
            def("run_bash", input_schema::<RunBashArgs>())
                .risk(Risk::Dangerous)
                .path_args(["cwd"])
                .script_args(["command"], ScriptLang::Bash),
        ),
        built(
            def("get_weather", input_schema::<WeatherArgs>())
                .risk(Risk::Safe)
                .idempotent(true)
                .open_world(true)
                .output_schema(output_schema::<Weather>()),
        ),
    ])
}

// ---------------------------------------------------------------- helpers

const STRICT: ExportOptions = ExportOptions { strict: true };
const LOOSE: ExportOptions = ExportOptions { strict: false };

/// Call `f` on every schema inside `v` (properties, items, anyOf, $defs, ...), with its path.
fn walk_schemas(v: &Value, path: &str, f: &mut dyn FnMut(&str, &serde_json::Map<String, Value>)) {
    let Value::Object(m) = v else { return };
    f(path, m);
    for key in ["properties", "$defs", "definitions"] {
        if let Some(Value::Object(children)) = m.get(key) {
            for (name, child) in children {
                walk_schemas(child, &format!("{path}/{key}/{name}"), f);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = m.get(key) {
            for (i, alt) in alts.iter().enumerate() {
                walk_schemas(alt, &format!("{path}/{key}/{i}"), f);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get(key) {
            walk_schemas(child, &format!("{path}/{key}"), f);
        }
    }
}

fn is_object_schema(m: &serde_json::Map<String, Value>) -> bool {
    m.get("type") == Some(&json!("object")) || m.contains_key("properties")
}

fn openai_params(registry: &Registry, opts: ExportOptions) -> HashMap<String, Value> {
    let v = export::export_value(registry, Format::OpenAi, opts).expect("openai export");
    v.as_array()
        .expect("array")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert_eq!(t["function"]["strict"], json!(opts.strict));
            (
                t["function"]["name"].as_str().expect("name").to_owned(),
                t["function"]["parameters"].clone(),
            )
        })
        .collect()
}

fn assert_strict_shape(tool: &str, params: &Value) {
    assert!(params.get("$schema").is_none(), "{tool}: $schema kept");
    walk_schemas(params, "", &mut |path, m| {
        assert!(!m.contains_key("oneOf"), "{tool}{path}: oneOf left");
        for k in ["minLength", "maxLength", "default", "allOf"] {
            assert!(!m.contains_key(k), "{tool}{path}: `{k}` left in strict");
        }
        if let Some(f) = m.get("format").and_then(Value::as_str) {
            assert!(
                openai::STRICT_FORMATS.contains(&f),
                "{tool}{path}: format {f}"
            );
        }
        if is_object_schema(m) {
            assert_eq!(
                m.get("additionalProperties"),
                Some(&json!(false)),
                "{tool}{path}: object not closed"
            );
            let props: Vec<&String> = m["properties"].as_object().expect("props").keys().collect();
            let req: Vec<&str> = m["required"]
                .as_array()
                .expect("required")
                .iter()
                .map(|r| r.as_str().expect("str"))
                .collect();
            assert_eq!(props, req, "{tool}{path}: not every property required");
        }
    });
    // The rewritten schema is still a valid JSON Schema.
    tool_core::schema::compile(params).unwrap_or_else(|e| panic!("{tool}: invalid schema: {e}"));
}

fn assert_gemini_shape(tool: &str, params: &Value) {
    walk_schemas(params, "", &mut |path, m| {
        for k in [
            "$ref",
            "$defs",
            "additionalProperties",
            "oneOf",
            "allOf",
            "const",
            "$schema",
        ] {
            assert!(!m.contains_key(k), "{tool}{path}: `{k}` left for Gemini");
        }
        match m.get("type") {
            Some(Value::String(t)) => assert_ne!(t, "null", "{tool}{path}"),
            None => assert!(m.contains_key("anyOf"), "{tool}{path}: untyped"),
            Some(other) => panic!("{tool}{path}: type {other} is not a single string"),
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            assert!(e.iter().all(Value::is_string), "{tool}{path}: enum {e:?}");
            assert_eq!(m.get("type"), Some(&json!("string")), "{tool}{path}");
        }
    });
}

fn gemini_decls(registry: &Registry) -> HashMap<String, Value> {
    let v = export::export_value(registry, Format::Gemini, LOOSE).expect("gemini export");
    v["functionDeclarations"]
        .as_array()
        .expect("array")
        .iter()
        .map(|d| (d["name"].as_str().expect("name").to_owned(), d.clone()))
        .collect()
}

mod canonical_openai;
mod dialects;
mod downgrades;
mod obey;
mod real_world;
pub(crate) mod rules;
