//! What the dialects share: the format names, options and errors, and the schema rewriting
//! helpers of the strict OpenAI and the Gemini walks.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

/// A provider dialect the tool list can be exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// The registry's canonical dump: the bytes that get pinned.
    Canonical,
    /// OpenAI Chat Completions `tools` (function tools, optionally strict).
    OpenAi,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// Gemini `functionDeclarations` (OpenAPI 3.0 schema subset).
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 5] = [
        Format::Canonical,
        Format::OpenAi,
        Format::Anthropic,
        Format::Gemini,
        Format::Mcp,
    ];

    /// The stable name used on the command line and in errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Canonical => "canonical",
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name that is not one of [`Format::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown export format `{0}`; expected one of: canonical, openai, anthropic, gemini, mcp")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

/// Options of an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// OpenAI strict mode (structured outputs). Ignored by the other formats.
    pub strict: bool,
}

/// A schema construct the chosen dialect cannot express. Reason code `schema_not_expressible`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{format} export: tool `{tool}`: at `{path}` in the input schema: {reason}")]
pub struct ExportError {
    /// The dialect.
    pub format: Format,
    /// The tool whose schema cannot be expressed.
    pub tool: String,
    /// JSON pointer into the tool's input schema (`""` for the root).
    pub path: String,
    /// What cannot be expressed, and why.
    pub reason: String,
}

impl ExportError {
    /// The stable reason code of every export error.
    pub const CODE: &'static str = "schema_not_expressible";

    /// The stable reason code (`schema_not_expressible`).
    pub fn code(&self) -> &'static str {
        Self::CODE
    }
}

/// The schema without its root `$schema` keyword (providers ignore or reject it).
pub(crate) fn without_schema_keyword(schema: &Value) -> Value {
    let mut s = schema.clone();
    if let Value::Object(m) = &mut s {
        m.remove("$schema");
    }
    s
}

/// Metadata no provider reads; removed without a note.
pub(crate) const DROPPED_META: &[&str] = &["$schema", "$id", "$comment", "$anchor"];

/// Append a JSON pointer token (escaping `~` and `/`).
pub(crate) fn push_path(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// The subschema a local reference (`#` or `#/json/pointer`) points at inside `root`.
pub(crate) fn resolve_local_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None;
    }
    root.pointer(pointer)
}

/// The JSON pointer (as a schema path) that a local reference names: `#/$defs/A` → `/$defs/A`.
pub(crate) fn ref_path(reference: &str) -> String {
    reference.strip_prefix('#').unwrap_or(reference).to_owned()
}

/// Write keywords the dialect cannot carry into the schema's description, sorted by key, so
/// nothing is lost silently.
pub(crate) fn note_in_description(node: &mut Map<String, Value>, moved: BTreeMap<String, Value>) {
    if moved.is_empty() {
        return;
    }
    let list = moved
        .iter()
        .map(|(k, v)| format!("{k}={}", compact(v)))
        .collect::<Vec<_>>()
        .join(", ");
    let note = format!("Constraints: {list}.");
    let text = match node.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{d}\n{note}"),
        _ => note,
    };
    node.insert("description".to_owned(), Value::String(text));
}

fn compact(v: &Value) -> String {
    // `Value` always serializes; the fallback is never reached.
    serde_json::to_string(&crate::schema::canonical::sorted(v)).unwrap_or_default()
}

/// Merge `target` (a referenced or `allOf` subschema) under `siblings`: the siblings win on
/// conflicts, as they are the more specific annotations of the use site.
/// Keywords whose meaning cannot be carried by a description: an export error in the strict
/// OpenAI and the Gemini dialects.
pub(crate) const UNSUPPORTED_STRUCTURE: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
];

/// The first step the strict OpenAI and the Gemini walks share: a one-item `allOf` is merged into
/// its node (returned, to walk instead), and `oneOf` becomes `anyOf`. Errors carry the JSON path.
pub(crate) fn fold_combinators(
    m: &mut Map<String, Value>,
    path: &str,
) -> Result<Option<Value>, (String, &'static str)> {
    if let Some(all) = m.remove("allOf") {
        return match all.as_array().map(Vec::as_slice) {
            Some([only]) => merge_under(only, m)
                .map(Some)
                .ok_or_else(|| (push_path(path, "allOf"), "`allOf` item is not an object")),
            _ => Err((
                push_path(path, "allOf"),
                "`allOf` with several schemas cannot be expressed",
            )),
        };
    }
    if let Some(one) = m.remove("oneOf") {
        if m.contains_key("anyOf") {
            return Err((
                path.to_owned(),
                "`oneOf` next to `anyOf` cannot be expressed",
            ));
        }
        m.insert("anyOf".to_owned(), one);
    }
    Ok(None)
}

pub(crate) fn merge_under(target: &Value, siblings: &Map<String, Value>) -> Option<Value> {
    let mut out = target.as_object()?.clone();
    for (k, v) in siblings {
        out.insert(k.clone(), v.clone());
    }
    Some(Value::Object(out))
}

/// What a downgrade did to a schema the dialect cannot express as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DowngradeKind {
    /// The value travels as a JSON text in a string argument; the map back decodes it.
    JsonString,
    /// A map (an object with any keys) travels as an array of `{"key", "value"}` entries; the map
    /// back folds it into the object.
    MapEntries,
    /// Non-string `enum`/`const` values travel as their JSON text in a string enum (Gemini); the
    /// map back decodes them.
    EnumAsText,
    /// Keywords the dialect cannot carry were written into the description; the executor, which
    /// validates against the original schema, still enforces them.
    NotedInDescription,
    /// An untyped schema got the type its keywords imply (`properties` → object, `items` →
    /// array, `pattern` → string, `minimum` → number); only values of that type can be sent.
    TypeInferred,
    /// An `allOf` of several schemas was merged into one.
    AllOfMerged,
    /// `oneOf` became `anyOf`: a value matching several alternatives is refused by validation
    /// against the original schema only.
    OneOfAsAnyOf,
    /// A `$ref` to a location outside `$defs` (`#/definitions/...`, `#/properties/...`) now
    /// points at a `$defs` entry holding the converted target.
    RefMoved,
    /// An object open to extra properties was closed: only its listed properties can be sent.
    Closed,
    /// Several types in one `type` became an `anyOf` of one type each.
    TypesSplit,
}

impl DowngradeKind {
    /// The stable name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DowngradeKind::JsonString => "json_string",
            DowngradeKind::MapEntries => "map_entries",
            DowngradeKind::EnumAsText => "enum_as_text",
            DowngradeKind::NotedInDescription => "noted_in_description",
            DowngradeKind::TypeInferred => "type_inferred",
            DowngradeKind::AllOfMerged => "all_of_merged",
            DowngradeKind::OneOfAsAnyOf => "one_of_as_any_of",
            DowngradeKind::RefMoved => "ref_moved",
            DowngradeKind::Closed => "closed",
            DowngradeKind::TypesSplit => "types_split",
        }
    }

    /// Whether answers need [`map_back`](super::convert::Conversion::map_back) at this place.
    pub fn needs_map_back(self) -> bool {
        matches!(
            self,
            DowngradeKind::JsonString | DowngradeKind::MapEntries | DowngradeKind::EnumAsText
        )
    }
}

impl fmt::Display for DowngradeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One downgrade of one conversion: where, what, and the original it replaces.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Downgrade {
    /// JSON pointer into the original schema.
    pub path: String,
    /// JSON pointer into the converted schema, where the map back applies.
    pub out_path: String,
    /// What was done.
    pub kind: DowngradeKind,
    /// Why, in words.
    pub detail: String,
    /// The original subschema ([`DowngradeKind::JsonString`]), the moved keywords
    /// ([`DowngradeKind::NotedInDescription`]), the enum values ([`DowngradeKind::EnumAsText`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original: Option<Value>,
}

/// Key of the marker a walk puts on the converted node of each downgrade (its index in the
/// record list); [`place_markers`] removes the markers and fills in the `out_path`s.
pub(crate) const MARKER: &str = "\u{0}downgrade";

/// Downgrades recorded during one walk. Disabled (`enabled == false`) for the registry's own
/// exports, whose schemas the executor validates as declared: there, a construct the dialect
/// cannot express stays an error.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) enabled: bool,
    pub(crate) items: std::cell::RefCell<Vec<Downgrade>>,
}

impl Recorder {
    pub(crate) fn new(enabled: bool) -> Self {
        Recorder {
            enabled,
            items: Default::default(),
        }
    }

    /// Record a downgrade and mark `node` (the converted schema) with it.
    pub(crate) fn record(
        &self,
        node: &mut Map<String, Value>,
        path: &str,
        kind: DowngradeKind,
        detail: impl Into<String>,
        original: Option<Value>,
    ) {
        let mut items = self.items.borrow_mut();
        let index = items.len();
        items.push(Downgrade {
            path: path.to_owned(),
            out_path: String::new(),
            kind,
            detail: detail.into(),
            original,
        });
        let marks = node
            .entry(MARKER.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = marks {
            a.push(Value::from(index));
        }
    }

    /// The string node a value that cannot be expressed travels in, as JSON text.
    pub(crate) fn json_string(&self, original: &Value, path: &str, why: &str) -> Value {
        let mut node = Map::new();
        node.insert("type".to_owned(), Value::String("string".to_owned()));
        let mut text = String::new();
        if let Some(d) = original.get("description").and_then(Value::as_str) {
            if !d.trim().is_empty() {
                text.push_str(d);
                text.push('\n');
            }
        }
        let mut shown = original.clone();
        if let Value::Object(m) = &mut shown {
            m.remove("description");
        }
        let mut schema_text = compact(&shown);
        if schema_text.len() > MAX_SCHEMA_IN_NOTE {
            let mut cut = MAX_SCHEMA_IN_NOTE;
            while !schema_text.is_char_boundary(cut) {
                cut -= 1;
            }
            schema_text.truncate(cut);
            schema_text.push_str("...");
        }
        text.push_str(&format!(
            "Write this value as JSON text in a string; the value must match the JSON Schema {schema_text}."
        ));
        node.insert("description".to_owned(), Value::String(text));
        self.record(
            &mut node,
            path,
            DowngradeKind::JsonString,
            why,
            Some(original.clone()),
        );
        Value::Object(node)
    }

    /// Move keywords into the description ([`note_in_description`]) and record it.
    pub(crate) fn note(
        &self,
        node: &mut Map<String, Value>,
        path: &str,
        moved: BTreeMap<String, Value>,
    ) {
        if moved.is_empty() {
            return;
        }
        if self.enabled {
            let keys = moved.keys().cloned().collect::<Vec<_>>().join(", ");
            let original = Value::Object(moved.clone().into_iter().collect());
            self.record(
                node,
                path,
                DowngradeKind::NotedInDescription,
                format!("not expressible, written into the description: {keys}"),
                Some(original),
            );
        }
        note_in_description(node, moved);
    }

    /// The recorded downgrades, with the `out_path`s read from the markers in `converted`
    /// (which are removed). A downgrade whose node did not survive (an unused definition that
    /// was pruned) is left out.
    pub(crate) fn finish(self, converted: &mut Value) -> Vec<Downgrade> {
        let items = self.items.into_inner();
        let mut placed: Vec<(String, usize)> = Vec::new();
        place_markers(converted, "", &mut placed);
        let mut out: Vec<Downgrade> = placed
            .into_iter()
            .filter_map(|(p, i)| {
                items.get(i).map(|d| Downgrade {
                    out_path: p,
                    ..d.clone()
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.out_path, a.kind, &a.path).cmp(&(&b.out_path, b.kind, &b.path)));
        out
    }
}

/// Longest original schema quoted in a JSON-string note, in bytes.
const MAX_SCHEMA_IN_NOTE: usize = 2_000;

fn place_markers(v: &mut Value, path: &str, out: &mut Vec<(String, usize)>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(marks)) = m.remove(MARKER) {
                for i in marks.iter().filter_map(Value::as_u64) {
                    out.push((path.to_owned(), i as usize));
                }
            }
            for (k, child) in m.iter_mut() {
                place_markers(child, &push_path(path, k), out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter_mut().enumerate() {
                place_markers(child, &push_path(path, &i.to_string()), out);
            }
        }
        _ => {}
    }
}

/// Merge the schemas of an `allOf` into one: `properties` merged per name, `required` united,
/// `type`s and `enum`s intersected, the tighter bound kept, descriptions joined. `None` with the
/// conflicting keyword when two items disagree in a way one schema cannot say.
pub(crate) fn merge_all_of(items: &[Value]) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for item in items {
        let Value::Object(m) = item else {
            return Err("an `allOf` item is not an object schema".to_owned());
        };
        for (k, v) in m {
            let Some(old) = out.get(k).cloned() else {
                out.insert(k.clone(), v.clone());
                continue;
            };
            if &old == v {
                continue;
            }
            let merged = match k.as_str() {
                "properties" => {
                    let (Value::Object(a), Value::Object(b)) = (&old, v) else {
                        return Err("`properties` is not an object".to_owned());
                    };
                    let mut p = a.clone();
                    for (name, s) in b {
                        let s = match p.get(name) {
                            Some(prev) if prev != s => {
                                Value::Object(merge_all_of(&[prev.clone(), s.clone()])?)
                            }
                            _ => s.clone(),
                        };
                        p.insert(name.clone(), s);
                    }
                    Value::Object(p)
                }
                "required" => {
                    let mut r: Vec<Value> = old.as_array().cloned().unwrap_or_default();
                    for n in v.as_array().into_iter().flatten() {
                        if !r.contains(n) {
                            r.push(n.clone());
                        }
                    }
                    Value::Array(r)
                }
                "type" => {
                    let set = |t: &Value| -> Vec<Value> {
                        match t {
                            Value::Array(a) => a.clone(),
                            other => vec![other.clone()],
                        }
                    };
                    let b = set(v);
                    let both: Vec<Value> =
                        set(&old).into_iter().filter(|t| b.contains(t)).collect();
                    match both.as_slice() {
                        [] => return Err("`allOf` items have no `type` in common".to_owned()),
                        [one] => one.clone(),
                        _ => Value::Array(both),
                    }
                }
                "enum" => {
                    let b = v.as_array().cloned().unwrap_or_default();
                    let both: Vec<Value> = old
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|x| b.contains(x))
                        .cloned()
                        .collect();
                    if both.is_empty() {
                        return Err("`allOf` items have no `enum` value in common".to_owned());
                    }
                    Value::Array(both)
                }
                "description" | "title" => match (old.as_str(), v.as_str()) {
                    (Some(a), Some(b)) if k == "description" => Value::String(format!("{a}\n{b}")),
                    _ => old.clone(),
                },
                "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => {
                    tighter(&old, v, true).ok_or_else(|| format!("`{k}` is not a number"))?
                }
                "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => {
                    tighter(&old, v, false).ok_or_else(|| format!("`{k}` is not a number"))?
                }
                "additionalProperties" if old == Value::Bool(false) || v == &Value::Bool(false) => {
                    Value::Bool(false)
                }
                _ => return Err(format!("`allOf` items disagree on `{k}`")),
            };
            out.insert(k.clone(), merged);
        }
    }
    Ok(out)
}

fn tighter(a: &Value, b: &Value, larger: bool) -> Option<Value> {
    let (x, y) = (a.as_f64()?, b.as_f64()?);
    Some(if (x >= y) == larger {
        a.clone()
    } else {
        b.clone()
    })
}

/// The type an untyped schema's keywords imply, if they imply exactly one.
pub(crate) fn implied_type(m: &Map<String, Value>) -> Option<&'static str> {
    const OBJECT: &[&str] = &[
        "properties",
        "additionalProperties",
        "patternProperties",
        "required",
        "minProperties",
        "maxProperties",
        "propertyNames",
    ];
    const ARRAY: &[&str] = &[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
    ];
    const STRING: &[&str] = &[
        "pattern",
        "minLength",
        "maxLength",
        "format",
        "contentEncoding",
    ];
    const NUMBER: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ];
    let has = |keys: &[&str]| keys.iter().any(|k| m.contains_key(*k));
    let found: Vec<&'static str> = [
        ("object", OBJECT),
        ("array", ARRAY),
        ("string", STRING),
        ("number", NUMBER),
    ]
    .into_iter()
    .filter(|(_, keys)| has(keys))
    .map(|(t, _)| t)
    .collect();
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// A node's several-item `allOf` merged ([`merge_all_of`]) with the node's other keywords, the
/// items' local `$ref`s resolved first (one level).
pub(crate) fn merge_all_of_node(
    root: &Value,
    m: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let mut items = Vec::new();
    for item in m
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut item = item.clone();
        if let Some(r) = item.get("$ref").and_then(Value::as_str).map(str::to_owned) {
            let target = resolve_local_ref(root, &r)
                .ok_or_else(|| format!("`$ref` `{r}` in `allOf` does not resolve"))?;
            let mut siblings = item.as_object().cloned().unwrap_or_default();
            siblings.remove("$ref");
            item = merge_under(target, &siblings)
                .ok_or_else(|| format!("`$ref` `{r}` in `allOf` is not an object schema"))?;
        }
        if item.get("allOf").is_some() || item.get("$ref").is_some() {
            return Err("nested `allOf` or `$ref` chains in `allOf` cannot be merged".to_owned());
        }
        items.push(item);
    }
    let mut rest = m.clone();
    rest.remove("allOf");
    items.push(Value::Object(rest));
    merge_all_of(&items)
}

/// What a map's entries list says about itself.
pub(crate) const MAP_NOTE: &str =
    "A map (object) written as a list of {key, value} entries, each key at most once.";

/// A map as an array of `{"key", "value"}` entries: `m` is the map's schema node (its other
/// keywords are kept or noted), `value` the converted value schema. `closed`: the entry objects
/// get `additionalProperties: false` (strict OpenAI).
pub(crate) fn entries_node(
    rec: &Recorder,
    schema: &Value,
    m: &Map<String, Value>,
    key_pattern: Option<&str>,
    value: Value,
    path: &str,
    closed: bool,
) -> Value {
    let mut key = Map::new();
    key.insert("type".to_owned(), Value::String("string".to_owned()));
    if let Some(p) = key_pattern {
        key.insert("pattern".to_owned(), Value::String(p.to_owned()));
    }
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::String("object".to_owned()));
    let mut props = Map::new();
    props.insert("key".to_owned(), Value::Object(key));
    props.insert("value".to_owned(), value);
    entry.insert("properties".to_owned(), Value::Object(props));
    entry.insert(
        "required".to_owned(),
        Value::Array(vec![Value::from("key"), Value::from("value")]),
    );
    if closed {
        entry.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    let mut out = Map::new();
    out.insert("type".to_owned(), Value::String("array".to_owned()));
    let text = match m.get("description").and_then(Value::as_str) {
        Some(d) if !d.trim().is_empty() => format!("{d}\n{MAP_NOTE}"),
        _ => MAP_NOTE.to_owned(),
    };
    out.insert("description".to_owned(), Value::String(text));
    out.insert("items".to_owned(), Value::Object(entry));
    let mut moved = BTreeMap::new();
    for (k, v) in m {
        match k.as_str() {
            "type" | "description" | "additionalProperties" | "patternProperties" => {}
            "title" => {
                out.insert(k.clone(), v.clone());
            }
            key if DROPPED_META.contains(&key) => {}
            _ => {
                moved.insert(k.clone(), v.clone());
            }
        }
    }
    rec.note(&mut out, path, moved);
    rec.record(
        &mut out,
        path,
        DowngradeKind::MapEntries,
        "a map (any property names) is sent as a list of {key, value} entries",
        Some(schema.clone()),
    );
    Value::Object(out)
}

/// Whether every alternative of an `anyOf`/`oneOf` only constrains an object's property names
/// (`{"required": [...]}` and the like), so the description can say it as a constraint.
pub(crate) fn constraint_only(alts: &Value) -> bool {
    const KEYS: &[&str] = &[
        "required",
        "not",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "description",
        "title",
    ];
    alts.as_array().is_some_and(|a| {
        !a.is_empty()
            && a.iter().all(|alt| {
                alt.as_object()
                    .is_some_and(|m| !m.is_empty() && m.keys().all(|k| KEYS.contains(&k.as_str())))
            })
    })
}

/// Whether the node's `type` is `t` or lists it.
pub(crate) fn type_includes(m: &Map<String, Value>, t: &str) -> bool {
    match m.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x == t),
        _ => false,
    }
}

/// `true` when the schema's own keywords let `null` through.
pub(crate) fn accepts_null(m: &Map<String, Value>) -> bool {
    if m.contains_key("enum") || m.contains_key("const") {
        let in_enum = m
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.iter().any(Value::is_null));
        return in_enum || m.get("const") == Some(&Value::Null);
    }
    type_includes(m, "null")
        || m.get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|alts| {
                alts.iter()
                    .any(|a| a.as_object().is_some_and(|am| type_includes(am, "null")))
            })
}
