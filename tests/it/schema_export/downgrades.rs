//! Downgrades of third-party schemas, the map back of answers, the fixed bugs
//! (`strip_optional_nulls` in alternatives, `$ref` outside `$defs`, Gemini `required`), and
//! `dump --from`.

use super::*;
use tool_core::schema::export::convert::convert;
use tool_core::schema::export::DowngradeKind;

fn kinds(c: &export::convert::Conversion) -> Vec<(String, DowngradeKind)> {
    c.downgrades
        .iter()
        .map(|d| (d.out_path.clone(), d.kind))
        .collect()
}

#[test]
fn strip_optional_nulls_looks_inside_one_of_and_any_of_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number"},
                  "label": {"type": "string"}}, "required": ["kind", "radius"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "rect"}, "w": {"type": "number"},
                  "label": {"type": "string"}}, "required": ["kind", "w"], "additionalProperties": false}
            ]},
            "list": {"type": "array", "items": {"anyOf": [
                {"$ref": "#/$defs/Note"}, {"type": "string"}
            ]}}
        },
        "required": ["shape"],
        "$defs": {"Note": {"type": "object", "properties": {"text": {"type": "string"}, "tag": {"type": "string"}},
                  "required": ["text"], "additionalProperties": false}}
    });
    let validator = tool_core::schema::compile(&schema).expect("compiles");
    // What a strict model sends: every optional field present, as null.
    let mut args = json!({
        "shape": {"kind": "rect", "w": 2, "label": null},
        "list": [{"text": "a", "tag": null}, "plain"]
    });
    assert!(!validator.is_valid(&args));
    openai::strip_optional_nulls(&schema, &mut args);
    assert_eq!(
        args,
        json!({"shape": {"kind": "rect", "w": 2}, "list": [{"text": "a"}, "plain"]})
    );
    assert!(validator.is_valid(&args));
    // A null where the branch requires a value stays, and is refused.
    let mut bad = json!({"shape": {"kind": "rect", "w": null}});
    openai::strip_optional_nulls(&schema, &mut bad);
    assert!(!validator.is_valid(&bad));
}

#[test]
fn refs_outside_defs_are_moved_into_defs_and_never_dangle() {
    let schema = json!({
        "type": "object",
        "properties": {
            "from": {"type": "object", "properties": {"profile": {"type": "string"}}, "required": ["profile"]},
            "to": {"$ref": "#/properties/from"},
            "when": {"$ref": "#/definitions/When"}
        },
        "required": ["from", "to", "when"],
        "definitions": {"When": {"type": "string", "format": "date-time"}}
    });
    // The registry's own strict export and the conversion alike.
    let reg = registry_of(vec![built(def("copy", schema.clone()))]);
    let strict = openai::strict_schema(reg.get("copy").expect("tool").decl()).expect("strict");
    let converted = convert("copy", "d", &schema, Format::OpenAi, STRICT).expect("converts");
    for s in [&strict, &converted.parameters] {
        assert!(s.get("definitions").is_none(), "{s}");
        let p = &s["properties"];
        assert_eq!(p["when"], json!({"$ref": "#/$defs/When"}));
        assert_eq!(p["to"], json!({"$ref": "#/$defs/properties_from"}));
        assert_eq!(s["$defs"]["When"]["format"], json!("date-time"));
        assert_eq!(
            s["$defs"]["properties_from"]["required"],
            json!(["profile"])
        );
        assert_strict_shape("copy", s);
    }
    assert!(kinds(&converted)
        .iter()
        .any(|(p, k)| p == "/properties/to" && *k == DowngradeKind::RefMoved));
}

#[test]
fn gemini_required_only_on_objects_and_only_known_names() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "required": ["x"]},
            "tags": {"type": "array", "items": {"type": "string"}, "required": ["y"]}
        },
        "required": ["name", "ghost"]
    });
    let reg = registry_of(vec![built(def("g", schema.clone()))]);
    let p = gemini::parameters(reg.get("g").expect("tool").decl()).expect("gemini");
    assert!(p["properties"]["name"].get("required").is_none(), "{p}");
    assert!(p["properties"]["tags"].get("required").is_none(), "{p}");
    assert_eq!(p["required"], json!(["name"]));
    // The unknown name is not dropped silently: the description says it.
    assert!(p["description"]
        .as_str()
        .expect("noted")
        .contains("required=[\"ghost\"]"));
    // Converted: the unknown name becomes an any-JSON property the model must send.
    let c = convert("g", "d", &schema, Format::Gemini, LOOSE).expect("converts");
    assert_eq!(c.parameters["required"], json!(["name", "ghost"]));
    assert_eq!(c.parameters["properties"]["ghost"]["type"], json!("string"));
    let back = c.map_back(&json!({"name": "n", "ghost": "{\"a\": 1}"}));
    assert_eq!(back, json!({"name": "n", "ghost": {"a": 1}}));
}

#[test]
fn free_form_untyped_and_item_less_values_travel_as_json_text_and_come_back() {
    let schema = json!({
        "type": "object",
        "properties": {
            "body": {"description": "Any JSON"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "filter": {"type": "object"},
            "args": {"type": "array"},
            "env": {"type": "object", "patternProperties": {"^[A-Z_]+$": {"type": "string"}},
                    "additionalProperties": false},
            "tags": {"properties": {"owner": {"type": "string"}}, "required": ["owner"]}
        },
        "required": ["body"]
    });
    let c = convert("req", "d", &schema, Format::OpenAi, STRICT).expect("converts");
    assert_strict_shape("req", &c.parameters);
    let k = kinds(&c);
    for (path, kind) in [
        ("/properties/body", DowngradeKind::JsonString),
        ("/properties/headers", DowngradeKind::MapEntries),
        ("/properties/filter", DowngradeKind::JsonString),
        ("/properties/args/items", DowngradeKind::JsonString),
        ("/properties/env", DowngradeKind::MapEntries),
        ("/properties/tags", DowngradeKind::TypeInferred),
    ] {
        assert!(
            k.iter().any(|(p, x)| p == path && *x == kind),
            "{path} {kind}: {k:?}"
        );
    }
    assert_eq!(
        c.parameters["properties"]["env"]["items"]["properties"]["key"]["pattern"],
        json!("^[A-Z_]+$")
    );
    let answer = json!({
        "body": "{\"x\": [1, 2]}",
        "headers": [{"key": "Accept", "value": "text/plain"}],
        "filter": "{\"age\": {\"$gt\": 3}}",
        "args": ["1", "\"two\"", "null"],
        "env": null,
        "tags": {"owner": "me"}
    });
    assert!(tool_core::schema::compile(&c.parameters)
        .expect("compiles")
        .is_valid(&answer));
    let back = c.map_back(&answer);
    assert_eq!(
        back,
        json!({
            "body": {"x": [1, 2]},
            "headers": {"Accept": "text/plain"},
            "filter": {"age": {"$gt": 3}},
            "args": [1, "two", null],
            "tags": {"owner": "me"}
        })
    );
    assert!(tool_core::schema::compile(&schema)
        .expect("compiles")
        .is_valid(&back));
    // Text that is not JSON, or a repeated key, is left for validation to refuse.
    let bad = c.map_back(&json!({"body": "not json", "headers": [
        {"key": "a", "value": "1"}, {"key": "a", "value": "2"}]}));
    assert_eq!(bad["body"], json!("not json"));
    assert!(bad["headers"].is_array());
}

#[test]
fn gemini_downgrades_enums_recursion_and_type_lists() {
    let schema = json!({
        "type": "object",
        "properties": {
            "level": {"enum": [0, 25, 50, "max"]},
            "ack": {"const": true},
            "value": {"type": ["string", "integer"]},
            "tree": {"$ref": "#/$defs/Node"}
        },
        "required": ["level"],
        "$defs": {"Node": {"type": "object", "properties": {"name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
    });
    let c = convert("g", "d", &schema, Format::Gemini, LOOSE).expect("converts");
    assert_gemini_shape("g", &c.parameters);
    let p = &c.parameters["properties"];
    assert_eq!(p["level"]["enum"], json!(["0", "25", "50", "max"]));
    assert_eq!(p["ack"]["enum"], json!(["true"]));
    assert_eq!(p["value"]["anyOf"][1]["type"], json!("integer"));
    assert_eq!(
        p["tree"]["properties"]["children"]["items"]["type"],
        json!("string")
    );
    let back = c.map_back(&json!({
        "level": "25", "ack": "true", "value": 7,
        "tree": {"name": "r", "children": ["{\"name\": \"leaf\"}"]}
    }));
    assert_eq!(
        back,
        json!({"level": 25, "ack": true, "value": 7,
               "tree": {"name": "r", "children": [{"name": "leaf"}]}})
    );
    assert!(tool_core::schema::compile(&schema)
        .expect("compiles")
        .is_valid(&back));
}

#[test]
fn what_cannot_convert_is_an_error_naming_the_path() {
    let cases = [
        (
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            "",
        ),
        (
            json!({"type": "object", "oneOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"type": "object", "properties": {"b": {"type": "integer"}}}]}),
            "/oneOf",
        ),
        (
            json!({"type": "object", "properties": {"a": false}}),
            "/properties/a",
        ),
        (
            json!({"type": "array", "items": {"type": "string"}}),
            "/type",
        ),
    ];
    for (schema, path) in cases {
        let e = convert("t", "d", &schema, Format::OpenAi, STRICT).expect_err(path);
        assert_eq!(e.path, path, "{e}");
        assert_eq!(e.code(), "schema_not_expressible");
    }
}

// ---------------------------------------------------------------- dump --from

fn empty_registry() -> Registry {
    Registry::builder().build().expect("an empty registry")
}

fn dump_from(doc: &Value, extra: &[&str]) -> (std::process::ExitCode, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.json");
    std::fs::write(&input, serde_json::to_vec(doc).expect("json")).expect("write");
    let out = dir.path().join("out.json");
    let report = dir.path().join("report.json");
    let mut args: Vec<String> = vec![
        "prog".into(),
        "dump".into(),
        "--from".into(),
        input.display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "--report".into(),
        report.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let code = tool_core::cli::run_with(&empty_registry(), args);
    (code, dir)
}

fn read(dir: &tempfile::TempDir, name: &str) -> Option<Value> {
    let bytes = std::fs::read(dir.path().join(name)).ok()?;
    Some(serde_json::from_slice(&bytes).expect("output is JSON"))
}

fn tools_list() -> Value {
    json!({"tools": [
        {"name": "http_request", "description": "Send a request.", "inputSchema": {
            "type": "object",
            "properties": {"url": {"type": "string", "format": "uri"},
                           "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                           "body": {}},
            "required": ["url"]}},
        {"name": "ping", "inputSchema": {"type": "object"}}
    ]})
}

#[test]
fn dump_from_converts_a_tools_list_and_reports_every_downgrade() {
    let (code, dir) = dump_from(&tools_list(), &["--format", "openai", "--strict"]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let out = read(&dir, "out.json").expect("written");
    let tools = out.as_array().expect("array");
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["function"]["name"], json!("http_request"));
    assert_eq!(tools[0]["function"]["strict"], json!(true));
    for t in tools {
        let rules = rules::openai_strict_violations(&t["function"]["parameters"]);
        assert!(rules.is_empty(), "{rules:?}");
    }
    let report = read(&dir, "report.json").expect("report");
    assert_eq!(report["format"], json!("openai"));
    let http = &report["tools"][0];
    assert_eq!(http["name"], json!("http_request"));
    assert_eq!(http["needs_map_back"], json!(true));
    let kinds: Vec<&str> = http["downgrades"]
        .as_array()
        .expect("downgrades")
        .iter()
        .map(|d| d["kind"].as_str().expect("kind"))
        .collect();
    assert!(kinds.contains(&"json_string"), "{kinds:?}");
    assert!(kinds.contains(&"map_entries"), "{kinds:?}");
    assert!(kinds.contains(&"noted_in_description"), "{kinds:?}");
    assert_eq!(report["tools"][1]["downgrades"], json!([]));

    // The same list inside a JSON-RPC response, to Gemini and MCP.
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "result": tools_list()});
    let (code, dir) = dump_from(&rpc, &["--format", "gemini"]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let out = read(&dir, "out.json").expect("written");
    let decls = out["functionDeclarations"].as_array().expect("decls");
    assert_eq!(decls.len(), 2);
    let rules = rules::gemini_violations(&decls[0]["parameters"]);
    assert!(rules.is_empty(), "{rules:?}");
    assert!(decls[1].get("parameters").is_none());
    let (code, dir) = dump_from(&rpc, &["--format", "mcp"]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    assert_eq!(
        read(&dir, "out.json").expect("written")["tools"][0]["inputSchema"],
        tools_list()["tools"][0]["inputSchema"]
    );
}

#[test]
fn dump_from_takes_raw_schemas() {
    let one = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let (code, dir) = dump_from(&one, &["--format", "anthropic"]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let out = read(&dir, "out.json").expect("written");
    assert_eq!(out[0]["name"], json!("schema"));
    assert_eq!(out[0]["input_schema"], one);
    let (code, dir) = dump_from(&json!([one, one]), &["--format", "openai", "--strict"]);
    assert_eq!(code, std::process::ExitCode::SUCCESS);
    let out = read(&dir, "out.json").expect("written");
    assert_eq!(out[1]["function"]["name"], json!("schema_2"));
}

#[test]
fn dump_from_fails_closed_on_bad_input() {
    let failing = [
        json!("just a string"),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
        json!({"tools": [{"name": "x"}]}),
        json!({"tools": [{"name": "bad name!", "inputSchema": {"type": "object"}}]}),
        json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}},
                         {"name": "a", "inputSchema": {"type": "object"}}]}),
        json!({"tools": "none"}),
        // Cannot be expressed: a map at the root.
        json!({"tools": [{"name": "env", "inputSchema":
            {"type": "object", "additionalProperties": {"type": "string"}}}]}),
    ];
    for doc in failing {
        let (code, dir) = dump_from(&doc, &["--format", "openai", "--strict"]);
        assert_eq!(code, std::process::ExitCode::from(1), "{doc}");
        assert!(
            read(&dir, "out.json").is_none(),
            "nothing written for {doc}"
        );
    }
    // Not JSON at all.
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.json");
    std::fs::write(&input, "not json at all").expect("write");
    let code = tool_core::cli::run_with(
        &empty_registry(),
        ["prog", "dump", "--from", input.to_str().expect("utf8")],
    );
    assert_eq!(code, std::process::ExitCode::from(1));
    // The canonical format is the registry's own.
    let (code, _dir) = dump_from(&tools_list(), &["--format", "canonical"]);
    assert_eq!(code, std::process::ExitCode::from(1));
    // `--report` needs `--from`.
    let code = tool_core::cli::run_with(&empty_registry(), ["prog", "dump", "--report", "r.json"]);
    assert_eq!(code, std::process::ExitCode::from(2));
}
