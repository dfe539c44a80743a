//! The registry's canonical dump: every declaration as JSON, keys sorted (what is pinned and
//! fingerprinted).

use serde_json::{json, Map, Value};

use crate::decl::{ScriptLang, ToolDecl};

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
    m.insert("input_schema".into(), d.input_schema.clone());
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
pub(super) fn canonical_dump_of<'a>(decls: impl Iterator<Item = &'a ToolDecl>) -> Vec<u8> {
    let decls: Vec<&ToolDecl> = decls.collect();
    crate::schema::canonical::canonical_bytes_of(&DumpDoc(&decls))
}

/// The dump document; its keys are written in sorted order.
struct DumpDoc<'a>(&'a [&'a ToolDecl]);

impl serde::Serialize for DumpDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("schema_version", &1u64)?;
        map.serialize_entry("tools", &DeclList(self.0))?;
        map.end()
    }
}

struct DeclList<'a>(&'a [&'a ToolDecl]);

impl serde::Serialize for DeclList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|d| DeclDump(d)))
    }
}

/// One declaration as [`decl_to_json`] builds it, with its keys in sorted order (the order
/// below is alphabetical; a test compares the bytes with the `Value` route).
struct DeclDump<'a>(&'a ToolDecl);

impl serde::Serialize for DeclDump<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use crate::schema::canonical::SortedKeys;
        use serde::ser::SerializeMap;
        let d = self.0;
        let declared_sockets = !d.unix_sockets.is_empty();
        let declared_setup = !d.script_setup.is_empty();
        let extra = usize::from(declared_sockets) + usize::from(declared_setup);
        let mut map = s.serialize_map(Some(14 + extra))?;
        map.serialize_entry("concurrency_safe", &d.concurrency_safe)?;
        map.serialize_entry("description", &d.description)?;
        map.serialize_entry("destructive", &d.destructive())?;
        map.serialize_entry("idempotent", &d.is_idempotent())?;
        map.serialize_entry("input_schema", &SortedKeys(&d.input_schema))?;
        map.serialize_entry("name", &d.name)?;
        map.serialize_entry("open_world", &d.open_world)?;
        map.serialize_entry("output_schema", &d.output_schema.as_ref().map(SortedKeys))?;
        map.serialize_entry("path_args", &d.path_args)?;
        map.serialize_entry("read_only", &d.read_only())?;
        map.serialize_entry("risk", d.risk.as_str())?;
        map.serialize_entry("script_args", &d.script_args)?;
        map.serialize_entry("script_lang", &d.script_lang.map(ScriptLang::as_str))?;
        if declared_setup {
            map.serialize_entry("script_setup", &SortedKeys(&setup_json(d)))?;
        }
        map.serialize_entry("timeout_ms", &d.timeout.map(|t| t.as_millis() as u64))?;
        if declared_sockets {
            map.serialize_entry("unix_sockets", &d.unix_sockets)?;
        }
        map.end()
    }
}
