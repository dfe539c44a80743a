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
