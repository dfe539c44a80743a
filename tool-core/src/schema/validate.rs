//! Argument validation: a compiled Draft 2020-12 validator and the list of what does not match.

use serde_json::Value;

use super::check::Checker;
pub(super) use super::violation::cut;
pub use super::violation::Violation;

/// Longest schema fragment a [`Violation`] carries, in bytes of JSON: it goes back to the model
/// with the refusal, next to every other failing path.
pub const MAX_SCHEMA_FRAGMENT: usize = 1024;

/// Most violations that get a schema fragment; the others keep their path and message.
pub const MAX_FRAGMENTS: usize = 8;

/// Fill in [`Violation::schema`] from `schema` (the document the validator was compiled from),
/// for the first [`MAX_FRAGMENTS`] violations.
pub fn with_fragments(mut found: Vec<Violation>, schema: &Value) -> Vec<Violation> {
    for v in found.iter_mut().take(MAX_FRAGMENTS) {
        v.schema = schema.pointer(&v.schema_path).map(|f| fragment(schema, f));
    }
    found
}

/// A subschema as the model is shown it: without `$schema`/`$id`, a local `$ref` at its top
/// merged in (the fragment stands alone), and a fragment over [`MAX_SCHEMA_FRAGMENT`] bytes keeps only its small
/// keywords, each property reduced to its `type`, and lists what it left out under
/// `x-omitted`.
pub fn fragment(root: &Value, sub: &Value) -> Value {
    let mut out = sub.clone();
    if let Some(map) = out.as_object_mut() {
        // Metadata no model needs.
        map.remove("$schema");
        map.remove("$id");
        let target = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
            .and_then(Value::as_object)
            .cloned();
        if let Some(target) = target {
            map.remove("$ref");
            for (k, v) in target {
                map.entry(k).or_insert(v);
            }
        }
    }
    if json_len(&out) <= MAX_SCHEMA_FRAGMENT {
        return out;
    }
    let Value::Object(map) = out else {
        return Value::Null;
    };
    let mut kept = serde_json::Map::new();
    let mut omitted = Vec::new();
    for (k, v) in map {
        let v = match (k.as_str(), v) {
            ("properties", Value::Object(props)) => Value::Object(
                props
                    .into_iter()
                    .map(|(name, p)| {
                        let ty = p.get("type").cloned();
                        let p = ty.map_or_else(
                            || serde_json::json!({}),
                            |t| serde_json::json!({"type": t}),
                        );
                        (name, p)
                    })
                    .collect(),
            ),
            (_, v) => v,
        };
        if json_len(&v) <= MAX_SCHEMA_FRAGMENT / 4 {
            kept.insert(k, v);
        } else {
            omitted.push(Value::String(k));
        }
    }
    let mut out = Value::Object(kept);
    while json_len(&out) > MAX_SCHEMA_FRAGMENT - 64 {
        let Some(map) = out.as_object_mut() else {
            break;
        };
        let Some(last) = map.keys().next_back().cloned() else {
            break;
        };
        map.remove(&last);
        omitted.push(Value::String(last));
    }
    if !omitted.is_empty() {
        if let Some(map) = out.as_object_mut() {
            if json_len(&Value::Array(omitted.clone())) > 48 {
                omitted = vec![Value::String(format!("{} keywords", omitted.len()))];
            }
            map.insert("x-omitted".to_owned(), Value::Array(omitted));
        }
    }
    out
}

fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(usize::MAX, |b| b.len())
}

/// A compiled argument validator: the built-in checker for schemas within the keywords it
/// covers (every `#[tool]` schema without a checked `format` or a backtracking `pattern`),
/// or the general `jsonschema` engine (feature `jsonschema`). Both word violations the same.
pub struct Validator {
    engine: Engine,
}

enum Engine {
    Builtin(Checker),
    #[cfg(feature = "jsonschema")]
    General(Box<jsonschema::Validator>),
    /// A schema that turned out not to compile when first used: nothing matches it.
    Refuse(String),
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validator")
            .field("engine", &self.engine_name())
            .finish_non_exhaustive()
    }
}

impl Validator {
    /// Compile `schema` for the built-in checker; fails on any keyword it does not cover.
    pub fn builtin(schema: &Value) -> Result<Validator, String> {
        Checker::compile(schema)
            .map(|c| Validator {
                engine: Engine::Builtin(c),
            })
            .map_err(|u| format!("{u} is not covered by the built-in checker"))
    }

    /// Compile `schema` with the general engine (Draft 2020-12, formats checked, no remote
    /// `$ref`, no type coercion: `"42"` is not `42`).
    #[cfg(feature = "jsonschema")]
    pub fn general(schema: &Value) -> Result<Validator, String> {
        super::general::compile(schema).map(|v| Validator {
            engine: Engine::General(Box::new(v)),
        })
    }

    /// The built-in checker, compiled.
    pub(crate) fn of_checker(c: Checker) -> Validator {
        Validator {
            engine: Engine::Builtin(c),
        }
    }

    /// A validator nothing matches, for a schema that could not be compiled (`why`).
    pub(crate) fn refuse(why: String) -> Validator {
        Validator {
            engine: Engine::Refuse(why),
        }
    }

    /// Which engine checks: `"builtin"` or `"general"` (`"refuse"` for a broken schema).
    pub fn engine_name(&self) -> &'static str {
        match &self.engine {
            Engine::Builtin(_) => "builtin",
            #[cfg(feature = "jsonschema")]
            Engine::General(_) => "general",
            Engine::Refuse(_) => "refuse",
        }
    }

    /// `true` when `instance` matches the schema.
    #[inline]
    pub fn is_valid(&self, instance: &Value) -> bool {
        match &self.engine {
            Engine::Builtin(c) => c.is_valid(instance),
            #[cfg(feature = "jsonschema")]
            Engine::General(v) => v.is_valid(instance),
            Engine::Refuse(_) => false,
        }
    }
}

/// Compile a validator for `schema`: the general engine when tool-core is built with feature
/// `jsonschema` (the reference for schemas from outside: dynamic tools, proxied MCP tools,
/// `dump --from`), else the built-in checker, which refuses what it does not cover.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    #[cfg(feature = "jsonschema")]
    {
        Validator::general(schema)
    }
    #[cfg(not(feature = "jsonschema"))]
    {
        Validator::builtin(schema)
            .map_err(|e| format!("{e}; the general engine needs tool-core's `jsonschema` feature"))
    }
}

/// Validate `args` and list every violation (empty when valid), in a stable order.
pub fn violations(validator: &Validator, args: &Value) -> Vec<Violation> {
    let mut out: Vec<Violation> = match &validator.engine {
        Engine::Builtin(c) => c
            .errors(args)
            .into_iter()
            .map(|f| Violation {
                path: f.path,
                message: cut(f.message),
                schema_path: f.schema_path,
                schema: None,
            })
            .collect(),
        #[cfg(feature = "jsonschema")]
        Engine::General(v) => super::general::violations(v, args),
        Engine::Refuse(why) => vec![Violation {
            path: String::new(),
            message: format!("the schema does not compile: {why}"),
            schema_path: String::new(),
            schema: None,
        }],
    };
    out.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::super::violation::MAX_VIOLATION_MESSAGE;
    use super::*;
    use serde_json::json;

    fn messages(schema: Value, args: Value) -> Vec<String> {
        let v = compile(&schema).expect("compiles");
        violations(&v, &args)
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    fn fragments(schema: Value, args: Value) -> Vec<(String, Option<Value>)> {
        let v = compile(&schema).expect("compiles");
        with_fragments(violations(&v, &args), &schema)
            .into_iter()
            .map(|v| (v.path, v.schema))
            .collect()
    }

    #[test]
    fn each_violation_carries_the_subschema_its_path_must_match() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "unit": {"$ref": "#/$defs/Unit", "description": "the unit"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}}
            },
            "required": ["n", "unit"],
            "$defs": {"Unit": {"enum": ["c", "f"]}}
        });
        let got = fragments(schema.clone(), json!({"n": 0, "tags": ["ok", "long"]}));
        assert_eq!(
            got,
            [
                // The missing property's schema, its `$ref` merged in.
                (
                    "".to_owned(),
                    Some(json!({"enum": ["c", "f"], "description": "the unit"}))
                ),
                (
                    "/n".to_owned(),
                    Some(json!({"type": "integer", "minimum": 1}))
                ),
                (
                    "/tags/1".to_owned(),
                    Some(json!({"type": "string", "maxLength": 2}))
                ),
            ]
        );
        // A value under a `$ref` gets the referenced definition.
        let got = fragments(schema, json!({"n": 1, "unit": "k"}));
        assert_eq!(
            got,
            [("/unit".to_owned(), Some(json!({"enum": ["c", "f"]})))]
        );
    }

    #[test]
    fn a_large_fragment_is_bounded_and_says_what_it_left_out() {
        let props: serde_json::Map<String, Value> = (0..200)
            .map(|i| {
                (
                    format!("field_{i}"),
                    json!({"type": "string", "description": "d".repeat(100)}),
                )
            })
            .collect();
        let schema = json!({
            "type": "object",
            "properties": props,
            "additionalProperties": false,
            "$defs": {"Big": {"description": "x".repeat(5000)}}
        });
        let got = fragments(schema, json!({"nope": 1}));
        let f = got[0].1.clone().expect("a fragment");
        let len = serde_json::to_vec(&f).expect("json").len();
        assert!(len <= MAX_SCHEMA_FRAGMENT, "{len}: {f}");
        assert_eq!(f["type"], "object", "{f}");
        assert_eq!(f["additionalProperties"], false, "{f}");
        assert!(f["x-omitted"].is_array(), "{f}");
    }

    #[test]
    fn a_value_outside_an_enum_names_the_allowed_values_whatever_the_combinator() {
        let branches = json!([
            {"const": "celsius", "type": "string", "description": "Degrees Celsius."},
            {"const": "fahrenheit", "type": "string"}
        ]);
        let want = r#"at `/unit`: "kelvin" is not one of "celsius", "fahrenheit""#;
        for combinator in ["oneOf", "anyOf"] {
            let schema = json!({"type": "object", "properties": {"unit": {combinator: branches}}});
            assert_eq!(
                messages(schema, json!({"unit": "kelvin"})),
                [want],
                "{combinator}"
            );
        }
        let schema = json!({"anyOf": [{"enum": [1, 2]}, {"const": 3}]});
        assert_eq!(
            messages(schema, json!(4)),
            ["at `/`: 4 is not one of 1, 2, 3"]
        );
        // A long value is not echoed back.
        let schema = json!({"type": "object", "properties": {"v": {"maxLength": 3}}});
        assert_eq!(
            messages(schema, json!({"v": "x".repeat(200_000)})),
            ["at `/v`: a string of 200000 characters is longer than 3"]
        );
        let schema = json!({"type": "object", "properties": {"v": {"type": "integer"}}});
        let m = messages(schema, json!({"v": "é".repeat(100_000)}));
        assert!(m[0].len() < MAX_VIOLATION_MESSAGE + 64, "{}", m[0].len());
        assert!(
            m[0].ends_with(" bytes)") && m[0].contains("… (message cut, "),
            "{}",
            m[0]
        );
        // Alternatives that are not constants: none matched, without naming the keyword.
        let schema = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(
            messages(schema, json!(true)),
            ["at `/`: true matches none of the allowed alternatives"]
        );
    }
}
