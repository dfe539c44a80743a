//! The documented rules of each provider's schema subset, as checkers returning the list of
//! violations of one exported schema: OpenAI strict structured outputs (supported keywords, every
//! object closed with every property required, `$ref`s into `$defs`, the size and nesting limits),
//! Gemini's OpenAPI 3.0 subset (one non-null type, `anyOf` alone, string enums, its formats, no
//! `$ref`), and Anthropic's and MCP's object root.

use serde_json::{json, Map, Value};
use tool_core::schema::export::openai;

const OPENAI_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Every rule of OpenAI's strict subset the export promises, as a list of violations.
pub(crate) fn openai_strict_violations(root: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if root.get("type") != Some(&json!("object")) {
        out.push("root: not `type: object`".to_owned());
    }
    if root.get("anyOf").is_some() {
        out.push("root: an `anyOf`".to_owned());
    }
    check_openai(root, root, "", &mut out, 0);
    let mut size = Size::default();
    size.count(root, 0);
    if size.properties > OPENAI_MAX_PROPERTIES {
        out.push(format!(
            "{} object properties (at most {OPENAI_MAX_PROPERTIES})",
            size.properties
        ));
    }
    if size.depth > OPENAI_MAX_NESTING {
        out.push(format!(
            "{} levels of object nesting (at most {OPENAI_MAX_NESTING})",
            size.depth
        ));
    }
    if size.enum_values > OPENAI_MAX_ENUM_VALUES {
        out.push(format!(
            "{} enum values (at most {OPENAI_MAX_ENUM_VALUES})",
            size.enum_values
        ));
    }
    if size.string_len > OPENAI_MAX_STRING_LEN {
        out.push(format!(
            "{} characters of names and enum values (at most {OPENAI_MAX_STRING_LEN})",
            size.string_len
        ));
    }
    if size.large_enum_len > OPENAI_MAX_LARGE_ENUM_LEN {
        out.push(format!(
            "an enum of more than 250 values with {} characters (at most {OPENAI_MAX_LARGE_ENUM_LEN})",
            size.large_enum_len
        ));
    }
    out
}

/// OpenAI's documented limits of a strict schema: object properties in all, levels of object
/// nesting, enum values in all, characters of property names, definition names, enum and const
/// values, and characters of one enum of more than 250 values.
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_STRING_LEN: usize = 120_000;
const OPENAI_MAX_LARGE_ENUM_LEN: usize = 15_000;

/// What OpenAI's size limits count, over a whole schema.
#[derive(Default)]
struct Size {
    properties: usize,
    depth: usize,
    enum_values: usize,
    string_len: usize,
    large_enum_len: usize,
}

impl Size {
    fn count(&mut self, node: &Value, depth: usize) {
        let Value::Object(m) = node else { return };
        let is_object = m.contains_key("properties");
        let depth = depth + usize::from(is_object);
        self.depth = self.depth.max(depth);
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string().len(), str::len);
        if let Some(Value::Object(p)) = m.get("properties") {
            self.properties += p.len();
            self.string_len += p.keys().map(String::len).sum::<usize>();
        }
        if let Some(Value::Object(d)) = m.get("$defs") {
            self.string_len += d.keys().map(String::len).sum::<usize>();
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            self.enum_values += e.len();
            let len: usize = e.iter().map(text).sum();
            self.string_len += len;
            if e.len() > 250 {
                self.large_enum_len = self.large_enum_len.max(len);
            }
        }
        if let Some(c) = m.get("const") {
            self.string_len += text(c);
        }
        let mut children = Vec::new();
        for_children(m, "", &mut |_, c| children.push(c.clone()));
        for c in &children {
            self.count(c, depth);
        }
    }
}

fn check_openai(root: &Value, node: &Value, path: &str, out: &mut Vec<String>, depth: usize) {
    let Value::Object(m) = node else {
        out.push(format!("{path}: not an object schema"));
        return;
    };
    if depth > 64 {
        out.push(format!("{path}: too deep"));
        return;
    }
    for k in m.keys() {
        if !OPENAI_KEYS.contains(&k.as_str()) {
            out.push(format!("{path}: keyword `{k}` not supported"));
        }
        if k == "$defs" && !path.is_empty() {
            out.push(format!("{path}: `$defs` below the root"));
        }
    }
    if let Some(r) = m.get("$ref") {
        let ok = r.as_str().is_some_and(|r| {
            (r == "#" || r.starts_with("#/$defs/"))
                && root.pointer(r.trim_start_matches('#')).is_some()
        });
        if !ok {
            out.push(format!("{path}: `$ref` {r} does not resolve into `$defs`"));
        }
        if m.len() > 1 {
            out.push(format!("{path}: keywords next to `$ref`"));
        }
        return;
    }
    if !["type", "anyOf", "enum", "const"]
        .iter()
        .any(|k| m.contains_key(*k))
    {
        out.push(format!("{path}: untyped"));
    }
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        Some(other) => {
            out.push(format!("{path}: type {other}"));
            vec![]
        }
        None => vec![],
    };
    for t in &types {
        if !JSON_TYPES.contains(t) {
            out.push(format!("{path}: unknown type {t}"));
        }
    }
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        if !openai::STRICT_FORMATS.contains(&f) {
            out.push(format!("{path}: format {f}"));
        }
    }
    if types.contains(&"object") || m.contains_key("properties") {
        if m.get("additionalProperties") != Some(&json!(false)) {
            out.push(format!("{path}: object not closed"));
        }
        let props: Vec<&String> = m
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let req: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut props: Vec<&str> = props.iter().map(|p| p.as_str()).collect();
        let mut req = req;
        props.sort_unstable();
        req.sort_unstable();
        if props != req {
            out.push(format!("{path}: not every property required"));
        }
    } else if m.contains_key("required") || m.contains_key("additionalProperties") {
        out.push(format!("{path}: object keywords on a non-object"));
    }
    if types.contains(&"array") && !m.contains_key("items") {
        out.push(format!("{path}: array without items"));
    }
    for_children(m, path, &mut |p, c| {
        check_openai(root, c, p, out, depth + 1)
    });
}

const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
    "example",
    "anyOf",
    "propertyOrdering",
];

/// Every rule of Gemini's OpenAPI subset the export promises, as a list of violations.
pub(crate) fn gemini_violations(root: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if root.get("type") != Some(&json!("object")) {
        out.push("root: not `type: object`".to_owned());
    }
    check_gemini(root, "", true, &mut out);
    out
}

/// Anthropic's `input_schema` and MCP's `inputSchema`: a JSON Schema whose root is `type: object`.
pub(crate) fn object_root_violations(root: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if root.get("type") != Some(&json!("object")) {
        out.push("root: not `type: object`".to_owned());
    }
    match tool_core::schema::compile(root) {
        Ok(_) => {}
        Err(e) => out.push(format!("not a valid JSON Schema: {e}")),
    }
    out
}

fn check_gemini(node: &Value, path: &str, is_root: bool, out: &mut Vec<String>) {
    let Value::Object(m) = node else {
        out.push(format!("{path}: not an object schema"));
        return;
    };
    for k in m.keys() {
        if !GEMINI_KEYS.contains(&k.as_str()) {
            out.push(format!("{path}: keyword `{k}` not supported"));
        }
    }
    if m.contains_key("anyOf") && m.len() > 1 {
        let others: Vec<&String> = m.keys().filter(|k| *k != "anyOf").collect();
        out.push(format!("{path}: `anyOf` next to {others:?}"));
    }
    let ty = match m.get("type") {
        Some(Value::String(t)) if t != "null" && JSON_TYPES.contains(&t.as_str()) => {
            Some(t.as_str())
        }
        Some(other) => {
            out.push(format!("{path}: type {other}"));
            None
        }
        None => {
            if !m.contains_key("anyOf") {
                out.push(format!("{path}: untyped"));
            }
            None
        }
    };
    if let Some(e) = m.get("enum") {
        if ty != Some("string") || !e.as_array().is_some_and(|e| e.iter().all(Value::is_string)) {
            out.push(format!("{path}: enum {e} on {ty:?}"));
        }
    }
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        let ok = matches!(
            (ty, f),
            (Some("string"), "enum" | "date-time")
                | (Some("number"), "float" | "double")
                | (Some("integer"), "int32" | "int64")
        );
        if !ok {
            out.push(format!("{path}: format {f} on {ty:?}"));
        }
    }
    if let Some(r) = m.get("required") {
        let props = m.get("properties").and_then(Value::as_object);
        let ok = ty == Some("object")
            && r.as_array().is_some_and(|r| {
                r.iter().all(|n| {
                    n.as_str()
                        .is_some_and(|n| props.is_some_and(|p| p.contains_key(n)))
                })
            });
        if !ok {
            out.push(format!(
                "{path}: `required` {r} on {ty:?} or naming unknown properties"
            ));
        }
    }
    if ty == Some("object")
        && !is_root
        && m.get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
    {
        out.push(format!("{path}: object without properties"));
    }
    if ty == Some("array") && !m.contains_key("items") {
        out.push(format!("{path}: array without items"));
    }
    for_children(m, path, &mut |p, c| check_gemini(c, p, false, out));
}

pub(crate) fn for_children(m: &Map<String, Value>, path: &str, f: &mut dyn FnMut(&str, &Value)) {
    for key in ["properties", "$defs"] {
        if let Some(Value::Object(children)) = m.get(key) {
            for (name, c) in children {
                f(&format!("{path}/{key}/{name}"), c);
            }
        }
    }
    if let Some(Value::Array(alts)) = m.get("anyOf") {
        for (i, c) in alts.iter().enumerate() {
            f(&format!("{path}/anyOf/{i}"), c);
        }
    }
    if let Some(c) = m.get("items") {
        f(&format!("{path}/items"), c);
    }
}

/// A Gemini schema as the JSON Schema it means: `nullable: true` lets `null` through.
pub(crate) fn nullable_as_json_schema(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out: Map<String, Value> = m
                .iter()
                .map(|(k, c)| {
                    let c = match k.as_str() {
                        "properties" => Value::Object(
                            c.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, s)| (n.clone(), nullable_as_json_schema(s)))
                                .collect(),
                        ),
                        "items" => nullable_as_json_schema(c),
                        "anyOf" => Value::Array(
                            c.as_array()
                                .into_iter()
                                .flatten()
                                .map(nullable_as_json_schema)
                                .collect(),
                        ),
                        _ => c.clone(),
                    };
                    (k.clone(), c)
                })
                .collect();
            if out.remove("nullable") == Some(json!(true)) {
                json!({"anyOf": [Value::Object(out), {"type": "null"}]})
            } else {
                Value::Object(out)
            }
        }
        other => other.clone(),
    }
}
