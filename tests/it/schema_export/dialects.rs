//! Anthropic, Gemini and MCP dialects; determinism, the CLI and the written files.

use super::*;

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

/// The canonical dump and MCP say the same about idempotence: a read-only tool is idempotent
/// whether or not it is declared so (`list_dir` and `read_file` here are not).
#[test]
fn mcp_and_the_canonical_dump_agree_on_idempotence() {
    let reg = examples();
    let canonical = export::export_value(&reg, Format::Canonical, LOOSE).expect("canonical");
    let mcp = export::export_value(&reg, Format::Mcp, LOOSE).expect("mcp");
    let by_name = |v: &Value, list: &str, key: &str| -> HashMap<String, Value> {
        v[list]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| (t["name"].as_str().expect("name").to_owned(), t[key].clone()))
            .collect()
    };
    let idempotent = by_name(&canonical, "tools", "idempotent");
    let hints = by_name(&mcp, "tools", "annotations");
    assert!(!idempotent.is_empty());
    for (name, value) in &idempotent {
        assert_eq!(&hints[name]["idempotentHint"], value, "{name}");
    }
    for t in reg.iter() {
        if t.decl().read_only() {
            assert_eq!(idempotent[&t.decl().name], json!(true), "{}", t.decl().name);
        }
    }
    assert!(reg
        .iter()
        .any(|t| t.decl().read_only() && !t.decl().idempotent));
}

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
fn mcp_wraps_an_output_schema_whose_root_is_not_an_object_under_result() {
    let reg = stress();
    let levels = reg.get("levels").expect("tool").decl();
    let declared = levels
        .output_schema
        .clone()
        .expect("declared output schema");
    assert_ne!(declared["type"], json!("object"));
    assert!(mcp::wraps_output(levels));
    let advertised = mcp::output_schema(levels).expect("wrapped output schema");
    assert_eq!(advertised["type"], json!("object"));
    assert_eq!(advertised["required"], json!([mcp::RESULT_KEY]));
    assert_eq!(mcp::tool(levels)["outputSchema"], advertised);
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
