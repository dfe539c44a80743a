//! Unit tests of the registry: build checks, lookups and the canonical dump.

use super::*;

fn dynamic(name: &str, schema: Value) -> ToolDef {
    ToolDef::builder(name)
        .description("A test tool.")
        .input_schema(schema)
        .handler(|_ctx, _args| async { "ok" })
        .build()
        .expect("valid declaration")
}

fn plain(name: &str) -> ToolDef {
    dynamic(
        name,
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    )
}

/// A declaration that passes `ToolDef::build` only because it is assembled by hand: its
/// pattern is not a regular expression, so compiling its validator fails.
fn uncompilable(name: &str) -> ToolDef {
    let mut def = plain(name);
    def.decl.input_schema = json!({
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": "(unclosed"}}
    })
    .into();
    def
}

fn many(n: usize) -> Vec<ToolDef> {
    (0..n).map(|i| plain(&format!("tool_{i:03}"))).collect()
}

fn build(defs: Vec<ToolDef>) -> Result<Registry, RegistryError> {
    defs.into_iter()
        .fold(Registry::builder(), RegistryBuilder::tool)
        .build()
}

#[test]
fn an_inventory_registry_with_no_tool_is_refused_with_the_fix() {
    let err = Registry::builder()
        .with_inventory_where(|_| false)
        .build()
        .expect_err("refused");
    assert_eq!(err, RegistryError::NoToolsLinked);
    let message = err.to_string();
    assert!(message.contains("use mytools as _;"), "{message}");
    assert!(message.contains("linker"), "{message}");
}

#[test]
fn an_empty_registry_is_built_only_on_purpose() {
    assert!(Registry::builder().build().expect("empty").is_empty());
    let r = Registry::builder()
        .with_inventory_where(|_| false)
        .tool(plain("by_hand"))
        .build()
        .expect("one tool");
    assert_eq!(r.len(), 1);
}

#[test]
fn a_large_registry_keeps_every_tool_and_validator() {
    let r = build(many(64)).expect("registry");
    assert_eq!(r.len(), 64);
    for t in r.iter() {
        assert!(t.validator().is_valid(&json!({"q": "x"})));
        assert!(!t.validator().is_valid(&json!({"q": 1})));
    }
}

#[test]
fn the_first_invalid_tool_in_order_is_the_error() {
    let mut defs = many(64);
    defs[50] = uncompilable("late_bad");
    defs[20] = uncompilable("early_bad");
    let err = build(defs).expect_err("refused");
    assert!(
        matches!(&err, RegistryError::InvalidDeclaration { tool, .. } if tool == "early_bad"),
        "{err}"
    );
}

#[test]
fn a_duplicate_before_an_invalid_tool_is_the_error_and_vice_versa() {
    let mut defs = many(64);
    defs[30] = plain("tool_005");
    defs[40] = uncompilable("bad");
    let err = build(defs).expect_err("refused");
    assert!(
        matches!(&err, RegistryError::DuplicateName { name, .. } if name == "tool_005"),
        "{err}"
    );

    let mut defs = many(64);
    defs[30] = uncompilable("bad");
    defs[40] = plain("tool_005");
    let err = build(defs).expect_err("refused");
    assert!(
        matches!(&err, RegistryError::InvalidDeclaration { tool, .. } if tool == "bad"),
        "{err}"
    );
}

#[test]
fn the_streamed_dump_matches_the_value_route() {
    let mut defs = many(3);
    defs.push(
        ToolDef::builder("full")
            .description("Every field set.")
            .input_schema(json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "script": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": false,
                "$defs": {"Z": {"type": "integer"}, "A": {"enum": ["b", "a"]}}
            }))
            .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .risk(Risk::Destructive)
            .concurrency_safe(true)
            .idempotent(true)
            .open_world(true)
            .path_args(["path"])
            .script_args(["script"], ScriptLang::Bash)
            .unix_sockets(["/run/app/db.sock"])
            .timeout(Duration::from_millis(1500))
            .handler(|_ctx, _args| async { "ok" })
            .build()
            .expect("valid declaration"),
    );
    let r = build(defs).expect("registry");
    let tools: Vec<Value> = r.iter().map(|t| decl_to_json(t.decl())).collect();
    let expected = crate::schema::canonical_bytes(&json!({"schema_version": 1, "tools": tools}));
    assert_eq!(
        String::from_utf8_lossy(r.canonical_dump()),
        String::from_utf8_lossy(&expected)
    );
    // Declared sockets are pinned; tools without them keep the bytes they had.
    let dump: Value = serde_json::from_slice(r.canonical_dump()).expect("json");
    let with_sockets: Vec<&Value> = dump["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter(|t| t.get("unix_sockets").is_some())
        .collect();
    assert_eq!(with_sockets.len(), 1, "{dump}");
    assert_eq!(with_sockets[0]["unix_sockets"], json!(["/run/app/db.sock"]));
}

#[test]
fn a_default_that_breaks_its_own_schema_is_refused_at_build() {
    let def = |schema: Value| {
        ToolDef::builder("defaults")
            .description("A test tool.")
            .input_schema(schema)
            .handler(|_ctx, _args| async { "ok" })
            .build()
    };
    for (schema, name) in [
        (
            json!({"type": "object", "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 50}}}),
            "limit",
        ),
        (
            json!({"type": "object", "properties": {
                "mode": {"enum": ["fast", "safe"], "default": "slow"}}}),
            "mode",
        ),
        (
            json!({"type": "object", "properties": {
                "opts": {"type": "object", "properties": {"depth": {"type": "integer"}},
                         "default": {"depth": "deep"}}}}),
            "opts",
        ),
        (
            json!({"type": "object", "properties": {
                "a/b": {"type": "string", "maxLength": 2, "default": "long"}}}),
            "a/b",
        ),
    ] {
        let err = def(schema).expect_err("refused");
        let message = err.to_string();
        assert!(
            message.contains(&format!("the default of `{name}` does not satisfy")),
            "{message}"
        );
    }
    // Defaults that obey their schema, beside a required property they say nothing about and
    // a property without a default: accepted.
    def(json!({"type": "object", "required": ["q"], "properties": {
        "q": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
        "mode": {"enum": ["fast", "safe"], "default": "safe"}}}))
    .expect("valid defaults");
}
