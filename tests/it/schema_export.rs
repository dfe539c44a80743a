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

// ---------------------------------------------------------------- canonical

#[test]
fn canonical_is_the_registry_dump_byte_for_byte() {
    for reg in [stress(), examples()] {
        let bytes = export::export(&reg, Format::Canonical, LOOSE).expect("canonical");
        assert_eq!(bytes, reg.canonical_dump());
        let v = export::export_value(&reg, Format::Canonical, LOOSE).expect("value");
        assert_eq!(v["tools"].as_array().expect("tools").len(), reg.len());
    }
}

// ---------------------------------------------------------------- OpenAI

#[test]
fn openai_loose_passes_schemas_through_without_dollar_schema() {
    let reg = stress();
    let params = openai_params(&reg, LOOSE);
    for tool in reg.iter() {
        let mut expected = tool.decl().input_schema.clone();
        expected.as_object_mut().expect("object").remove("$schema");
        assert_eq!(params[&tool.decl().name], expected, "{}", tool.decl().name);
    }
}

#[test]
fn openai_strict_closes_every_object_and_requires_every_property() {
    let reg = stress_without(&["maps"]);
    let params = openai_params(&reg, STRICT);
    assert_eq!(params.len(), reg.len());
    for (tool, p) in &params {
        assert_strict_shape(tool, p);
    }
    let ex = openai_params(&examples(), STRICT);
    for (tool, p) in &ex {
        assert_strict_shape(tool, p);
    }
}

#[test]
fn openai_strict_makes_optional_properties_nullable() {
    let ex = openai_params(&examples(), STRICT);
    let bash = &ex["run_bash"]["properties"];
    assert_eq!(bash["command"]["type"], json!("string"));
    assert_eq!(bash["cwd"]["type"], json!(["string", "null"]));
    assert_eq!(bash["timeout_secs"]["type"], json!(["integer", "null"]));

    let stress = openai_params(&stress_without(&["maps"]), STRICT);
    // Option<Point> was already `anyOf [$ref, null]`: kept, still nullable.
    let target = &stress["nested"]["properties"]["target"];
    let alts = target["anyOf"].as_array().expect("anyOf");
    assert!(alts.contains(&json!({"type": "null"})), "{target}");
    // `#[serde(default)] count: u8` was optional without being nullable.
    assert_eq!(
        stress["constraints"]["properties"]["count"]["type"],
        json!(["integer", "null"])
    );
    // A `$defs` object's optional fields are nullable too (hand-written `note` already was).
    assert_eq!(
        stress["hand_written"]["properties"]["note"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn openai_strict_moves_unsupported_keywords_into_the_description() {
    let ex = openai_params(&examples(), STRICT);
    let max = &ex["read_file"]["properties"]["max_bytes"];
    // minimum/maximum are supported: kept. `format: uint32` is not: noted.
    assert_eq!(max["minimum"], json!(1));
    assert_eq!(max["maximum"], json!(65536));
    assert!(max.get("format").is_none());
    assert_eq!(
        max["description"],
        json!("Read at most this many bytes.\nConstraints: format=\"uint32\".")
    );
    let content = &ex["write_file"]["properties"]["content"];
    assert!(content.get("maxLength").is_none());
    assert!(
        content["description"]
            .as_str()
            .expect("description")
            .ends_with("Constraints: maxLength=65536."),
        "{content}"
    );

    let stress = openai_params(&stress_without(&["maps"]), STRICT);
    let name = &stress["constraints"]["properties"]["name"];
    assert_eq!(name["pattern"], json!("^[a-z]+$"));
    let d = name["description"].as_str().expect("description");
    assert!(
        d.contains("maxLength=64") && d.contains("minLength=1"),
        "{d}"
    );
    let email = &stress["constraints"]["properties"]["email"];
    assert_eq!(email["format"], json!("email"));
    let count = &stress["constraints"]["properties"]["count"];
    assert!(count["description"]
        .as_str()
        .expect("d")
        .contains("default=0"));
}

#[test]
fn openai_strict_rewrites_oneof_and_keeps_refs_and_recursion() {
    let stress = openai_params(&stress_without(&["maps"]), STRICT);
    let enums = &stress["enums"];
    let shape = &enums["$defs"]["Shape"];
    assert!(shape.get("oneOf").is_none());
    assert_eq!(shape["anyOf"].as_array().expect("anyOf").len(), 2);
    // The tagged variants are closed objects whose tag is a const.
    assert_eq!(
        shape["anyOf"][0]["properties"]["kind"]["const"],
        json!("circle")
    );
    // A plain `$ref` stays a `$ref` (strict mode resolves `$defs`) ...
    assert_eq!(
        enums["properties"]["shape"],
        json!({"$ref": "#/$defs/Shape"})
    );
    // ... and recursion stays recursion.
    let node = &stress["tree"]["$defs"]["Node"];
    assert_eq!(
        node["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    // A `$ref` with sibling keywords is inlined one level so the description can stay.
    let from = &stress["hand_written"]["properties"]["from"];
    assert_eq!(from["type"], json!("string"));
    assert_eq!(from["description"], json!("Source revision."));
    assert_eq!(from["pattern"], json!("^[0-9a-f]{7,40}$"));
}

#[test]
fn openai_strict_refuses_a_map_naming_tool_and_path() {
    let err = export::export(&stress(), Format::OpenAi, STRICT).expect_err("maps");
    assert_eq!(err.tool, "maps");
    assert_eq!(err.path, "/properties/named/additionalProperties");
    assert_eq!(err.code(), "schema_not_expressible");
    assert!(err.to_string().contains("map"), "{err}");
    // Loose mode expresses it.
    assert!(export::export(&stress(), Format::OpenAi, LOOSE).is_ok());
}

#[test]
fn strict_arguments_round_trip_through_strip_optional_nulls() {
    let reg = stress();
    let tool = reg.get("constraints").expect("tool");
    let strict = openai::strict_schema(tool.decl()).expect("strict");
    let strict_v = tool_core::schema::compile(&strict).expect("compiles");
    // What a strict model sends: every key, null for the absent optional ones.
    let mut args = json!({"max_bytes": 10, "name": "abc", "email": null, "count": null});
    assert!(tool_core::schema::violations(&strict_v, &args).is_empty());
    // `count` (`#[serde(default)] u8`) does not accept null in the canonical schema ...
    let canonical = tool.validator();
    let errs = tool_core::schema::violations(canonical, &args);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].path, "/count");
    // ... so the null is read as "absent"; `email: Option<String>` keeps its null (= None).
    openai::strip_optional_nulls(&tool.decl().input_schema, &mut args);
    assert_eq!(args, json!({"max_bytes": 10, "name": "abc", "email": null}));
    assert!(tool_core::schema::violations(canonical, &args).is_empty());
    // A null for a required argument is not touched: validation refuses it.
    let mut bad = json!({"max_bytes": null, "name": "abc"});
    openai::strip_optional_nulls(&tool.decl().input_schema, &mut bad);
    assert_eq!(bad["max_bytes"], Value::Null);
}

// ---------------------------------------------------------------- Anthropic

#[test]
fn anthropic_is_name_description_and_input_schema() {
    let reg = stress();
    let v = export::export_value(&reg, Format::Anthropic, LOOSE).expect("anthropic");
    let tools = v.as_array().expect("array");
    assert_eq!(tools.len(), reg.len());
    for (t, tool) in tools.iter().zip(reg.iter()) {
        let mut keys: Vec<&String> = t.as_object().expect("object").keys().collect();
        keys.sort();
        assert_eq!(keys, ["description", "input_schema", "name"]);
        assert_eq!(t["name"], json!(tool.decl().name));
        let mut expected = tool.decl().input_schema.clone();
        expected.as_object_mut().expect("object").remove("$schema");
        assert_eq!(t["input_schema"], expected);
    }
}

// ---------------------------------------------------------------- Gemini

#[test]
fn gemini_inlines_refs_and_uses_nullable() {
    let reg = stress_without(&["maps", "tree", "levels"]);
    let decls = gemini_decls(&reg);
    assert_eq!(decls.len(), reg.len());
    for (tool, d) in &decls {
        assert_gemini_shape(tool, &d["parameters"]);
    }
    let nested = &decls["nested"]["parameters"]["properties"];
    assert_eq!(nested["origin"]["type"], json!("object"));
    assert_eq!(
        nested["origin"]["properties"]["x"]["type"],
        json!("integer")
    );
    assert_eq!(nested["target"]["nullable"], json!(true));
    assert_eq!(nested["target"]["type"], json!("object"));
    assert_eq!(
        nested["label"],
        json!({"type": "string", "nullable": true, "description": "Optional label."})
    );
    assert_eq!(
        nested["waypoints"]["items"]["properties"]["y"]["description"],
        json!("Row.")
    );

    let enums = &decls["enums"]["parameters"]["properties"];
    assert_eq!(enums["unit"]["enum"], json!(["celsius", "fahrenheit"]));
    assert_eq!(enums["fallback_unit"]["nullable"], json!(true));
    // Tagged enum: anyOf of objects whose tag is a one-value string enum.
    assert_eq!(
        enums["shape"]["anyOf"][1]["properties"]["kind"]["enum"],
        json!(["rect"])
    );
    // Untagged enum: anyOf of the two types.
    assert_eq!(enums["value"]["anyOf"][0]["type"], json!("integer"));

    let hand = &decls["hand_written"]["parameters"]["properties"];
    // `$defs` reuse: both uses inlined, the use site's description kept.
    assert_eq!(hand["from"]["pattern"], hand["to"]["pattern"]);
    assert_eq!(hand["from"]["description"], json!("Source revision."));
    assert_eq!(hand["note"]["nullable"], json!(true));
    assert_eq!(hand["mode"]["anyOf"][0]["enum"], json!(["fast"]));
}

#[test]
fn gemini_keeps_supported_constraints_and_notes_the_rest() {
    let decls = gemini_decls(&examples());
    let max = &decls["read_file"]["parameters"]["properties"]["max_bytes"];
    assert_eq!(max["minimum"], json!(1));
    assert_eq!(max["maximum"], json!(65536));
    assert!(max.get("format").is_none());
    assert!(max["description"]
        .as_str()
        .expect("d")
        .contains("format=\"uint32\""));
    let content = &decls["write_file"]["parameters"]["properties"]["content"];
    assert_eq!(content["maxLength"], json!(65536));
    for (tool, d) in &decls {
        assert_gemini_shape(tool, &d["parameters"]);
    }
    let bash = &decls["run_bash"]["parameters"];
    assert_eq!(bash["required"], json!(["command"]));
    assert_eq!(bash["properties"]["cwd"]["nullable"], json!(true));
}

#[test]
fn gemini_omits_parameters_of_a_tool_without_arguments() {
    let reg = registry_of(vec![built(
        ToolDef::builder("ping")
            .description("Check the service is up.")
            .risk(Risk::Safe)
            .handler(|_, _| async { "pong" }),
    )]);
    let decls = gemini_decls(&reg);
    assert_eq!(
        decls["ping"],
        json!({"name": "ping", "description": "Check the service is up."})
    );
}

fn gemini_error(tool: &str) -> ExportError {
    let reg = stress();
    gemini::declaration(reg.get(tool).expect("tool").decl()).expect_err("not expressible")
}

#[test]
fn gemini_refuses_a_non_string_enum_naming_tool_and_path() {
    let e = gemini_error("levels");
    assert_eq!(
        (e.tool.as_str(), e.path.as_str()),
        ("levels", "/properties/level/enum/0")
    );
    assert!(e.reason.contains("not a string"), "{e}");
    assert_eq!(e.format, Format::Gemini);
}

#[test]
fn gemini_refuses_a_recursive_type_naming_tool_and_path() {
    let e = gemini_error("tree");
    assert_eq!(e.tool, "tree");
    assert_eq!(e.path, "/$defs/Node/properties/children/items");
    assert!(
        e.reason.contains("recursive reference `#/$defs/Node`"),
        "{e}"
    );
}

#[test]
fn gemini_refuses_a_map_and_the_whole_export_fails_closed() {
    let e = gemini_error("maps");
    assert_eq!(e.path, "/properties/named/additionalProperties");
    // The first tool in name order that cannot be expressed stops the export: no partial dump.
    let err = export::export(&stress(), Format::Gemini, LOOSE).expect_err("stress set");
    assert!(
        ["levels", "maps", "tree"].contains(&err.tool.as_str()),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("gemini export: tool `"),
        "{err}"
    );
}

// ---------------------------------------------------------------- MCP

#[test]
fn mcp_tools_list_has_annotations_from_declarations() {
    let reg = examples();
    let v = export::export_value(&reg, Format::Mcp, LOOSE).expect("mcp");
    let tools: HashMap<&str, &Value> = v["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| (t["name"].as_str().expect("name"), t))
        .collect();
    let hints = |name: &str| tools[name]["annotations"].clone();
    assert_eq!(
        hints("read_file"),
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        hints("write_file"),
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(hints("run_bash")["destructiveHint"], json!(true));
    assert_eq!(hints("get_weather")["openWorldHint"], json!(true));
    for t in tools.values() {
        let name = t["name"].as_str().expect("name");
        assert_eq!(
            t["inputSchema"],
            reg.get(name).expect("tool").decl().input_schema
        );
        assert_eq!(t["inputSchema"]["type"], json!("object"));
    }
    // Json<Weather> is an object: advertised. No output schema: none.
    assert_eq!(
        tools["get_weather"]["outputSchema"]["type"],
        json!("object")
    );
    assert!(tools["read_file"].get("outputSchema").is_none());
}

#[test]
fn mcp_leaves_out_an_output_schema_whose_root_is_not_an_object() {
    let reg = stress();
    let levels = reg.get("levels").expect("tool").decl();
    assert!(levels.output_schema.is_some());
    assert!(mcp::output_schema(levels).is_none());
    assert!(mcp::tool(levels).get("outputSchema").is_none());
    let constraints = reg.get("constraints").expect("tool").decl();
    assert_eq!(
        mcp::tool(constraints)["outputSchema"],
        output_schema::<Report>()
    );
}

// ---------------------------------------------------------------- determinism

#[test]
fn every_export_is_deterministic() {
    for (reg_a, reg_b) in [(examples(), examples()), (stress(), stress())] {
        for format in Format::ALL {
            for opts in [LOOSE, STRICT] {
                let a = export::export(&reg_a, format, opts);
                let b = export::export(&reg_a, format, opts);
                let c = export::export(&reg_b, format, opts);
                assert_eq!(a, b, "{format} {opts:?}");
                assert_eq!(a, c, "{format} {opts:?}: rebuilt registry differs");
            }
        }
    }
    // Every successful export is valid JSON ending in one newline.
    for format in Format::ALL {
        let bytes = export::export(&examples(), format, STRICT).expect("examples export");
        assert!(bytes.ends_with(b"}\n") || bytes.ends_with(b"]\n"));
        serde_json::from_slice::<Value>(&bytes).expect("valid JSON");
    }
}

// ---------------------------------------------------------------- CLI

#[test]
fn cli_dump_writes_each_format_and_fails_on_inexpressible_schemas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let reg = examples();
    for (name, format) in [
        ("canonical", Format::Canonical),
        ("openai", Format::OpenAi),
        ("anthropic", Format::Anthropic),
        ("gemini", Format::Gemini),
        ("mcp", Format::Mcp),
    ] {
        let out = dir.path().join(format!("{name}.json"));
        let out_s = out.to_str().expect("utf8 path");
        let code =
            tool_core::cli::run_with(&reg, ["prog", "dump", "--format", name, "--out", out_s]);
        assert_eq!(code, std::process::ExitCode::SUCCESS, "{name}");
        let written = std::fs::read(&out).expect("written");
        assert_eq!(
            written,
            export::export(&reg, format, LOOSE).expect("export")
        );
    }
    let out = dir.path().join("strict.json");
    let out_s = out.to_str().expect("utf8 path");
    let code = tool_core::cli::run_with(
        &reg,
        [
            "prog", "dump", "--format", "openai", "--strict", "--out", out_s,
        ],
    );
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    assert_eq!(
        std::fs::read(&out).expect("written"),
        export::export(&reg, Format::OpenAi, STRICT).expect("export")
    );

    let bad = dir.path().join("gemini-stress.json");
    let bad_s = bad.to_str().expect("utf8 path");
    let code = tool_core::cli::run_with(
        &stress(),
        ["prog", "dump", "--format", "gemini", "--out", bad_s],
    );
    assert_eq!(code, std::process::ExitCode::from(1));
    assert!(!bad.exists(), "no partial dump is written");
    let code = tool_core::cli::run_with(&reg, ["prog", "dump", "--format", "gemini", "--strict"]);
    assert_eq!(
        code,
        std::process::ExitCode::from(1),
        "--strict is for openai only"
    );
}

// ---------------------------------------------------------------- golden files

/// Rewrites the golden files instead of comparing when set to `1`.
const GOLDEN_UPDATE_ENV: &str = "EXPORT_GOLDEN_UPDATE";

/// The example-like set in every dialect, committed under `tests/fixtures/export/` so a review
/// sees exactly what each provider receives; any change to an export shows up as a diff there.
#[test]
fn example_exports_match_the_golden_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/export");
    let reg = examples();
    let update = std::env::var(GOLDEN_UPDATE_ENV).is_ok_and(|v| v == "1");
    let mut cases: Vec<(String, Vec<u8>)> = Format::ALL
        .into_iter()
        .map(|f| {
            let bytes = export::export(&reg, f, LOOSE).expect("examples export");
            (format!("examples.{f}.json"), bytes)
        })
        .collect();
    cases.push((
        "examples.openai-strict.json".to_owned(),
        export::export(&reg, Format::OpenAi, STRICT).expect("strict export"),
    ));
    for (file, bytes) in cases {
        let path = dir.join(&file);
        if update {
            std::fs::create_dir_all(&dir).expect("fixture dir");
            std::fs::write(&path, &bytes).expect("write golden file");
            continue;
        }
        let golden = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{file}: {e}; create it with {GOLDEN_UPDATE_ENV}=1"));
        assert!(
            golden == bytes,
            "{file} differs from the export; if intended, re-run with {GOLDEN_UPDATE_ENV}=1\n{}",
            String::from_utf8_lossy(&bytes)
        );
    }
}
