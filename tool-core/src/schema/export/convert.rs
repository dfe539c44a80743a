//! Converting third-party tool schemas (an MCP server's `tools/list`, hand-written function
//! schemas) into a dialect, with documented downgrades and the map back of the answers.
//!
//! The registry's own exports ([`super::export`]) keep every construct a dialect cannot express
//! an error: the executor validates calls against the declared schema and receives them as the
//! model sent them. A [`Conversion`] is for schemas declared elsewhere, whose calls go through
//! [`Conversion::map_back`] before they are validated against the original schema. There, the
//! strict OpenAI and the Gemini dialects downgrade instead of failing:
//!
//! | Original | Sent as | Map back |
//! |---|---|---|
//! | free-form object (`type: object`, no `properties`, `additionalProperties` `true` or absent), untyped schema (`{}`, `true`, only a description), `prefixItems`, `$dynamicRef`, `unevaluatedProperties`/`unevaluatedItems` with a schema, an `allOf` that cannot be merged, `patternProperties` with several patterns or next to `properties`, `properties` next to an `additionalProperties` schema, a recursive `$ref` (Gemini) | a string holding the value's JSON text; the description quotes the original schema | [`DowngradeKind::JsonString`]: the string is parsed as JSON |
//! | array without `items` | an array of such strings | each item parsed |
//! | map (`additionalProperties` with a schema, or one `patternProperties` pattern) | an array of `{"key", "value"}` entries (the pattern on `key`) | [`DowngradeKind::MapEntries`]: folded into an object; a repeated key leaves the array (refused by validation) |
//! | non-string `enum`/`const` (Gemini) | a string enum of the values' JSON texts | [`DowngradeKind::EnumAsText`]: the text decoded |
//! | untyped schema with typed keywords (`properties` without `type`, `items`, `pattern`, `minimum`) | the implied type ([`DowngradeKind::TypeInferred`]) | none |
//! | `allOf` of several schemas | one merged schema ([`DowngradeKind::AllOfMerged`]): properties per name, `required` united, types and enums intersected, the tighter bound | none |
//! | `oneOf` | `anyOf` ([`DowngradeKind::OneOfAsAnyOf`]) | none |
//! | `$ref` outside `$defs` (`#/definitions/A`, `#/properties/a`) | a `$defs` entry (strict OpenAI; Gemini inlines every `$ref`) ([`DowngradeKind::RefMoved`]) | none |
//! | `not`, `if`/`then`/`else`, `dependentSchemas`, other unsupported keywords | written into the description ([`DowngradeKind::NotedInDescription`]) | none |
//! | an object open to extra properties (strict OpenAI) | closed ([`DowngradeKind::Closed`]) | none |
//! | several types in one `type` (Gemini) | `anyOf` of one type each ([`DowngradeKind::TypesSplit`]) | none |
//! | a `required` name without a property schema | an untyped property (so a JSON string) | parsed |
//! | a root without `type` (OpenAI, Anthropic, MCP as they are) | `type: object` ([`DowngradeKind::TypeInferred`]): every provider wants an object root | none |
//!
//! Every downgrade is listed in [`Conversion::downgrades`] with the JSON pointers of the original
//! and the converted schema; nothing is dropped without an entry, except metadata no provider
//! reads (`$schema`, `$id`, `$comment`, `$anchor`). What still cannot be expressed (a root that is
//! not an object, a map at the root, a `$ref` that does not resolve, a boolean `false` schema, an
//! unsatisfiable `required`) is an [`ExportError`] naming the JSON pointer and why.
//!
//! The map back ([`Conversion::map_back`]) walks the converted schema along the answer: in an
//! `anyOf` it follows the first alternative the value matches; it decodes JSON strings, folds
//! map entries, decodes enum texts, and finally removes the `null`s strict mode makes the model
//! send for optional properties ([`super::openai::strip_optional_nulls`]). The result is meant
//! to be validated against the original schema (the executor does): a string that is not JSON
//! text, a repeated map key, or a value breaking a constraint that only the description could
//! carry is refused there, never guessed at.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::common::{
    ref_path, resolve_local_ref, without_schema_keyword, Downgrade, DowngradeKind, ExportError,
    ExportOptions, Format,
};
use super::{gemini, openai};

/// Deepest schema nesting the map back follows.
const MAX_DEPTH: usize = 128;

/// One tool schema converted into a dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    /// The dialect.
    pub format: Format,
    /// The options it was converted with.
    pub options: ExportOptions,
    /// The tool's name.
    pub name: String,
    /// The original input schema.
    pub original: Value,
    /// The converted parameters schema.
    pub parameters: Value,
    /// The tool in the dialect's shape (what goes into the provider's tool list).
    pub tool: Value,
    /// Every downgrade, in converted-schema order.
    pub downgrades: Vec<Downgrade>,
}

/// The schema as is (minus `$schema`), its root typed `object` when it has no `type`: every
/// provider wants an object root, and the arguments of a call are an object anyway.
fn typed_root(input_schema: &Value) -> (Value, Vec<Downgrade>) {
    let mut schema = without_schema_keyword(input_schema);
    let mut downgrades = Vec::new();
    if let Value::Object(m) = &mut schema {
        if !m.contains_key("type") {
            m.insert("type".to_owned(), json!("object"));
            downgrades.push(Downgrade {
                path: String::new(),
                out_path: String::new(),
                kind: DowngradeKind::TypeInferred,
                detail: "untyped root: the arguments are an object".to_owned(),
                original: None,
            });
        }
    }
    (schema, downgrades)
}

/// Convert a tool's input schema into `format`, downgrading what the dialect cannot express
/// (see the module docs). [`Format::Canonical`] is the registry's own dump and is refused here.
pub fn convert(
    name: &str,
    description: &str,
    input_schema: &Value,
    format: Format,
    options: ExportOptions,
) -> Result<Conversion, ExportError> {
    let err = |path: &str, reason: &str| ExportError {
        format,
        tool: name.to_owned(),
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if !input_schema.is_object() {
        return Err(err("", "the input schema is not a JSON object"));
    }
    if let Some(t) = input_schema.get("type") {
        if t != "object" {
            return Err(err(
                "/type",
                "the input schema of a tool must be an object schema (`type: object`)",
            ));
        }
    }
    let (parameters, downgrades) = match format {
        Format::Canonical => {
            return Err(err(
                "",
                "the canonical format is the registry's own dump; choose a provider dialect",
            ))
        }
        Format::OpenAi if options.strict => openai::strict_parameters(name, input_schema, true)?,
        Format::Gemini => gemini::gemini_parameters(name, input_schema, true)?,
        Format::OpenAi | Format::Anthropic | Format::Mcp => typed_root(input_schema),
    };
    let tool = match format {
        Format::OpenAi => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": parameters,
                "strict": options.strict,
            }
        }),
        Format::Anthropic => {
            json!({"name": name, "description": description, "input_schema": parameters})
        }
        Format::Gemini => {
            let mut d = json!({"name": name, "description": description});
            let has_props = parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            if has_props {
                d["parameters"] = parameters.clone();
            }
            d
        }
        Format::Mcp => {
            json!({"name": name, "description": description, "inputSchema": input_schema})
        }
        Format::Canonical => Value::Null,
    };
    Ok(Conversion {
        format,
        options,
        name: name.to_owned(),
        original: input_schema.clone(),
        parameters,
        tool,
        downgrades,
    })
}

impl Conversion {
    /// Turn a model's arguments for the converted schema back into what the original schema
    /// expects (see the module docs). Validate the result against [`Conversion::original`].
    pub fn map_back(&self, answer: &Value) -> Value {
        let mut at: BTreeMap<&str, Vec<&Downgrade>> = BTreeMap::new();
        for d in self.downgrades.iter().filter(|d| d.kind.needs_map_back()) {
            at.entry(d.out_path.as_str()).or_default().push(d);
        }
        let mut out = if at.is_empty() {
            answer.clone()
        } else {
            Back {
                root: &self.parameters,
                at: &at,
            }
            .walk(&self.parameters, "", answer.clone(), 0)
        };
        openai::strip_optional_nulls(&self.original, &mut out);
        out
    }

    /// Whether any downgrade needs the map back (else the answer is used as it is, apart from
    /// the optional `null`s).
    pub fn needs_map_back(&self) -> bool {
        self.downgrades.iter().any(|d| d.kind.needs_map_back())
    }
}

struct Back<'a> {
    root: &'a Value,
    at: &'a BTreeMap<&'a str, Vec<&'a Downgrade>>,
}

impl Back<'_> {
    fn kind_at(&self, path: &str, kind: DowngradeKind) -> Option<&Downgrade> {
        self.at
            .get(path)
            .and_then(|ds| ds.iter().find(|d| d.kind == kind).copied())
    }

    fn walk(&self, node: &Value, path: &str, value: Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return value;
        }
        if self.kind_at(path, DowngradeKind::JsonString).is_some() {
            return match &value {
                Value::String(s) => serde_json::from_str(s).unwrap_or(value),
                _ => value,
            };
        }
        if let Some(d) = self.kind_at(path, DowngradeKind::EnumAsText) {
            if let (Value::String(s), Some(Value::Array(values))) = (&value, &d.original) {
                let non_null: Vec<Value> =
                    values.iter().filter(|v| !v.is_null()).cloned().collect();
                let (texts, _) = gemini::enum_texts(values);
                if let Some(i) = texts.iter().position(|t| t.as_str() == Some(s)) {
                    return non_null[i].clone();
                }
            }
            return value;
        }
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            return match resolve_local_ref(self.root, r) {
                Some(target) => self.walk(target, &ref_path(r), value, depth + 1),
                None => value,
            };
        }
        if let Some(alts) = node.get("anyOf").and_then(Value::as_array) {
            let any_path = format!("{path}/anyOf");
            for (i, alt) in alts.iter().enumerate() {
                if self.matches(alt, &value, depth + 1) {
                    return self.walk(alt, &format!("{any_path}/{i}"), value, depth + 1);
                }
            }
            return value;
        }
        let value = match value {
            Value::Object(obj) => {
                let props = node.get("properties").and_then(Value::as_object);
                Value::Object(
                    obj.into_iter()
                        .map(|(k, v)| {
                            let v = match props.and_then(|p| p.get(&k)) {
                                Some(p) => {
                                    let ppath =
                                        super::common::push_path(&format!("{path}/properties"), &k);
                                    self.walk(p, &ppath, v, depth + 1)
                                }
                                None => v,
                            };
                            (k, v)
                        })
                        .collect(),
                )
            }
            Value::Array(items) => match node.get("items") {
                Some(item) => {
                    let ipath = format!("{path}/items");
                    Value::Array(
                        items
                            .into_iter()
                            .map(|v| self.walk(item, &ipath, v, depth + 1))
                            .collect(),
                    )
                }
                None => Value::Array(items),
            },
            other => other,
        };
        if self.kind_at(path, DowngradeKind::MapEntries).is_some() {
            return fold_entries(value);
        }
        value
    }

    /// Whether `value` fits the converted schema `node` in its structure (types, enums,
    /// constants, property names, items, alternatives); bounds and patterns are not looked at.
    fn matches(&self, node: &Value, value: &Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let Value::Object(m) = node else {
            return node != &Value::Bool(false);
        };
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            return resolve_local_ref(self.root, r)
                .is_some_and(|t| self.matches(t, value, depth + 1));
        }
        if value.is_null() && m.get("nullable") == Some(&Value::Bool(true)) {
            return true;
        }
        if let Some(alts) = m.get("anyOf").and_then(Value::as_array) {
            if !alts.iter().any(|a| self.matches(a, value, depth + 1)) {
                return false;
            }
        }
        if let Some(c) = m.get("const") {
            if c != value {
                return false;
            }
        }
        if let Some(e) = m.get("enum").and_then(Value::as_array) {
            if !e.contains(value) {
                return false;
            }
        }
        if let Some(t) = m.get("type") {
            let types: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !types.iter().any(|t| type_fits(t, value)) {
                return false;
            }
        }
        match value {
            Value::Object(obj) => {
                let props = m.get("properties").and_then(Value::as_object);
                // Converted objects list every name they take (Gemini has no
                // `additionalProperties`; strict objects are closed).
                let closed =
                    m.get("additionalProperties") == Some(&Value::Bool(false)) || props.is_some();
                for (k, v) in obj {
                    let fits = match props.and_then(|p| p.get(k)) {
                        Some(p) => self.matches(p, v, depth + 1),
                        None => !closed,
                    };
                    if !fits {
                        return false;
                    }
                }
                let required = m.get("required").and_then(Value::as_array);
                required
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .all(|n| obj.contains_key(n))
            }
            Value::Array(items) => match m.get("items") {
                Some(item) => items.iter().all(|v| self.matches(item, v, depth + 1)),
                None => true,
            },
            _ => true,
        }
    }
}

fn type_fits(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => false,
    }
}

/// `[{"key": k, "value": v}, ...]` → `{k: v, ...}`; anything else (a repeated key, a malformed
/// entry) is left as it is, for validation to refuse.
fn fold_entries(value: Value) -> Value {
    let Value::Array(entries) = &value else {
        return value;
    };
    let mut out = serde_json::Map::new();
    for e in entries {
        let (Some(Value::String(k)), Some(v)) = (e.get("key"), e.get("value")) else {
            return value;
        };
        if e.as_object().is_some_and(|o| o.len() != 2) || out.contains_key(k) {
            return value;
        }
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out)
}
