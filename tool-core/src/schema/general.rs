//! The general engine (`jsonschema`, feature `jsonschema`): the reference validator for schemas
//! that come from outside the program (dynamic tools, proxied MCP tools, `dump --from`), and the
//! oracle the built-in checker is tested against. Its errors are worded here as the built-in
//! checker words them.

use serde_json::Value;

use super::violation::{cut, Violation};

/// Compile a Draft 2020-12 validator. Remote `$ref` retrieval is compiled out; local `#/...`
/// references work. No type coercion: `"42"` is not `42`.
pub(super) fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// `schema` is a valid Draft 2020-12 schema (checked against the meta-schema, compiling no
/// validator for it).
pub(crate) fn meta_check(schema: &Value) -> Result<(), String> {
    jsonschema::draft202012::meta::validate(schema).map_err(|e| e.to_string())
}

/// What a violation says. A value outside a set of alternatives is reported without naming the
/// combinator (`oneOf` here, `anyOf` in a strict provider dump): the allowed values when every
/// alternative is a constant (an enum with documented variants), else that none matched.
fn message(e: &jsonschema::ValidationError<'_>) -> String {
    cut(full_message(e))
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

/// Every violation of `args`, unsorted.
pub(super) fn violations(validator: &jsonschema::Validator, args: &Value) -> Vec<Violation> {
    validator
        .iter_errors(args)
        .map(|e| Violation {
            path: e.instance_path().to_string(),
            message: message(&e),
            schema_path: subschema_path(&e),
            schema: None,
        })
        .collect()
}
