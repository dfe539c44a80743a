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
            message: e.to_string(),
        })
        .collect();
    out.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    out.dedup();
    out
}
