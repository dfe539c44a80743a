//! The registry's canonical dump: every declaration as JSON, keys sorted (what is pinned and
//! fingerprinted).

use serde_json::{json, Map, Value};

use crate::decl::{ScriptLang, ToolDecl};
use crate::schema::canonical::Pretty;

/// The canonical JSON of one declaration (before key sorting).
pub fn decl_to_json(d: &ToolDecl) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(d.name));
    m.insert("description".into(), json!(d.description));
    m.insert("risk".into(), json!(d.risk.as_str()));
    m.insert("read_only".into(), json!(d.read_only()));
    m.insert("destructive".into(), json!(d.destructive()));
    m.insert("concurrency_safe".into(), json!(d.concurrency_safe));
    m.insert("idempotent".into(), json!(d.is_idempotent()));
    m.insert("open_world".into(), json!(d.open_world));
    m.insert("path_args".into(), json!(d.path_args));
    m.insert("script_args".into(), json!(d.script_args));
    m.insert(
        "script_lang".into(),
        json!(d.script_lang.map(ScriptLang::as_str)),
    );
    if !d.script_setup.is_empty() {
        // Only when declared, so the pins of other tools keep their bytes.
        m.insert("script_setup".into(), setup_json(d));
    }
    m.insert(
        "timeout_ms".into(),
        json!(d.timeout.map(|t| t.as_millis() as u64)),
    );
    if !d.unix_sockets.is_empty() {
        // Only when declared, so the pins of tools without sockets keep their bytes.
        m.insert("unix_sockets".into(), json!(d.unix_sockets));
    }
    m.insert("input_schema".into(), d.input_schema.value().clone());
    m.insert(
        "output_schema".into(),
        d.output_schema.clone().unwrap_or(Value::Null),
    );
    Value::Object(m)
}

/// The declared script setup arguments, by key (`cwd`, `env`, `timeout`; only those named).
fn setup_json(d: &ToolDecl) -> Value {
    let setup = &d.script_setup;
    let mut m = Map::new();
    for (key, arg) in [
        ("cwd", &setup.cwd),
        ("env", &setup.env),
        ("timeout", &setup.timeout),
    ] {
        if let Some(arg) = arg {
            m.insert(key.into(), json!(arg));
        }
    }
    Value::Object(m)
}

/// The canonical dump, written straight from the declarations: the same bytes as
/// `canonical_bytes(&json!({"schema_version": 1, "tools": [decl_to_json(..), ..]}))`, without
/// copying every schema into one document first (the copies cost more than the writing).
/// A declaration may come with its input schema's canonical text as written here (see
/// `ToolRegistration::canonical_input`), copied in place of the schema.
pub(super) fn canonical_dump_of<'a>(
    decls: impl Iterator<Item = (&'a ToolDecl, Option<&'a str>)>,
) -> Vec<u8> {
    let decls: Vec<(&ToolDecl, Option<&str>)> = decls.collect();
    // About what a tool of a few parameters takes, so the buffer rarely grows.
    let mut w = Pretty::with_capacity(64 + 2048 * decls.len());
    w.open(b'{');
    w.key(true, "schema_version");
    w.u64(1);
    w.key(false, "tools");
    w.open(b'[');
    for (i, (d, input)) in decls.iter().enumerate() {
        w.item(i == 0);
        decl(&mut w, d, *input);
    }
    w.close(b']', !decls.is_empty());
    w.close(b'}', true);
    w.finish()
}

/// One declaration as [`decl_to_json`] builds it, its keys in sorted order (the order below is
/// alphabetical; a test compares the bytes with the `Value` route).
fn decl(w: &mut Pretty, d: &ToolDecl, input: Option<&str>) {
    let opt_str = |w: &mut Pretty, s: Option<&str>| match s {
        Some(s) => w.string(s),
        None => w.value(&Value::Null),
    };
    w.open(b'{');
    w.key(true, "concurrency_safe");
    w.bool(d.concurrency_safe);
    w.key(false, "description");
    w.string(&d.description);
    w.key(false, "destructive");
    w.bool(d.destructive());
    w.key(false, "idempotent");
    w.bool(d.is_idempotent());
    w.key(false, "input_schema");
    match (input, d.input_schema.parts()) {
        // The depth `#[tool]` writes the text for: the root, `tools`, this object.
        (Some(text), _) if w.depth() == 3 => w.raw(text),
        // Written from its parts, at that depth only.
        (_, Some(parts)) if parts.write_canonical(w) => {}
        _ => w.value(&d.input_schema),
    }
    w.key(false, "name");
    w.string(&d.name);
    w.key(false, "open_world");
    w.bool(d.open_world);
    w.key(false, "output_schema");
    w.value(d.output_schema.as_ref().unwrap_or(&Value::Null));
    w.key(false, "path_args");
    w.strings(&d.path_args);
    w.key(false, "read_only");
    w.bool(d.read_only());
    w.key(false, "risk");
    w.string(d.risk.as_str());
    w.key(false, "script_args");
    w.strings(&d.script_args);
    w.key(false, "script_lang");
    opt_str(w, d.script_lang.map(ScriptLang::as_str));
    if !d.script_setup.is_empty() {
        w.key(false, "script_setup");
        w.value(&setup_json(d));
    }
    w.key(false, "timeout_ms");
    match d.timeout {
        Some(t) => w.u64(t.as_millis() as u64),
        None => w.value(&Value::Null),
    }
    if !d.unix_sockets.is_empty() {
        w.key(false, "unix_sockets");
        w.strings(&d.unix_sockets);
    }
    w.close(b'}', true);
}
