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
//!   its schema; a one-element `allOf` is merged into its schema; an `anyOf` stands alone (the
//!   API refuses other keywords next to it): `nullable`, the description and the other keywords
//!   of its node move into each alternative;
//! - `const: "x"` becomes `"enum": ["x"]` (with `"type": "string"`);
//! - `additionalProperties: false` / `true` (and `unevaluatedProperties: false`) are dropped: the
//!   executor still refuses unknown arguments;
//! - `required` stays only on objects and names only their properties: on any other node it says
//!   nothing and is removed; a name without a property schema is written into the description
//!   (`Constraints: required=[...]`; the executor still requires it);
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
//! For schemas declared elsewhere, [`super::convert`] downgrades most of these instead (and
//! reports each one).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::common::{
    constraint_only, fold_combinators, merge_under, push_path, ref_path, resolve_local_ref,
    Downgrade, DowngradeKind, ExportError, Format,
};
use super::walk::{Rules, Walk, Walker};
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
    gemini_parameters(&decl.name, &decl.input_schema, false).map(|(v, _)| v)
}

/// [`parameters`] of any input schema. With `downgrade`, the constructs Gemini cannot express
/// get the documented downgrades (see [`super::convert`]) instead of being errors, and every
/// downgrade is returned.
pub(crate) fn gemini_parameters(
    tool: &str,
    schema: &Value,
    downgrade: bool,
) -> Result<(Value, Vec<Downgrade>), ExportError> {
    let mut g = Gemini {
        base: Walker::new(&RULES, schema, tool, downgrade),
        expanding: Vec::new(),
        nodes: 0,
    };
    let mut out = g.node(schema, "", true)?;
    let report = g.base.rec.finish(&mut out);
    Ok((out, report))
}

struct Gemini<'a> {
    base: Walker<'a>,
    /// References being inlined right now: meeting one again is a cycle.
    expanding: Vec<String>,
    nodes: usize,
}

/// What Gemini's schema subset supports, for the shared walk.
static RULES: Rules = Rules {
    format: Format::Gemini,
    who: "Gemini",
    reason_suffix: "",
    kept: KEPT,
    format_supported,
    closes_objects: false,
    splits_type_lists: true,
    any_of_alone: true,
};

impl<'a> Walk<'a> for Gemini<'a> {
    fn walker(&self) -> &Walker<'a> {
        &self.base
    }

    fn walk(
        &mut self,
        schema: &Value,
        path: &str,
        is_root: bool,
        _depth: usize,
    ) -> Result<Value, ExportError> {
        self.node(schema, path, is_root)
    }
}

impl Gemini<'_> {
    fn err(&self, path: &str, reason: impl Into<String>) -> ExportError {
        self.base.err(path, reason)
    }

    fn node(&mut self, schema: &Value, path: &str, is_root: bool) -> Result<Value, ExportError> {
        let src = match self.base.object_schema(schema, path, is_root) {
            Ok(m) => m,
            Err(done) => return done,
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
                if self.base.rec.enabled && !is_root {
                    let target = resolve_local_ref(self.base.root, &r)
                        .cloned()
                        .unwrap_or_default();
                    let shown = merge_under(&target, &m).unwrap_or(target);
                    return Ok(self.base.rec.json_string(
                        &shown,
                        path,
                        &format!("recursive reference `{r}` cannot be inlined"),
                    ));
                }
                return Err(self.err(
                    path,
                    format!(
                        "recursive reference `{r}` cannot be inlined \
                         (Gemini function schemas have no `$ref`)"
                    ),
                ));
            }
            let target = resolve_local_ref(self.base.root, &r)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` does not resolve")))?;
            let merged = merge_under(target, &m)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` is not an object schema")))?;
            self.expanding.push(r.clone());
            let out = self.node(&merged, &ref_path(&r), is_root);
            self.expanding.pop();
            return out;
        }

        if self.base.rec.enabled {
            if let Some(out) = self.downgraded(schema, &mut m, path, is_root, 0)? {
                return Ok(out);
            }
        }

        let had_one_of = m.contains_key("oneOf");
        match fold_combinators(&mut m, path) {
            Ok(Some(merged)) => return self.node(&merged, path, is_root),
            Ok(None) => {}
            Err((at, reason)) => return Err(self.err(&at, reason)),
        }

        let mut nullable = m.remove("nullable") == Some(Value::Bool(true));
        let mut noted_alternatives = None;
        if self.base.rec.enabled && m.get("anyOf").is_some_and(constraint_only) {
            let key = if had_one_of { "oneOf" } else { "anyOf" };
            noted_alternatives = m.remove("anyOf").map(|v| (key.to_owned(), v));
        }
        if let Some(any) = m.remove("anyOf") {
            // Paths name the original keyword.
            let apath = push_path(path, if had_one_of { "oneOf" } else { "anyOf" });
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

        let inferred = self.base.infer_type(&mut m);

        let mut out = Map::new();
        let mut moved = BTreeMap::new();
        let mut format = None;
        let mut enum_text: Option<(String, Vec<Value>, Vec<Value>)> = None;
        moved.extend(noted_alternatives);
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
                "enum" | "const" if self.base.rec.enabled && enum_needs_text(&k, &v) => {
                    let values = match v {
                        Value::Array(a) if k == "enum" => a,
                        other => vec![other],
                    };
                    let (texts, has_null) = enum_texts(&values);
                    nullable |= has_null;
                    enum_text = Some((kpath, texts, values));
                }
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
                    Value::Object(o)
                        if o.is_empty() && k == "additionalProperties" && self.base.rec.enabled => {
                    }
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
                key if RULES.kept.contains(&key) => {
                    out.insert(k, v);
                }
                _ => self.base.other_keyword(k, v, &kpath, &mut moved)?,
            }
        }

        if let Some((kpath, texts, values)) = enum_text {
            out.insert("type".to_owned(), json!("string"));
            out.insert("enum".to_owned(), Value::Array(texts));
            out.remove("format");
            for k in ["minimum", "maximum", "minLength", "maxLength", "pattern"] {
                if let Some(v) = out.remove(k) {
                    moved.insert(k.to_owned(), v);
                }
            }
            self.base.rec.record(
                &mut out,
                &kpath,
                DowngradeKind::EnumAsText,
                "non-string enum values are sent as their JSON text",
                Some(Value::Array(values)),
            );
        }
        if !out.contains_key("type") {
            if out.contains_key("enum") {
                out.insert("type".to_owned(), json!("string"));
            } else if out.contains_key("properties") {
                out.insert("type".to_owned(), json!("object"));
            } else if out.contains_key("items") {
                out.insert("type".to_owned(), json!("array"));
            } else if !out.contains_key("anyOf") {
                return self.base.as_json_string(
                    schema,
                    path,
                    is_root,
                    "a schema without `type` accepts any value; Gemini needs a type",
                );
            }
        }
        let ty = out.get("type").and_then(Value::as_str).map(str::to_owned);
        if out.contains_key("enum") && ty.as_deref() != Some("string") {
            return Err(self.err(path, "an `enum` on a non-string type cannot be expressed"));
        }
        if let Some(f) = format {
            if f.as_str()
                .is_some_and(|f| (RULES.format_supported)(ty.as_deref(), f))
            {
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
                    return self.base.as_json_string(
                        schema,
                        path,
                        is_root,
                        "an object without properties cannot be expressed \
                         (Gemini rejects an empty OBJECT)",
                    );
                }
            }
            Some("array") => self.base.require_items(&mut out, path)?,
            _ => {}
        }
        self.fix_required(&mut out, ty.as_deref(), &mut moved, path)?;
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        Ok(self.base.finish(out, path, moved, inferred, had_one_of))
    }

    /// `required` only on an object, naming only its properties. A name without a property
    /// schema gets an untyped one (sent as JSON text) in downgrade mode, else it is noted in the
    /// description (the executor still requires it).
    fn fix_required(
        &mut self,
        out: &mut Map<String, Value>,
        ty: Option<&str>,
        moved: &mut BTreeMap<String, Value>,
        path: &str,
    ) -> Result<(), ExportError> {
        let Some(required) = out.remove("required") else {
            return Ok(());
        };
        if ty != Some("object") {
            // `required` only applies to objects: on any other node it says nothing.
            return Ok(());
        }
        let names: Vec<Value> = required.as_array().cloned().unwrap_or_default();
        let mut kept = Vec::new();
        let mut unknown = Vec::new();
        for n in names {
            let known = n
                .as_str()
                .is_some_and(|n| out.get("properties").and_then(|p| p.get(n)).is_some());
            if known {
                kept.push(n);
            } else {
                unknown.push(n);
            }
        }
        if !unknown.is_empty() {
            if self.base.rec.enabled {
                for n in &unknown {
                    let Some(name) = n.as_str() else { continue };
                    let ppath = push_path(&push_path(path, "properties"), name);
                    let node = self.base.rec.json_string(
                        &json!({}),
                        &ppath,
                        "a required property without a schema: any JSON value",
                    );
                    if let Some(Value::Object(p)) = out.get_mut("properties") {
                        p.insert(name.to_owned(), node);
                    } else {
                        let mut p = Map::new();
                        p.insert(name.to_owned(), node);
                        out.insert("properties".to_owned(), Value::Object(p));
                    }
                    kept.push(n.clone());
                }
            } else {
                moved.insert("required".to_owned(), Value::Array(unknown));
            }
        }
        if !kept.is_empty() {
            out.insert("required".to_owned(), Value::Array(kept));
        }
        Ok(())
    }
}

/// Whether an `enum`/`const` holds a value other than a string or `null`.
fn enum_needs_text(key: &str, v: &Value) -> bool {
    match v {
        Value::Array(a) if key == "enum" => a.iter().any(|x| !x.is_string() && !x.is_null()),
        Value::String(_) | Value::Null => false,
        _ => true,
    }
}

/// The string enum standing for `values`: strings as they are, other values as their JSON text;
/// when a text would collide with a string, every value as its JSON text. `true`: `null` was
/// one of the values.
pub(crate) fn enum_texts(values: &[Value]) -> (Vec<Value>, bool) {
    let has_null = values.iter().any(Value::is_null);
    let values: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
    let raw: Vec<String> = values
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let texts: Vec<String> = values
        .iter()
        .filter(|v| !v.is_string())
        .map(|v| v.to_string())
        .collect();
    let collide = texts.iter().any(|t| raw.contains(t));
    let out = values
        .iter()
        .map(|v| match v {
            Value::String(s) if !collide => Value::String(s.clone()),
            other => Value::String(other.to_string()),
        })
        .collect();
    (out, has_null)
}

/// `{"type": "null"}`, possibly with annotations.
fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
}

/// The formats Gemini supports, by type.
fn format_supported(ty: Option<&str>, f: &str) -> bool {
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
            input_schema: schema.into(),
            output_schema: None,
            risk: crate::decl::Risk::Safe,
            concurrency_safe: false,
            idempotent: false,
            open_world: false,
            path_args: vec![],
            script_args: vec![],
            script_lang: None,
            script_setup: Default::default(),
            timeout: None,
            unix_sockets: vec![],
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
    fn an_any_of_stands_alone_with_its_siblings_moved_into_each_alternative() {
        let d = decl(json!({
            "type": "object",
            "properties": {"v": {"description": "d", "anyOf": [
                {"type": "string"}, {"type": "integer", "description": "n"}, {"type": "null"}
            ]}}
        }));
        let p = parameters(&d).expect("expressible");
        assert_eq!(
            p["properties"]["v"],
            json!({"anyOf": [
                {"type": "string", "description": "d", "nullable": true},
                {"type": "integer", "description": "d\nn", "nullable": true}
            ]})
        );
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
