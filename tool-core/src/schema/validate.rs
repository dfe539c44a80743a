//! Argument validation: a compiled Draft 2020-12 validator and the list of what does not match.

use serde_json::Value;

/// Compile a Draft 2020-12 validator. Remote `$ref` retrieval is compiled out; local `#/...`
/// references work. No type coercion: `"42"` is not `42`.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// What a violation says. A value outside a set of alternatives is reported without naming the
/// combinator (`oneOf` here, `anyOf` in a strict provider dump): the allowed values when every
/// alternative is a constant (an enum with documented variants), else that none matched.
fn message(e: &jsonschema::ValidationError<'_>) -> String {
    cut(full_message(e))
}

/// Longest violation message, in bytes: messages quote the offending value, which the model
/// chose and may have made huge; the path says where it is.
pub const MAX_VIOLATION_MESSAGE: usize = 512;

fn cut(mut text: String) -> String {
    if text.len() <= MAX_VIOLATION_MESSAGE {
        return text;
    }
    let total = text.len();
    let mut end = MAX_VIOLATION_MESSAGE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… (message cut, {total} bytes)"));
    text
}

fn full_message(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let context = match e.kind() {
        K::MaxLength { limit } => {
            let chars = e.instance().as_str().map_or(0, |s| s.chars().count());
            return format!("a string of {chars} characters is longer than {limit}");
        }
        K::AnyOf { context } | K::OneOfNotValid { context } => context,
        _ => return e.to_string(),
    };
    let allowed: Option<Vec<String>> = context
        .iter()
        .map(|branch| {
            branch.iter().find_map(|err| match err.kind() {
                K::Constant { expected_value } => Some(vec![expected_value.to_string()]),
                K::Enum { options } => options
                    .as_array()
                    .map(|a| a.iter().map(Value::to_string).collect()),
                _ => None,
            })
        })
        .collect::<Option<Vec<Vec<String>>>>()
        .map(|lists| lists.concat());
    match allowed {
        Some(values) if !values.is_empty() => {
            format!("{} is not one of {}", e.instance(), values.join(", "))
        }
        _ => format!("{} matches none of the allowed alternatives", e.instance()),
    }
}

/// One schema violation: where (JSON pointer into the arguments) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`""` for the root).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// JSON pointer into the schema of the subschema the value at `path` must match (for a
    /// missing property, that property's schema); `$ref`s already followed.
    pub schema_path: String,
    /// That subschema, at most `MAX_SCHEMA_FRAGMENT` bytes of JSON (see `fragment`), when
    /// the violation was found with the schema at hand (`with_fragments`).
    pub schema: Option<Value>,
}

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

/// The subschema a violation is about: the schema object holding the keyword that failed (for
/// `required`, the missing property's schema when the object declares it).
fn subschema_path(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let keyword = e.schema_path().to_string();
    let parent = keyword
        .rfind('/')
        .map_or(String::new(), |i| keyword[..i].to_owned());
    match e.kind() {
        K::Required { property } => match property.as_str() {
            Some(name) => {
                let escaped = name.replace('~', "~0").replace('/', "~1");
                format!("{parent}/properties/{escaped}")
            }
            None => parent,
        },
        _ => parent,
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            self.path.as_str()
        };
        write!(f, "at `{path}`: {}", self.message)
    }
}

/// Validate `args` and list every violation (empty when valid), in a stable order.
pub fn violations(validator: &jsonschema::Validator, args: &Value) -> Vec<Violation> {
    let mut out: Vec<Violation> = validator
        .iter_errors(args)
        .map(|e| Violation {
            path: e.instance_path().to_string(),
            message: message(&e),
            schema_path: subschema_path(&e),
            schema: None,
        })
        .collect();
    out.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
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
