//! The one schema walk of the dialects that rewrite schemas (strict OpenAI, Gemini): the steps
//! every dialect takes the same way, each asking the dialect's [`Rules`] what its subset of JSON
//! Schema supports. What a dialect does its own way (`$ref`s kept or inlined, objects closed or
//! opened, `null` as a type or as `nullable`) stays in its module, which implements [`Walk`].

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::common::{
    entries_node, implied_type, merge_all_of_node, push_path, DowngradeKind, ExportError, Format,
    Recorder, DROPPED_META, MARKER, UNSUPPORTED_STRUCTURE,
};

/// What one provider's schema subset supports, as the shared walk steps read it.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The dialect, named in errors.
    pub(crate) format: Format,
    /// How reasons name the dialect: "strict mode", "Gemini".
    pub(crate) who: &'static str,
    /// Appended to every error reason.
    pub(crate) reason_suffix: &'static str,
    /// Keywords kept as they are, besides the structural ones the dialect's walk handles.
    pub(crate) kept: &'static [&'static str],
    /// Whether `format` is supported on a node of type `ty`.
    pub(crate) format_supported: fn(ty: Option<&str>, format: &str) -> bool,
    /// Every object closed with `additionalProperties: false` (the entries of a map too).
    pub(crate) closes_objects: bool,
    /// Several types in one `type` become an `anyOf` of one type each (downgrade mode); else
    /// the dialect takes type lists as they are.
    pub(crate) splits_type_lists: bool,
    /// An `anyOf` must be the only keyword of its node: the others move into each alternative.
    pub(crate) any_of_alone: bool,
}

/// Keywords no dialect can carry whose meaning a description can still say (downgrade mode).
const NOTABLE: &[&str] = &["not", "if", "then", "else", "dependentSchemas"];

/// Keywords whose schema cannot be expressed in another shape: sent as JSON text (downgrade mode).
const AS_JSON_TEXT: &[&str] = &[
    "$dynamicRef",
    "$recursiveRef",
    "prefixItems",
    "unevaluatedItems",
];

/// What every walk holds: the dialect's rules, the schema's root (for local `$ref`s), the tool
/// named in errors, and the downgrades recorded.
pub(crate) struct Walker<'a> {
    pub(crate) rules: &'static Rules,
    pub(crate) root: &'a Value,
    pub(crate) tool: &'a str,
    pub(crate) rec: Recorder,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(
        rules: &'static Rules,
        root: &'a Value,
        tool: &'a str,
        downgrade: bool,
    ) -> Self {
        Walker {
            rules,
            root,
            tool,
            rec: Recorder::new(downgrade),
        }
    }

    pub(crate) fn err(&self, path: &str, reason: impl Into<String>) -> ExportError {
        ExportError {
            format: self.rules.format,
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            reason: format!("{}{}", reason.into(), self.rules.reason_suffix),
        }
    }

    /// The JSON-string downgrade of `schema` (downgrade mode, below the root), else the error.
    pub(crate) fn as_json_string(
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

    pub(crate) fn mark(&self, v: &mut Value, path: &str, kind: DowngradeKind, detail: &str) {
        if let Value::Object(m) = v {
            self.rec.record(m, path, kind, detail, None);
        }
    }

    /// The keywords of an object schema; a boolean schema is the JSON-string downgrade (`true`)
    /// or an error (`Err(Ok(..))` carries the downgraded node, `Err(Err(..))` the error).
    pub(crate) fn object_schema<'s>(
        &self,
        schema: &'s Value,
        path: &str,
        is_root: bool,
    ) -> Result<&'s Map<String, Value>, Result<Value, ExportError>> {
        match schema {
            Value::Object(m) => Ok(m),
            Value::Bool(true) => Err(self.as_json_string(
                &json!({}),
                path,
                is_root,
                &format!(
                    "a `true` schema accepts any value; {} needs a type",
                    self.rules.who
                ),
            )),
            _ => Err(Err(self.err(
                path,
                format!(
                    "a boolean schema accepts anything or nothing; {} needs a typed schema",
                    self.rules.who
                ),
            ))),
        }
    }

    /// The type an untyped schema's keywords imply, set on it (downgrade mode).
    pub(crate) fn infer_type(&self, m: &mut Map<String, Value>) -> Option<&'static str> {
        if !self.rec.enabled
            || ["type", "anyOf", "enum", "const"]
                .iter()
                .any(|k| m.contains_key(*k))
        {
            return None;
        }
        let t = implied_type(m)?;
        m.insert("type".to_owned(), json!(t));
        Some(t)
    }

    /// A keyword the dialect does not keep: metadata dropped, meaning that cannot be carried an
    /// error (a note in downgrade mode where a description can say it), the rest noted.
    pub(crate) fn other_keyword(
        &self,
        k: String,
        v: Value,
        kpath: &str,
        moved: &mut BTreeMap<String, Value>,
    ) -> Result<(), ExportError> {
        let key = k.as_str();
        if DROPPED_META.contains(&key) {
            return Ok(());
        }
        if UNSUPPORTED_STRUCTURE.contains(&key) && !(self.rec.enabled && NOTABLE.contains(&key)) {
            return Err(self.err(kpath, format!("`{key}` cannot be expressed")));
        }
        moved.insert(k, v);
        Ok(())
    }

    /// An array node gets `items`: an error without them, or (downgrade mode) items of any
    /// JSON value as JSON text.
    pub(crate) fn require_items(
        &self,
        out: &mut Map<String, Value>,
        path: &str,
    ) -> Result<(), ExportError> {
        if out.contains_key("items") {
            return Ok(());
        }
        if !self.rec.enabled {
            return Err(self.err(path, "an array without `items` cannot be expressed"));
        }
        let items = self.rec.json_string(
            &json!({}),
            &push_path(path, "items"),
            "an array without `items`: each item is any JSON value",
        );
        out.insert("items".to_owned(), items);
        Ok(())
    }

    /// The node done: the keywords moved into its description, the downgrades of its type and
    /// its `oneOf` recorded.
    pub(crate) fn finish(
        &self,
        mut out: Map<String, Value>,
        path: &str,
        moved: BTreeMap<String, Value>,
        inferred: Option<&str>,
        had_one_of: bool,
    ) -> Value {
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
        if self.rules.any_of_alone {
            any_of_alone(&mut out);
        }
        out
    }
}

/// A dialect's walk: its own node rewrite, and the shared downgrades of structure.
pub(crate) trait Walk<'a> {
    /// The shared state.
    fn walker(&self) -> &Walker<'a>;

    /// Rewrite one schema node (the dialect's own rules), `depth` counting inlinings.
    fn walk(
        &mut self,
        schema: &Value,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Value, ExportError>;

    /// The downgrades of structure (downgrade mode): a several-item `allOf` merged, several
    /// types split into `anyOf` (where the dialect asks), maps and `patternProperties` as
    /// entries, tuples and what else has no other shape as JSON text. `None`: go on with the
    /// node as it is.
    fn downgraded(
        &mut self,
        schema: &Value,
        m: &mut Map<String, Value>,
        path: &str,
        is_root: bool,
        depth: usize,
    ) -> Result<Option<Value>, ExportError> {
        let root = self.walker().root;
        if m.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|a| a.len() > 1)
        {
            return match merge_all_of_node(root, m) {
                Ok(merged) => {
                    let mut out = self.walk(&Value::Object(merged), path, is_root, depth + 1)?;
                    self.walker().mark(
                        &mut out,
                        path,
                        DowngradeKind::AllOfMerged,
                        "`allOf` of several schemas merged into one",
                    );
                    Ok(Some(out))
                }
                Err(why) => self
                    .walker()
                    .as_json_string(schema, &push_path(path, "allOf"), is_root, &why)
                    .map(Some),
            };
        }
        if let Some(key) = AS_JSON_TEXT.iter().find(|k| m.contains_key(**k)) {
            let why = format!("`{key}` cannot be expressed");
            return self
                .walker()
                .as_json_string(schema, path, is_root, &why)
                .map(Some);
        }
        if m.get("unevaluatedProperties")
            .is_some_and(|u| u != &Value::Bool(false))
        {
            return self
                .walker()
                .as_json_string(
                    schema,
                    path,
                    is_root,
                    "`unevaluatedProperties` cannot be expressed",
                )
                .map(Some);
        }
        if self.walker().rules.splits_type_lists {
            if let Some(split) = split_type_list(m) {
                let mut out = self.walk(&split, path, is_root, depth)?;
                self.walker().mark(
                    &mut out,
                    path,
                    DowngradeKind::TypesSplit,
                    "several types became an `anyOf` of one type each",
                );
                return Ok(Some(out));
            }
        }
        let additional = m.get("additionalProperties");
        let map_value = match additional {
            Some(Value::Object(a)) if !a.is_empty() => Some(Value::Object(a.clone())),
            _ => None,
        };
        if let Some(pattern_props) = m.get("patternProperties").cloned() {
            let single = pattern_props.as_object().filter(|p| p.len() == 1);
            let simple_rest = additional.is_none()
                || matches!(additional, Some(Value::Bool(_)))
                || additional == Some(&json!({}));
            return match single {
                Some(p) if !m.contains_key("properties") && simple_rest => {
                    let (pattern, value) = p
                        .iter()
                        .next()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .unwrap_or_default();
                    let value_path = push_path(&push_path(path, "patternProperties"), &pattern);
                    let at = Site {
                        path,
                        value_path: &value_path,
                        is_root,
                        depth,
                    };
                    self.entries(schema, m, Some(&pattern), &value, at)
                        .map(Some)
                }
                _ => self
                    .walker()
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
            if m.contains_key("properties") {
                return self
                    .walker()
                    .as_json_string(
                        schema,
                        &value_path,
                        is_root,
                        "an object with `properties` and an `additionalProperties` schema \
                         cannot be expressed",
                    )
                    .map(Some);
            }
            let at = Site {
                path,
                value_path: &value_path,
                is_root,
                depth,
            };
            return self.entries(schema, m, None, &value, at).map(Some);
        }
        Ok(None)
    }

    /// A map as an array of `{"key", "value"}` entries; at the root, an error.
    fn entries(
        &mut self,
        schema: &Value,
        m: &Map<String, Value>,
        key_pattern: Option<&str>,
        value: &Value,
        at: Site<'_>,
    ) -> Result<Value, ExportError> {
        if at.is_root {
            let who = self.walker().rules.who;
            return Err(self.walker().err(
                at.path,
                format!("a map at the root cannot be expressed: {who} needs a root object with properties"),
            ));
        }
        let value = self.walk(value, at.value_path, false, at.depth)?;
        let w = self.walker();
        Ok(entries_node(
            &w.rec,
            schema,
            m,
            key_pattern,
            value,
            at.path,
            w.rules.closes_objects,
        ))
    }
}

/// Where a map's value schema sits and is walked.
pub(crate) struct Site<'p> {
    path: &'p str,
    value_path: &'p str,
    is_root: bool,
    depth: usize,
}

/// A schema whose `type` lists several non-null types, as an `anyOf` of one type each (a
/// `null` among them as a `{"type": "null"}` alternative); `None` for any other schema.
fn split_type_list(m: &mut Map<String, Value>) -> Option<Value> {
    let Some(Value::Array(types)) = m.get("type").cloned() else {
        return None;
    };
    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
    if non_null.len() <= 1 || m.contains_key("anyOf") || m.contains_key("oneOf") {
        return None;
    }
    let mut outer = Map::new();
    for k in ["description", "title"] {
        if let Some(v) = m.remove(k) {
            outer.insert(k.to_owned(), v);
        }
    }
    let mut alts: Vec<Value> = non_null
        .iter()
        .map(|t| {
            let mut alt = m.clone();
            alt.insert("type".to_owned(), (*t).clone());
            Value::Object(alt)
        })
        .collect();
    if non_null.len() < types.len() {
        alts.push(json!({"type": "null"}));
    }
    outer.insert("anyOf".to_owned(), Value::Array(alts));
    Some(Value::Object(outer))
}

/// Move the keywords next to an `anyOf` into each of its alternatives, so the `anyOf` stands
/// alone: descriptions joined (the node's first), `nullable` on every alternative, `properties`
/// and `required` united, any other keyword where the alternative does not have its own.
fn any_of_alone(node: &mut Value) {
    let Value::Object(m) = node else { return };
    let Some(Value::Array(mut alts)) = m.remove("anyOf") else {
        return;
    };
    let siblings: Vec<String> = m.keys().filter(|k| *k != MARKER).cloned().collect();
    for k in siblings {
        let Some(v) = m.remove(&k) else { continue };
        for alt in alts.iter_mut() {
            let Value::Object(a) = alt else { continue };
            match (k.as_str(), a.get_mut(&k), &v) {
                ("description", Some(Value::String(own)), Value::String(outer)) => {
                    *own = format!("{outer}\n{own}");
                }
                ("properties", Some(Value::Object(own)), Value::Object(outer)) => {
                    for (name, p) in outer {
                        own.entry(name.clone()).or_insert_with(|| p.clone());
                    }
                }
                ("required", Some(Value::Array(own)), Value::Array(outer)) => {
                    for n in outer {
                        if !own.contains(n) {
                            own.push(n.clone());
                        }
                    }
                }
                ("nullable", _, _) => {
                    a.insert(k.clone(), v.clone());
                }
                (_, Some(_), _) => {}
                (_, None, _) => {
                    a.insert(k.clone(), v.clone());
                }
            }
        }
    }
    m.insert("anyOf".to_owned(), Value::Array(alts));
}
