//! The checks a declaration passes before it is registered, and the validators they prepare.

use serde_json::Value;

use super::error::RegistryError;
use super::{script_setup, validators};
use crate::decl::{is_valid_tool_name, ToolDecl};

/// Check a declaration against the rules `#[tool]` enforces at compile time.
pub fn check_decl(decl: &ToolDecl) -> Result<(), RegistryError> {
    check_and_prepare(decl, true).map(drop)
}

/// The validators of one declaration: its input schema, and its output schema if it has one.
type Validators = (validators::Slot, Option<validators::Slot>);

/// Why the registry's own checks of an input schema would refuse `decl`'s, if they would (for
/// schemas `#[tool]` stated whole, which start-up takes on the macro's word).
pub(crate) fn check_in_full(decl: &ToolDecl) -> Result<(), String> {
    check_input_root(decl.input_schema.value())?;
    prepare_input(decl, false).map(drop)
}

/// Whether the registry takes a schema whose user types' parts are those of `probe` (the
/// nodes as its properties, their `$defs`; see `schema::assembled`) on their word, building it
/// and compiling its checker on first use: what `check_input_root` and `prepare_input` check
/// of the whole schema holds of the parts, the checker surely compiles them, and no node has a
/// default. (`#[tool]` vouches for the other nodes, as for a schema it states whole.)
pub(crate) fn parts_hold(probe: &Value) -> bool {
    let defaulted = |node: &Value| node.get("default").is_some();
    check_input_root(probe).is_ok()
        && crate::schema::check::compiles_surely(probe)
        && probe
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|props| !props.values().any(defaulted))
}

/// The input schema's root is an object schema and refers to nothing outside itself.
fn check_input_root(schema: &Value) -> Result<(), String> {
    let root = schema
        .as_object()
        .ok_or_else(|| "the input schema must be a JSON object".to_owned())?;
    if root.get("type") != Some(&Value::String("object".to_owned())) {
        return Err(r#"the input schema root must have "type": "object""#.to_owned());
    }
    if let Some(r) = find_external_ref(schema) {
        return Err(format!(
            "external `$ref` `{r}` is not allowed; only local `#/...` references"
        ));
    }
    Ok(())
}

/// The input schema's validator, once its defaults and what `decl` declares of its properties
/// hold.
fn prepare_input(decl: &ToolDecl, dynamic: bool) -> Result<validators::Slot, String> {
    let schema = decl.input_schema.value();
    let validator =
        validators::prepare(schema, dynamic).map_err(|e| format!("invalid input schema: {e}"))?;
    validators::check_defaults(&validator, schema)?;
    for arg in &decl.path_args {
        if !is_string_property(schema, arg) {
            return Err(format!(
                "path argument `{arg}` must be a string property of the input schema"
            ));
        }
    }
    for arg in &decl.script_args {
        if !is_string_property(schema, arg) {
            return Err(format!(
                "script argument `{arg}` must be a string property of the input schema"
            ));
        }
    }
    Ok(validator)
}

/// [`check_decl`], returning the validators it prepared (`dynamic`: a tool built with
/// [`ToolDef::builder`]; see `validators` for which engine checks what).
pub(super) fn check_and_prepare(
    decl: &ToolDecl,
    dynamic: bool,
) -> Result<Validators, RegistryError> {
    let bad = |reason: String| RegistryError::InvalidDeclaration {
        tool: decl.name.clone(),
        reason,
    };
    if !is_valid_tool_name(&decl.name) {
        return Err(bad(format!(
            "name must match {} (providers reject other names)",
            tool_rules::TOOL_NAME_PATTERN
        )));
    }
    if decl.description.trim().is_empty() {
        return Err(bad("a description is required".to_owned()));
    }
    // Stated whole by `#[tool]`, which checked at compile time what `check_input_root` and
    // `prepare_input` check (an object root, no `$ref`, keywords the built-in checker compiles,
    // no default, path and script arguments of string types): it is built, and its checker
    // compiled, on first use (a test holds every stated schema to those checks). Put together
    // from parts: the same, the user types' parts checked by `parts_hold`.
    let stated = (decl.input_schema.is_stated() || decl.input_schema.is_assembled()) && !dynamic;
    if !stated {
        check_input_root(&decl.input_schema).map_err(bad)?;
    }
    if let Some(out) = &decl.output_schema {
        if let Some(r) = find_external_ref(out) {
            return Err(bad(format!(
                "external `$ref` `{r}` in the output schema is not allowed"
            )));
        }
    }
    let validator = if stated {
        validators::builtin_on_first_use()
    } else {
        prepare_input(decl, dynamic).map_err(bad)?
    };
    if !decl.script_args.is_empty() && decl.script_lang.is_none() {
        return Err(bad("script arguments need a script language".to_owned()));
    }
    script_setup::check(decl).map_err(bad)?;
    let output = decl
        .output_schema
        .as_ref()
        .map(|s| {
            validators::prepare(s, dynamic).map_err(|e| bad(format!("invalid output schema: {e}")))
        })
        .transpose()?;
    Ok((validator, output))
}

fn find_external_ref(v: &Value) -> Option<String> {
    // Only containers are walked into: most of a schema's values are strings and numbers.
    let walk = |val: &Value| match val {
        Value::Object(_) | Value::Array(_) => find_external_ref(val),
        _ => None,
    };
    match v {
        Value::Object(m) => m.iter().find_map(|(k, val)| {
            // The first byte rules out nearly every key before a comparison.
            if k.starts_with('$') && (k == "$ref" || k == "$dynamicRef") {
                if let Value::String(s) = val {
                    if !s.starts_with('#') {
                        return Some(s.clone());
                    }
                }
            }
            walk(val)
        }),
        Value::Array(a) => a.iter().find_map(walk),
        _ => None,
    }
}

pub(super) fn schema_property<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    schema.get("properties")?.get(name)
}

/// `true` when the property's type is `"string"` (optionally also `"null"`).
fn is_string_property(schema: &Value, name: &str) -> bool {
    let Some(prop) = schema_property(schema, name) else {
        return false;
    };
    let is_string_type = |t: &Value| match t {
        Value::String(s) => s == "string",
        Value::Array(a) => {
            a.iter().any(|x| x == "string") && a.iter().all(|x| x == "string" || x == "null")
        }
        _ => false,
    };
    if let Some(t) = prop.get("type") {
        return is_string_type(t);
    }
    // `Option<T>` may come out as anyOf [{type: string}, {type: null}].
    if let Some(Value::Array(alts)) = prop.get("anyOf").or_else(|| prop.get("oneOf")) {
        let mut saw_string = false;
        for alt in alts {
            match alt.get("type") {
                Some(Value::String(s)) if s == "string" => saw_string = true,
                Some(Value::String(s)) if s == "null" => {}
                _ => return false,
            }
        }
        return saw_string;
    }
    false
}
