//! The canonical dump and the OpenAI dialect, loose and strict.

use super::*;

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
