//! Which engine checks a tool's arguments and output, chosen when the registry is built.
//!
//! A `#[tool]` schema is compiled for the built-in checker right away (microseconds, no
//! meta-schema). A schema outside what the checker covers, and every dynamic tool's schema
//! (plugins, proxied MCP tools), goes to the general engine (feature `jsonschema`): checked
//! against the meta-schema now, compiled on first use. Without that feature such a schema is
//! refused here, so nothing is ever checked in part.

use std::sync::OnceLock;

use serde_json::Value;

use crate::schema::check::Checker;
use crate::schema::validate::Validator;

/// A validator made now or on first use.
pub(super) type Slot = OnceLock<Validator>;

/// Prepare the validator of `schema` (`dynamic`: a [`ToolDef::builder`](super::ToolDef::builder)
/// tool). `Err` says why the schema cannot be used.
pub(super) fn prepare(schema: &Value, dynamic: bool) -> Result<Slot, String> {
    let builtin = Checker::compile(schema);
    if let Err(u) = &builtin {
        if u.malformed {
            return Err(u.to_string());
        }
    }
    #[cfg(feature = "jsonschema")]
    if dynamic || builtin.is_err() {
        crate::schema::general::meta_check(schema)?;
        return Ok(OnceLock::new());
    }
    match builtin {
        Ok(checker) => Ok(OnceLock::from(Validator::of_checker(checker))),
        Err(u) => {
            let _ = dynamic;
            Err(format!(
                "{u} needs the general JSON Schema engine: enable tool-core's `jsonschema` feature"
            ))
        }
    }
}

/// The validator in `slot`, compiling the general engine's on first use. A schema that passed
/// the meta-schema but does not compile refuses every call (fail closed) and says why.
pub(super) fn get<'a>(slot: &'a Slot, schema: &Value) -> &'a Validator {
    slot.get_or_init(|| {
        #[cfg(feature = "jsonschema")]
        {
            Validator::general(schema).unwrap_or_else(Validator::refuse)
        }
        #[cfg(not(feature = "jsonschema"))]
        {
            // `prepare` fills every slot when there is no general engine.
            let _ = schema;
            Validator::refuse("no engine covers this schema".to_owned())
        }
    })
}

/// Every top-level `default` of `schema` must satisfy its own property's schema: the executor
/// fills a left-out argument with its default before the checks, so a default that breaks its
/// schema would refuse every call that leaves the argument out. `Err` names the first one.
pub(super) fn check_defaults(slot: &Slot, schema: &Value) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    // Keys compared in order, not hashed: a property's schema has a handful.
    let defaulted = |prop: &Value| {
        prop.as_object()
            .is_some_and(|m| m.keys().any(|k| k == "default"))
    };
    if !props.values().any(defaulted) {
        return Ok(());
    }
    let defaults: serde_json::Map<String, Value> = props
        .iter()
        .filter_map(|(name, prop)| Some((name.clone(), prop.get("default")?.clone())))
        .collect();
    if defaults.is_empty() {
        return Ok(());
    }
    // Only what is found at a defaulted property counts: the properties left out (`required`)
    // and rules across properties are about whole calls, not about one default.
    let owner = |path: &str| {
        defaults.keys().find(|name| {
            let at = format!("/{}", name.replace('~', "~0").replace('/', "~1"));
            path == at || path.starts_with(&format!("{at}/"))
        })
    };
    let instance = Value::Object(defaults.clone());
    let found = crate::schema::validate::violations(get(slot, schema), &instance);
    match found.iter().find_map(|v| Some((owner(&v.path)?, v))) {
        Some((name, v)) => Err(format!(
            "the default of `{name}` does not satisfy its own schema ({v}): every call that \
             leaves `{name}` out would be refused"
        )),
        None => Ok(()),
    }
}
