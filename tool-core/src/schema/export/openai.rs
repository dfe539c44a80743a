//! OpenAI Chat Completions function tools, with the strict-mode (structured outputs) rewrite.
//!
//! Shape: `{"type": "function", "function": {"name", "description", "parameters", "strict"}}`.
//!
//! Without `strict` the parameters are the input schema as is, minus `$schema`.
//!
//! With `strict` ([`strict_schema`]), following OpenAI's documented subset of JSON Schema for
//! structured outputs:
//! - every object gets `"additionalProperties": false` and lists all its properties in
//!   `required`; a property that was optional becomes nullable (`"type": [T, "null"]`, or
//!   `anyOf: [T, {"type": "null"}]` when `T` has no plain type or carries an `enum`/`const`).
//!   The executor maps a strict model's arguments back ([`strip_optional_nulls`], see
//!   [`super::accept`]), so a `null` for an omitted optional argument is read as "absent" before
//!   validation against the canonical schema;
//! - `oneOf` becomes `anyOf`; a one-element `allOf` is merged into its schema;
//! - local `$ref`s are kept (strict mode supports them, recursion included) and all point into
//!   the root `$defs`: a reference elsewhere (`#/definitions/A`, `#/properties/a`,
//!   `#/$defs/A/properties/b`) is rewritten to a `$defs` entry holding its converted target
//!   (`definitions/A` keeps the name `A`, other pointers join their tokens with `_`), so no `$ref`
//!   dangles; a `$ref` with sibling keywords is inlined one level so the siblings can stay; the
//!   definitions no `$ref` reaches are dropped;
//! - kept keywords: `type`, `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
//!   `enum`, `const`, `$ref`, `$defs`, `definitions`, `description`, `title`, `pattern`, `format`
//!   (only `date-time`, `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`),
//!   `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minItems`,
//!   `maxItems`;
//! - downgraded into the description: every other keyword (`minLength`, `maxLength`, other
//!   `format`s such as `uint32`, `default`, `examples`, `uniqueItems`, `minProperties`, ...);
//! - errors: maps (`additionalProperties` with a schema), free-form objects (no `properties`),
//!   untyped schemas (`{}`, `true`), arrays without `items`, `allOf` with several schemas, `anyOf`
//!   at the root, `not`, `if`/`then`/`else`, `patternProperties`, `dependentSchemas`,
//!   `prefixItems` (tuples), `unevaluatedItems`, `unevaluatedProperties` other than `false`,
//!   `$dynamicRef`, and a `required` name without a property schema. For schemas declared
//!   elsewhere, [`super::convert`] downgrades most of these instead (and reports each one).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

pub use super::accept::strip_optional_nulls;
use super::common::{
    accepts_null, constraint_only, entries_node, fold_combinators, implied_type, merge_all_of_node,
    merge_under, push_path, ref_path, resolve_local_ref, type_includes, without_schema_keyword,
    Downgrade, DowngradeKind, ExportError, ExportOptions, Format, Recorder, DROPPED_META,
    UNSUPPORTED_STRUCTURE,
};
use crate::decl::ToolDecl;

/// String formats strict mode accepts.
pub const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Validation keywords strict mode accepts as they are.
pub const STRICT_CONSTRAINTS: &[&str] = &[
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Longest chain of `$ref`-with-siblings / `allOf` inlining before the export gives up.
const MAX_INLINE_DEPTH: usize = 64;

/// One tool in the Chat Completions `tools` shape.
pub fn tool(decl: &ToolDecl, opts: ExportOptions) -> Result<Value, ExportError> {
    let parameters = if opts.strict {
        strict_schema(decl)?
    } else {
        without_schema_keyword(&decl.input_schema)
    };
    Ok(json!({
        "type": "function",
        "function": {
            "name": decl.name,
            "description": decl.description,
            "parameters": parameters,
            "strict": opts.strict,
        }
    }))
}

/// The tool's input schema rewritten for OpenAI strict mode (see the module docs).
pub fn strict_schema(decl: &ToolDecl) -> Result<Value, ExportError> {
    strict_parameters(&decl.name, &decl.input_schema, false).map(|(v, _)| v)
}

/// [`strict_schema`] of any input schema. With `downgrade`, the constructs strict mode cannot
/// express get the documented downgrades (see [`super::convert`]) instead of being errors, and
/// every downgrade is returned.
pub(crate) fn strict_parameters(
    tool: &str,
    schema: &Value,
    downgrade: bool,
) -> Result<(Value, Vec<Downgrade>), ExportError> {
    let walk = Strict {
        root: schema,
        tool,
        rec: Recorder::new(downgrade),
        defs: RefCell::new(Map::new()),
        def_names: RefCell::new(BTreeMap::new()),
    };
    let mut out = walk.node(schema, "", true, 0)?;
    let defs = walk.defs.take();
    if !defs.is_empty() {
        if let Value::Object(m) = &mut out {
            m.insert("$defs".to_owned(), Value::Object(defs));
        }
    }
    prune_unused_defs(&mut out);
    let report = walk.rec.finish(&mut out);
    Ok((out, report))
}

/// Drop the `$defs` entries no `$ref` reaches any more (a `$ref` with siblings was inlined),
/// following references from the schema outside `$defs`, then from each definition reached.
fn prune_unused_defs(schema: &mut Value) {
    fn refs(v: &Value, skip_defs: bool, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    if skip_defs && k == "$defs" {
                        continue;
                    }
                    if k == "$ref" {
                        if let Some(name) = child.as_str().and_then(|r| r.strip_prefix("#/$defs/"))
                        {
                            // The definition's name: the first token, unescaped.
                            let first = name.split('/').next().unwrap_or(name);
                            out.push(first.replace("~1", "/").replace("~0", "~"));
                        }
                    } else {
                        refs(child, false, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|c| refs(c, false, out)),
            _ => {}
        }
    }
    let Some(Value::Object(defs)) = schema.get("$defs").cloned() else {
        return;
    };
    let mut todo = Vec::new();
    refs(schema, true, &mut todo);
    let mut used = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if used.insert(name.clone()) {
            if let Some(def) = defs.get(&name) {
                refs(def, false, &mut todo);
            }
        }
    }
    if let Some(Value::Object(m)) = schema.get_mut("$defs") {
        m.retain(|name, _| used.contains(name));
        if m.is_empty() {
            if let Value::Object(root) = schema {
                root.remove("$defs");
            }
        }
    }
}

struct Strict<'a> {
    root: &'a Value,
    tool: &'a str,
    rec: Recorder,
    /// The converted targets of the `$ref`s met so far, by `$defs` name.
    defs: RefCell<Map<String, Value>>,
    /// The `$defs` name of each reference met so far (`#/definitions/A` → `A`).
    def_names: RefCell<BTreeMap<String, String>>,
}

/// Keywords strict mode cannot carry whose meaning a description can still say (downgrade mode).
const NOTABLE: &[&str] = &["not", "if", "then", "else", "dependentSchemas"];

impl Strict<'_> {
    fn err(&self, path: &str, reason: impl Into<String>) -> ExportError {
        ExportError {
            format: Format::OpenAi,
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            reason: format!("{} (OpenAI strict mode)", reason.into()),
        }
    }

    /// The JSON-string downgrade of `schema` (downgrade mode, below the root), else the error.
    fn as_json_string(
        &self,
        schema: &Value,
        path: &str,
        is_root: bool,
        why: &str,
    ) -> Result<Value, ExportError> {
        if self.rec.enabled && !is_root {
            Ok(self.rec.json_string(schema, path, why))
        } else {
            Err(self.err(path, why))
        }
    }

    fn mark(&self, v: &mut Value, path: &str, kind: DowngradeKind, detail: &str) {
        if let Value::Object(m) = v {
            self.rec.record(m, path, kind, detail, None);
        }
    }

    /// `{"$ref": "#/$defs/NAME"}` for a reference, its target converted into `$defs` (once).
    fn reference(
        &self,
        r: &str,
        target: &Value,
        path: &str,
        depth: usize,
    ) -> Result<Value, ExportError> {
        if r == "#" {
            return Ok(json!({"$ref": "#"}));
        }
        let known = self.def_names.borrow().get(r).cloned();
        let name = match known {
            Some(name) => name,
            None => {
                let pointer = r.strip_prefix("#/").unwrap_or(r);
                let tokens: Vec<String> = pointer
                    .split('/')
                    .map(|t| t.replace("~1", "/").replace("~0", "~"))
                    .collect();
                let base = match tokens.as_slice() {
                    [top, name] if top == "$defs" || top == "definitions" => name.clone(),
                    _ => tokens.join("_").replace('$', ""),
                };
                let taken: BTreeSet<String> = self.def_names.borrow().values().cloned().collect();
                let mut name = base.clone();
                let mut n = 2;
                while taken.contains(&name) {
                    name = format!("{base}_{n}");
                    n += 1;
                }
                self.def_names
                    .borrow_mut()
                    .insert(r.to_owned(), name.clone());
                let converted = self.node(target, &ref_path(r), false, depth + 1)?;
                self.defs.borrow_mut().insert(name.clone(), converted);
                name
            }
        };
        let new_ref = format!("#/$defs/{}", name.replace('~', "~0").replace('/', "~1"));
        let mut out = json!({ "$ref": new_ref });
        if new_ref != r {
            let detail = format!("`$ref` `{r}` now points at `{new_ref}`");
            self.mark(&mut out, path, DowngradeKind::RefMoved, &detail);
        }
        Ok(out)
    }

    fn node(
        &self,
        schema: &Value,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Value, ExportError> {
        let src = match schema {
            Value::Object(m) => m,
            Value::Bool(true) => {
                return self.as_json_string(
                    &json!({}),
                    path,
                    is_root,
                    "a `true` schema accepts any value; strict mode needs a type",
                )
            }
            _ => {
                return Err(self.err(
                    path,
                    "a boolean schema accepts anything or nothing; a typed schema is needed",
                ))
            }
        };
        if depth > MAX_INLINE_DEPTH {
            return Err(self.err(path, "`$ref`/`allOf` chain too deep to inline"));
        }
        let mut m = src.clone();

        if let Some(r) = m.get("$ref").cloned() {
            let r = r
                .as_str()
                .ok_or_else(|| self.err(path, "`$ref` is not a string"))?;
            let target = resolve_local_ref(self.root, r)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` does not resolve")))?;
            if m.len() == 1 {
                return self.reference(r, target, path, depth);
            }
            // Strict mode rejects keywords next to `$ref`: inline the target one level.
            m.remove("$ref");
            let merged = merge_under(target, &m)
                .ok_or_else(|| self.err(path, format!("`$ref` `{r}` is not an object schema")))?;
            return self.node(&merged, path, is_root, depth + 1);
        }

        if self.rec.enabled {
            if let Some(out) = self.downgraded(schema, &mut m, path, is_root, depth)? {
                return Ok(out);
            }
        }

        let had_one_of = m.contains_key("oneOf");
        match fold_combinators(&mut m, path) {
            Ok(Some(merged)) => return self.node(&merged, path, is_root, depth + 1),
            Ok(None) => {}
            Err((at, reason)) => return Err(self.err(&at, reason)),
        }

        let mut inferred = None;
        if self.rec.enabled
            && !["type", "anyOf", "enum", "const"]
                .iter()
                .any(|k| m.contains_key(*k))
        {
            if let Some(t) = implied_type(&m) {
                m.insert("type".to_owned(), json!(t));
                inferred = Some(t);
            }
        }

        let props = m.remove("properties");
        let required = m.remove("required");
        let additional = m.remove("additionalProperties");
        let is_object = type_includes(&m, "object") || props.is_some();

        let mut out = Map::new();
        let mut moved = BTreeMap::new();
        for (k, v) in m {
            let kpath = push_path(path, &k);
            match k.as_str() {
                "type" | "enum" | "const" | "description" | "title" => {
                    out.insert(k, v);
                }
                "anyOf" if self.rec.enabled && constraint_only(&v) => {
                    let key = if had_one_of { "oneOf" } else { "anyOf" };
                    moved.insert(key.to_owned(), v);
                }
                "anyOf" => {
                    // Paths name the original keyword.
                    let kpath = if had_one_of {
                        push_path(path, "oneOf")
                    } else {
                        kpath
                    };
                    if is_root {
                        return Err(self.err(&kpath, "the root schema cannot be an `anyOf`"));
                    }
                    let alts = v
                        .as_array()
                        .ok_or_else(|| self.err(&kpath, "`anyOf` is not an array"))?;
                    let mut new_alts = Vec::with_capacity(alts.len());
                    for (i, alt) in alts.iter().enumerate() {
                        new_alts.push(self.node(
                            alt,
                            &push_path(&kpath, &i.to_string()),
                            false,
                            depth,
                        )?);
                    }
                    out.insert(k, Value::Array(new_alts));
                }
                "items" => {
                    out.insert(k, self.node(&v, &kpath, false, depth)?);
                }
                // Converted when a `$ref` reaches them (see `reference`).
                "$defs" | "definitions" => {}
                "format" if v.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f)) => {
                    out.insert(k, v);
                }
                "unevaluatedProperties" if v == Value::Bool(false) => {}
                "unevaluatedProperties" => {
                    return Err(self.err(&kpath, "`unevaluatedProperties` cannot be expressed"));
                }
                key if STRICT_CONSTRAINTS.contains(&key) => {
                    out.insert(k, v);
                }
                key if DROPPED_META.contains(&key) => {}
                key if self.rec.enabled && NOTABLE.contains(&key) => {
                    moved.insert(k, v);
                }
                key if UNSUPPORTED_STRUCTURE.contains(&key) => {
                    return Err(self.err(&kpath, format!("`{key}` cannot be expressed")));
                }
                _ => {
                    moved.insert(k, v);
                }
            }
        }

        if is_object {
            let open = additional.is_none()
                || additional == Some(Value::Bool(true))
                || (self.rec.enabled && additional == Some(json!({})));
            if props.is_none() && open && !is_root {
                return self.as_json_string(
                    schema,
                    path,
                    is_root,
                    "a free-form object (no `properties`) cannot be expressed: \
                     every object must list its properties",
                );
            }
            self.object(&mut out, props, required, additional, path, depth)?;
        } else if let Some(r) = required {
            moved.insert("required".to_owned(), r);
        }

        if type_includes(&out, "array") && !out.contains_key("items") {
            if !self.rec.enabled {
                return Err(self.err(path, "an array without `items` cannot be expressed"));
            }
            let items = self.rec.json_string(
                &json!({}),
                &push_path(path, "items"),
                "an array without `items`: each item is any JSON value",
            );
            out.insert("items".to_owned(), items);
        }
        if !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k))
        {
            return self.as_json_string(
                schema,
                path,
                is_root,
                "a schema without `type` accepts any value; strict mode needs a type",
            );
        }
        self.rec.note(&mut out, path, moved);
        let mut out = Value::Object(out);
        if let Some(t) = inferred {
            let detail = format!("untyped schema: only {t} values can be sent");
            self.mark(&mut out, path, DowngradeKind::TypeInferred, &detail);
        }
        if had_one_of && self.rec.enabled {
            self.mark(
                &mut out,
                path,
                DowngradeKind::OneOfAsAnyOf,
                "`oneOf` became `anyOf`",
            );
        }
        Ok(out)
    }

    /// The downgrades of structure (downgrade mode): a several-item `allOf` merged; maps,
    /// `patternProperties` and tuples in another shape. `None`: go on with the node as it is.
    fn downgraded(
        &self,
        schema: &Value,
        m: &mut Map<String, Value>,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Option<Value>, ExportError> {
        if m.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|a| a.len() > 1)
        {
            return match merge_all_of_node(self.root, m) {
                Ok(merged) => {
                    let mut out = self.node(&Value::Object(merged), path, is_root, depth + 1)?;
                    self.mark(
                        &mut out,
                        path,
                        DowngradeKind::AllOfMerged,
                        "`allOf` of several schemas merged into one",
                    );
                    Ok(Some(out))
                }
                Err(why) => self
                    .as_json_string(schema, &push_path(path, "allOf"), is_root, &why)
                    .map(Some),
            };
        }
        for key in [
            "$dynamicRef",
            "$recursiveRef",
            "prefixItems",
            "unevaluatedItems",
        ] {
            if m.contains_key(key) {
                let why = format!("`{key}` cannot be expressed");
                return self.as_json_string(schema, path, is_root, &why).map(Some);
            }
        }
        if m.get("unevaluatedProperties")
            .is_some_and(|u| u != &Value::Bool(false))
        {
            return self
                .as_json_string(
                    schema,
                    path,
                    is_root,
                    "`unevaluatedProperties` cannot be expressed",
                )
                .map(Some);
        }
        let additional = m.get("additionalProperties");
        let map_value = match additional {
            Some(Value::Object(a)) if !a.is_empty() => Some(Value::Object(a.clone())),
            _ => None,
        };
        if let Some(pattern_props) = m.get("patternProperties").cloned() {
            let single = pattern_props.as_object().filter(|p| p.len() == 1);
            let closed_or_open = additional.is_none()
                || matches!(additional, Some(Value::Bool(_)))
                || additional == Some(&json!({}));
            return match single {
                Some(p) if !m.contains_key("properties") && closed_or_open => {
                    let (pattern, value) = p
                        .iter()
                        .next()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .unwrap_or_default();
                    let value_path = push_path(&push_path(path, "patternProperties"), &pattern);
                    self.entries(
                        schema,
                        m,
                        Some(&pattern),
                        &value,
                        &value_path,
                        path,
                        is_root,
                        depth,
                    )
                    .map(Some)
                }
                _ => self
                    .as_json_string(
                        schema,
                        &push_path(path, "patternProperties"),
                        is_root,
                        "`patternProperties` with several patterns or next to `properties` \
                         cannot be expressed",
                    )
                    .map(Some),
            };
        }
        if let Some(value) = map_value {
            let value_path = push_path(path, "additionalProperties");
            return if m.contains_key("properties") {
                self.as_json_string(
                    schema,
                    &value_path,
                    is_root,
                    "an object with `properties` and an `additionalProperties` schema cannot \
                     be expressed",
                )
                .map(Some)
            } else {
                self.entries(schema, m, None, &value, &value_path, path, is_root, depth)
                    .map(Some)
            };
        }
        Ok(None)
    }

    /// A map as an array of `{"key", "value"}` entries.
    #[allow(clippy::too_many_arguments)]
    fn entries(
        &self,
        schema: &Value,
        m: &Map<String, Value>,
        key_pattern: Option<&str>,
        value: &Value,
        value_path: &str,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Value, ExportError> {
        if is_root {
            return Err(self.err(
                path,
                "a map at the root cannot be expressed: strict mode needs a root object \
                 with properties",
            ));
        }
        let value = self.node(value, value_path, false, depth)?;
        Ok(entries_node(
            &self.rec,
            schema,
            m,
            key_pattern,
            value,
            path,
            true,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &self,
        out: &mut Map<String, Value>,
        props: Option<Value>,
        required: Option<Value>,
        additional: Option<Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), ExportError> {
        match &additional {
            Some(Value::Object(a)) if !(self.rec.enabled && a.is_empty()) => {
                return Err(self.err(
                    &push_path(path, "additionalProperties"),
                    "a map (`additionalProperties` with a schema) cannot be expressed: \
                     every object must have `additionalProperties: false`",
                ))
            }
            Some(Value::Bool(_)) | Some(Value::Object(_)) | None => {}
            Some(_) => {
                return Err(self.err(
                    &push_path(path, "additionalProperties"),
                    "`additionalProperties` is not a schema",
                ))
            }
        }
        let open = additional != Some(Value::Bool(false));
        let mut props = match props {
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Err(self.err(
                    &push_path(path, "properties"),
                    "`properties` is not an object",
                ))
            }
            None => Map::new(),
        };
        let required: BTreeSet<String> = match required {
            Some(Value::Array(r)) => r
                .iter()
                .map(|n| {
                    n.as_str().map(str::to_owned).ok_or_else(|| {
                        self.err(
                            &push_path(path, "required"),
                            "`required` holds a non-string",
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(self.err(&push_path(path, "required"), "`required` is not an array"))
            }
            None => BTreeSet::new(),
        };
        let missing: Vec<String> = required
            .iter()
            .filter(|n| !props.contains_key(*n))
            .cloned()
            .collect();
        for missing in missing {
            if !(self.rec.enabled && open) {
                return Err(self.err(
                    &push_path(path, "required"),
                    format!("required property `{missing}` has no schema in `properties`"),
                ));
            }
            // Any value is allowed for it: an untyped property, sent as JSON text.
            props.insert(missing, json!({}));
        }
        let explicitly_open =
            additional == Some(Value::Bool(true)) || additional == Some(json!({}));
        if self.rec.enabled && explicitly_open {
            self.rec.record(
                out,
                path,
                DowngradeKind::Closed,
                "extra properties cannot be sent: every object is closed in strict mode",
                None,
            );
        }
        let props_path = push_path(path, "properties");
        let mut new_props = Map::new();
        let mut names = Vec::with_capacity(props.len());
        for (name, p) in &props {
            let t = self.node(p, &push_path(&props_path, name), false, depth)?;
            let t = if required.contains(name) {
                t
            } else {
                make_nullable(t)
            };
            new_props.insert(name.clone(), t);
            names.push(Value::String(name.clone()));
        }
        out.insert("properties".to_owned(), Value::Object(new_props));
        out.insert("required".to_owned(), Value::Array(names));
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
        Ok(())
    }
}

/// Let `null` through: extend a plain `type`, or wrap in `anyOf` with `{"type": "null"}`.
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut m) = schema else {
        return schema;
    };
    if accepts_null(&m) {
        return Value::Object(m);
    }
    let plain = !["enum", "const", "anyOf", "$ref"]
        .iter()
        .any(|k| m.contains_key(*k));
    if plain {
        match m.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                m.insert("type".to_owned(), json!([t, "null"]));
                return Value::Object(m);
            }
            Some(Value::Array(ts)) => {
                ts.push(json!("null"));
                return Value::Object(m);
            }
            _ => {}
        }
    }
    let mut outer = Map::new();
    for k in ["description", "title"] {
        if let Some(v) = m.remove(k) {
            outer.insert(k.to_owned(), v);
        }
    }
    outer.insert(
        "anyOf".to_owned(),
        json!([Value::Object(m), {"type": "null"}]),
    );
    Value::Object(outer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_inlined_away_are_dropped_and_the_others_kept() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "unit": {"anyOf": [{"const": "c"}], "description": "inlined from Unit"},
                "pos": {"$ref": "#/$defs/Pos"}
            },
            "$defs": {
                "Unit": {"anyOf": [{"const": "c"}]},
                "Pos": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Coord"}}},
                "Coord": {"type": "integer"}
            }
        });
        prune_unused_defs(&mut schema);
        let defs: Vec<&String> = schema["$defs"].as_object().expect("defs").keys().collect();
        assert_eq!(defs, ["Pos", "Coord"]);
        let mut schema = json!({"type": "object", "properties": {}, "$defs": {"Unit": {}}});
        prune_unused_defs(&mut schema);
        assert_eq!(schema, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn nullable_extends_plain_types_and_wraps_the_rest() {
        assert_eq!(
            make_nullable(json!({"type": "integer", "minimum": 1})),
            json!({"type": ["integer", "null"], "minimum": 1})
        );
        assert_eq!(
            make_nullable(json!({"type": "string", "enum": ["a"], "description": "d"})),
            json!({"description": "d", "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]})
        );
        assert_eq!(
            make_nullable(json!({"type": ["string", "null"]})),
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            make_nullable(json!({"$ref": "#/$defs/A"})),
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        );
    }

    #[test]
    fn strict_errors_name_the_path() {
        let cases = [
            (json!({"v": {}}), "/properties/v"),
            (json!({"v": {"type": "object"}}), "/properties/v"),
            (json!({"v": {"type": "array"}}), "/properties/v"),
            (
                json!({"v": {"type": "object", "additionalProperties": {"type": "string"}}}),
                "/properties/v/additionalProperties",
            ),
            (
                json!({"v": {"allOf": [{"type": "string"}, {"minLength": 1}]}}),
                "/properties/v/allOf",
            ),
            (
                json!({"v": {"type": "array", "prefixItems": [{"type": "string"}]}}),
                "/properties/v/prefixItems",
            ),
        ];
        for (props, path) in cases {
            let d = ToolDecl {
                name: "t".into(),
                description: "d".into(),
                input_schema: json!({"type": "object", "properties": props}),
                output_schema: None,
                risk: crate::decl::Risk::Safe,
                concurrency_safe: false,
                idempotent: false,
                open_world: false,
                path_args: vec![],
                script_args: vec![],
                script_lang: None,
                timeout: None,
                unix_sockets: vec![],
                source: "test".into(),
            };
            let e = strict_schema(&d).expect_err(path);
            assert_eq!(e.path, path, "{e}");
            assert_eq!(e.format, Format::OpenAi);
        }
    }
}
