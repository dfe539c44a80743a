//! Gemini function declarations, in the Gemini API's subset of the OpenAPI 3.0 schema object.
//!
//! Shape: `{"functionDeclarations": [{"name", "description", "parameters"?}]}`; `parameters` is
//! left out for a tool without arguments, as the API asks.
//!
//! The schema subset has no `$ref`, no `additionalProperties`, no JSON Schema type arrays and only
//! string enums. The rewrite ([`parameters`]):
//! - local `$ref` are inlined (keywords next to a `$ref` win over the target's); `$defs` and
//!   `definitions` are removed once inlined;
//! - `type: [T, "null"]`, a `null` alternative in `anyOf`/`oneOf`, and `null` in an `enum` become
//!   `"nullable": true`; `oneOf` becomes `anyOf`; a single remaining alternative is merged into
//!   its schema; a one-element `allOf` is merged into its schema;
//! - `const: "x"` becomes `"enum": ["x"]` (with `"type": "string"`);
//! - `additionalProperties: false` / `true` (and `unevaluatedProperties: false`) are dropped: the
//!   executor still refuses unknown arguments;
//! - kept keywords: `type`, `format` (only `enum` and `date-time` for strings, `float` and `double`
//!   for numbers, `int32` and `int64` for integers), `title`, `description`, `nullable`, `enum`,
//!   `properties`, `required`, `items`, `anyOf`, `minItems`, `maxItems`, `minProperties`,
//!   `maxProperties`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `default`,
//!   `example`, `propertyOrdering`;
//! - downgraded into the description: every other keyword (`exclusiveMinimum`, `multipleOf`,
//!   `uniqueItems`, other `format`s such as `uint32` or `email`, `examples`, ...).
//!
//! Errors (tool and JSON pointer named): a recursive `$ref` (it cannot be inlined), a non-string
//! `enum` or `const`, a map (`additionalProperties` with a schema), an object without properties
//! below the root (the API rejects an empty OBJECT), an array without `items`, several non-null
//! types in one `type`, a schema that is only `null`, an untyped schema (`{}`, `true`), `allOf`
//! with several schemas, `not`, `if`/`then`/`else`, `patternProperties`, `dependentSchemas`,
//! `prefixItems` (tuples), `unevaluatedItems`, `$dynamicRef`, and a schema that grows past
//! [`MAX_INLINED_NODES`] schemas once inlined.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::common::{
    fold_combinators, merge_under, note_in_description, push_path, ref_path, resolve_local_ref,
    ExportError, Format, DROPPED_META, UNSUPPORTED_STRUCTURE,
};
use crate::decl::ToolDecl;

/// Keywords of the Gemini schema object that are kept as they are.
const KEPT: &[&str] = &[
    "title",
    "description",
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
    "propertyOrdering",
];

/// Most schemas one tool's parameters may hold after `$ref` inlining.
pub const MAX_INLINED_NODES: usize = 10_000;

/// One function declaration.
pub fn declaration(decl: &ToolDecl) -> Result<Value, ExportError> {
    let params = parameters(decl)?;
    let mut d = json!({"name": decl.name, "description": decl.description});
    let has_props = params
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_props {
        d["parameters"] = params;
    }
    Ok(d)
}

/// The tool's input schema rewritten into Gemini's schema subset (see the module docs).
pub fn parameters(decl: &ToolDecl) -> Result<Value, ExportError> {
    let mut g = Gemini {
        root: &decl.input_schema,
        tool: &decl.name,
        expanding: Vec::new(),
        nodes: 0,
    };
    g.node(&decl.input_schema, "", true)
}

struct Gemini<'a> {
    root: &'a Value,
    tool: &'a str,
    /// References being inlined right now: meeting one again is a cycle.
    expanding: Vec<String>,
    nodes: usize,
}

impl Gemini<'_> {
    fn err(&self, path: &str, reason: impl Into<String>) -> ExportError {
        ExportError {
            format: Format::Gemini,
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    fn node(&mut self, schema: &Value, path: &str, is_root: bool) -> Result<Value, ExportError> {
        let Value::Object(src) = schema else {
            return Err(self.err(
                path,
                "a boolean schema accepts anything or nothing; Gemini needs a typed schema",
            ));
        };
        self.nodes += 1;
        if self.nodes > MAX_INLINED_NODES {
            return Err(self.err(
                path,
                format!("more than {MAX_INLINED_NODES} schemas once `$ref`s are inlined"),
            ));
        }
        let mut m = src.clone();

        if let Some(r) = m.remove("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| self.err(path, "`$ref` is not a string"))?
                .to_owned();
            if self.expanding.contains(&r) {
                return Err(self.err(
                    path,
                    format!(
                        "recursive reference `{r}` cannot be inlined \
                         (Gemini function schemas have no `$ref`)"
                    ),
                ));
            }
            let target = resolve_local_ref(self.root, &r)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` does not resolve")))?;
            let merged = merge_under(target, &m)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` is not an object schema")))?;
            self.expanding.push(r.clone());
            let out = self.node(&merged, &ref_path(&r), is_root);
            self.expanding.pop();
            return out;
        }

        match fold_combinators(&mut m, path) {
            Ok(Some(merged)) => return self.node(&merged, path, is_root),
            Ok(None) => {}
            Err((at, reason)) => return Err(self.err(&at, reason)),
        }

        let mut nullable = m.remove("nullable") == Some(Value::Bool(true));
        if let Some(any) = m.remove("anyOf") {
            let apath = push_path(path, "anyOf");
            let alts = any
                .as_array()
                .ok_or_else(|| self.err(&apath, "`anyOf` is not an array"))?;
            let mut kept: Vec<(usize, &Value)> = Vec::new();
            for (i, alt) in alts.iter().enumerate() {
                if is_null_schema(alt) {
                    nullable = true;
                } else {
                    kept.push((i, alt));
                }
            }
            match kept.as_slice() {
                [] => return Err(self.err(&apath, "a schema that only accepts `null`")),
                [(i, only)] => {
                    // One alternative left: it is the schema, plus the use site's keywords.
                    let merged = merge_under(only, &m).ok_or_else(|| {
                        self.err(&push_path(&apath, &i.to_string()), "not an object schema")
                    })?;
                    let mut out =
                        self.node(&merged, &push_path(&apath, &i.to_string()), is_root)?;
                    if nullable {
                        if let Value::Object(o) = &mut out {
                            o.insert("nullable".to_owned(), Value::Bool(true));
                        }
                    }
                    return Ok(out);
                }
                many => {
                    let mut new_alts = Vec::with_capacity(many.len());
                    for (i, alt) in many {
                        new_alts.push(self.node(alt, &push_path(&apath, &i.to_string()), false)?);
                    }
                    m.insert("anyOf".to_owned(), Value::Array(new_alts));
                }
            }
        }

        let mut out = Map::new();
        let mut moved = BTreeMap::new();
        let mut format = None;
        for (k, v) in m {
            let kpath = push_path(path, &k);
            match k.as_str() {
                "anyOf" => {
                    // Already rewritten above.
                    out.insert(k, v);
                }
                "type" => match v {
                    Value::String(t) if t == "null" => {
                        return Err(self.err(&kpath, "a schema that only accepts `null`"))
                    }
                    Value::String(_) => {
                        out.insert(k, v);
                    }
                    Value::Array(ts) => {
                        let mut non_null = Vec::new();
                        for t in ts {
                            if t == "null" {
                                nullable = true;
                            } else {
                                non_null.push(t);
                            }
                        }
                        match non_null.as_slice() {
                            [one] => {
                                out.insert(k, one.clone());
                            }
                            [] => return Err(self.err(&kpath, "a schema that only accepts `null`")),
                            _ => {
                                return Err(self.err(
                                    &kpath,
                                    "several non-null types in one `type` cannot be expressed",
                                ))
                            }
                        }
                    }
                    _ => return Err(self.err(&kpath, "`type` is neither a string nor an array")),
                },
                "enum" => {
                    let values = v
                        .as_array()
                        .ok_or_else(|| self.err(&kpath, "`enum` is not an array"))?;
                    let mut strings = Vec::with_capacity(values.len());
                    for (i, value) in values.iter().enumerate() {
                        match value {
                            Value::String(_) => strings.push(value.clone()),
                            Value::Null => nullable = true,
                            other => {
                                return Err(self.err(
                                    &push_path(&kpath, &i.to_string()),
                                    format!(
                                        "enum value {other} is not a string \
                                         (Gemini enums are strings only)"
                                    ),
                                ))
                            }
                        }
                    }
                    out.insert(k, Value::Array(strings));
                }
                "const" => match v {
                    Value::String(_) => {
                        out.insert("enum".to_owned(), Value::Array(vec![v]));
                    }
                    other => {
                        return Err(self.err(
                            &kpath,
                            format!(
                                "const value {other} is not a string \
                                 (Gemini enums are strings only)"
                            ),
                        ))
                    }
                },
                "properties" => {
                    let props = v
                        .as_object()
                        .ok_or_else(|| self.err(&kpath, "`properties` is not an object"))?;
                    let mut new_props = Map::new();
                    for (name, p) in props {
                        new_props
                            .insert(name.clone(), self.node(p, &push_path(&kpath, name), false)?);
                    }
                    out.insert(k, Value::Object(new_props));
                }
                "required" => {
                    out.insert(k, v);
                }
                "additionalProperties" | "unevaluatedProperties" => match v {
                    Value::Bool(false) => {}
                    Value::Bool(true) if k == "additionalProperties" => {}
                    _ => {
                        return Err(self.err(
                            &kpath,
                            format!(
                                "a map (`{k}` with a schema) cannot be expressed \
                                 (Gemini has no `additionalProperties`)"
                            ),
                        ))
                    }
                },
                "items" => {
                    out.insert(k, self.node(&v, &kpath, false)?);
                }
                "$defs" | "definitions" => {}
                "format" => format = Some(v),
                key if KEPT.contains(&key) => {
                    out.insert(k, v);
                }
                key if DROPPED_META.contains(&key) => {}
                key if UNSUPPORTED_STRUCTURE.contains(&key) => {
                    return Err(self.err(&kpath, format!("`{key}` cannot be expressed")));
                }
                _ => {
                    moved.insert(k, v);
                }
            }
        }

        if !out.contains_key("type") {
            if out.contains_key("enum") {
                out.insert("type".to_owned(), json!("string"));
            } else if out.contains_key("properties") {
                out.insert("type".to_owned(), json!("object"));
            } else if out.contains_key("items") {
                out.insert("type".to_owned(), json!("array"));
            } else if !out.contains_key("anyOf") {
                return Err(self.err(
                    path,
                    "a schema without `type` accepts any value; Gemini needs a type",
                ));
            }
        }
        let ty = out.get("type").and_then(Value::as_str).map(str::to_owned);
        if out.contains_key("enum") && ty.as_deref() != Some("string") {
            return Err(self.err(path, "an `enum` on a non-string type cannot be expressed"));
        }
        if let Some(f) = format {
            if format_allowed(ty.as_deref(), &f) {
                out.insert("format".to_owned(), f);
            } else {
                moved.insert("format".to_owned(), f);
            }
        }
        match ty.as_deref() {
            Some("object") if !is_root => {
                let empty = out
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(Map::is_empty);
                if empty {
                    return Err(self.err(
                        path,
                        "an object without properties cannot be expressed \
                         (Gemini rejects an empty OBJECT)",
                    ));
                }
            }
            Some("array") if !out.contains_key("items") => {
                return Err(self.err(path, "an array without `items` cannot be expressed"));
            }
            _ => {}
        }
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        note_in_description(&mut out, moved);
        Ok(Value::Object(out))
    }
}

/// `{"type": "null"}`, possibly with annotations.
fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
}

fn format_allowed(ty: Option<&str>, format: &Value) -> bool {
    let Some(f) = format.as_str() else {
        return false;
    };
    matches!(
        (ty, f),
        (Some("string"), "enum" | "date-time")
            | (Some("number"), "float" | "double")
            | (Some("integer"), "int32" | "int64")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(schema: Value) -> ToolDecl {
        ToolDecl {
            name: "t".into(),
            description: "d".into(),
            input_schema: schema,
            output_schema: None,
            risk: crate::decl::Risk::Safe,
            concurrency_safe: false,
            idempotent: false,
            open_world: false,
            path_args: vec![],
            script_args: vec![],
            script_lang: None,
            timeout: None,
            source: "test".into(),
        }
    }

    #[test]
    fn option_of_ref_becomes_nullable_inlined_object() {
        let d = decl(json!({
            "type": "object",
            "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}], "description": "pt"}},
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer", "format": "int32"}}, "required": ["x"]}}
        }));
        let p = parameters(&d).expect("expressible");
        assert_eq!(
            p["properties"]["p"],
            json!({"type": "object", "nullable": true, "description": "pt",
                   "properties": {"x": {"type": "integer", "format": "int32"}}, "required": ["x"]})
        );
        assert!(p.get("$defs").is_none());
    }

    #[test]
    fn self_reference_is_an_error_at_the_closing_ref() {
        let d = decl(json!({
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}
        }));
        let e = parameters(&d).expect_err("recursive");
        assert_eq!(e.path, "/$defs/N/properties/next");
        assert!(e.reason.contains("recursive"), "{e}");
    }

    #[test]
    fn unsupported_constructs_are_errors_with_paths() {
        let cases = [
            (json!({"flag": {"const": true}}), "/properties/flag/const"),
            (
                json!({"v": {"type": ["string", "integer"]}}),
                "/properties/v/type",
            ),
            (json!({"v": {}}), "/properties/v"),
            (json!({"v": {"type": "object"}}), "/properties/v"),
            (json!({"v": {"type": "array"}}), "/properties/v"),
            (
                json!({"v": {"not": {"type": "string"}}}),
                "/properties/v/not",
            ),
            (
                json!({"v": {"allOf": [{"type": "string"}, {"minLength": 1}]}}),
                "/properties/v/allOf",
            ),
        ];
        for (props, path) in cases {
            let d = decl(json!({"type": "object", "properties": props}));
            let e = parameters(&d).expect_err(path);
            assert_eq!(e.path, path, "{e}");
            assert_eq!(e.tool, "t");
        }
    }

    #[test]
    fn closed_objects_and_unsupported_formats_are_downgraded() {
        let d = decl(json!({
            "type": "object",
            "properties": {"mail": {"type": "string", "format": "email", "exclusiveMinimum": 0}},
            "additionalProperties": false
        }));
        let p = parameters(&d).expect("expressible");
        assert!(p.get("additionalProperties").is_none());
        assert_eq!(
            p["properties"]["mail"],
            json!({"type": "string", "description": "Constraints: exclusiveMinimum=0, format=\"email\"."})
        );
    }
}
