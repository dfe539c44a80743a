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
    accepts_null, constraint_only, fold_combinators, merge_under, push_path, ref_path,
    resolve_local_ref, type_includes, without_schema_keyword, Downgrade, DowngradeKind,
    ExportError, ExportOptions, Format,
};
use super::walk::{Rules, Walk, Walker};
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
    let mut walk = Strict {
        base: Walker::new(&RULES, schema, tool, downgrade),
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
    let report = walk.base.rec.finish(&mut out);
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
    base: Walker<'a>,
    /// The converted targets of the `$ref`s met so far, by `$defs` name.
    defs: RefCell<Map<String, Value>>,
    /// The `$defs` name of each reference met so far (`#/definitions/A` → `A`).
    def_names: RefCell<BTreeMap<String, String>>,
}

/// What strict mode supports, for the shared walk.
static RULES: Rules = Rules {
    format: Format::OpenAi,
    who: "strict mode",
    reason_suffix: " (OpenAI strict mode)",
    kept: STRICT_CONSTRAINTS,
    format_supported: |_, f| STRICT_FORMATS.contains(&f),
    closes_objects: true,
    splits_type_lists: false,
    any_of_alone: false,
};

impl<'a> Walk<'a> for Strict<'a> {
    fn walker(&self) -> &Walker<'a> {
        &self.base
    }

    fn walk(
        &mut self,
        schema: &Value,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Value, ExportError> {
        self.node(schema, path, is_root, depth)
    }
}

impl Strict<'_> {
    fn err(&self, path: &str, reason: impl Into<String>) -> ExportError {
        self.base.err(path, reason)
    }

    /// `{"$ref": "#/$defs/NAME"}` for a reference, its target converted into `$defs` (once).
    fn reference(
        &mut self,
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
            self.base
                .mark(&mut out, path, DowngradeKind::RefMoved, &detail);
        }
        Ok(out)
    }

    fn node(
        &mut self,
        schema: &Value,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Value, ExportError> {
        let src = match self.base.object_schema(schema, path, is_root) {
            Ok(m) => m,
            Err(done) => return done,
        };
        if depth > MAX_INLINE_DEPTH {
            return Err(self.err(path, "`$ref`/`allOf` chain too deep to inline"));
        }
        let mut m = src.clone();

        if let Some(r) = m.get("$ref").cloned() {
            let r = r
                .as_str()
                .ok_or_else(|| self.err(path, "`$ref` is not a string"))?;
            let target = resolve_local_ref(self.base.root, r)
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

        if self.base.rec.enabled {
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

        let inferred = self.base.infer_type(&mut m);

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
                "anyOf" if self.base.rec.enabled && constraint_only(&v) => {
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
                "format"
                    if v.as_str()
                        .is_some_and(|f| (RULES.format_supported)(None, f)) =>
                {
                    out.insert(k, v);
                }
                "unevaluatedProperties" if v == Value::Bool(false) => {}
                "unevaluatedProperties" => {
                    return Err(self.err(&kpath, "`unevaluatedProperties` cannot be expressed"));
                }
                key if RULES.kept.contains(&key) => {
                    out.insert(k, v);
                }
                _ => self.base.other_keyword(k, v, &kpath, &mut moved)?,
            }
        }

        if is_object {
            let open = additional.is_none()
                || additional == Some(Value::Bool(true))
                || (self.base.rec.enabled && additional == Some(json!({})));
            if props.is_none() && open && !is_root {
                return self.base.as_json_string(
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

        if type_includes(&out, "array") {
            self.base.require_items(&mut out, path)?;
        }
        if !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k))
        {
            return self.base.as_json_string(
                schema,
                path,
                is_root,
                "a schema without `type` accepts any value; strict mode needs a type",
            );
        }
        Ok(self.base.finish(out, path, moved, inferred, had_one_of))
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        out: &mut Map<String, Value>,
        props: Option<Value>,
        required: Option<Value>,
        additional: Option<Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), ExportError> {
        match &additional {
            Some(Value::Object(a)) if !(self.base.rec.enabled && a.is_empty()) => {
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
            if !(self.base.rec.enabled && open) {
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
        if self.base.rec.enabled && explicitly_open {
            self.base.rec.record(
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
                input_schema: json!({"type": "object", "properties": props}).into(),
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
            };
            let e = strict_schema(&d).expect_err(path);
            assert_eq!(e.path, path, "{e}");
            assert_eq!(e.format, Format::OpenAi);
        }
    }
}
