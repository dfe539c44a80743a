//! A schema of user types is put together on first use only when the registry's checks accept
//! what schemars made of those types; anything they would refuse in a whole schema is refused
//! at start-up, with the message it always had, and anything they cannot vouch for is built and
//! checked whole at start-up.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use tool_core::registry::RegistryError;
use tool_core::Registry;

/// A user type whose schema is whatever `$schema` says (a user's own `JsonSchema`), inlined
/// into the parameter's node when `inline`.
macro_rules! user_type {
    ($name:ident, $schema:tt) => {
        user_type!($name, $schema, false);
    };
    ($name:ident, $schema:tt, $inline:literal) => {
        #[derive(Debug, Deserialize)]
        pub struct $name(#[allow(dead_code)] serde_json::Value);

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                $inline
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

user_type!(BadDefault, {"type": "integer", "default": "seven"}, true);
user_type!(FarRef, {"$ref": "https://example.com/far.json"});
user_type!(Backtracking, {"type": "string", "pattern": "^(a+)\\1$"});
user_type!(Plain, {"type": "integer", "minimum": 1});

mod bad_default {
    use super::*;

    /// A default that breaks its own schema.
    #[tool_core::tool(risk = "safe")]
    pub fn bad_default(label: String, count: BadDefault) {
        let _ = (label, count);
    }
}

mod far_ref {
    use super::*;

    /// A reference out of the schema.
    #[tool_core::tool(risk = "safe")]
    pub fn far_ref(label: String, far: FarRef) {
        let _ = (label, far);
    }
}

mod backtracking {
    use super::*;

    /// A pattern the built-in checker does not compile.
    #[tool_core::tool(risk = "safe")]
    pub fn backtracking(label: String, word: Backtracking) {
        let _ = (label, word);
    }
}

mod plain {
    use super::*;

    /// A user type the checks accept.
    #[tool_core::tool(risk = "safe")]
    pub fn plain(label: String, count: Plain) {
        let _ = (label, count);
    }
}

fn build(module: &'static str) -> Result<Registry, RegistryError> {
    let module = format!("assembled_refusals::{module}");
    Registry::builder()
        .with_inventory_where(move |m| m == module)
        .build()
}

fn refusal(module: &'static str) -> String {
    match build(module) {
        Err(RegistryError::InvalidDeclaration { reason, .. }) => reason,
        Err(other) => panic!("`{module}`: refused otherwise: {other}"),
        Ok(_) => panic!("`{module}`: accepted"),
    }
}

#[test]
fn a_user_type_whose_default_breaks_its_schema_is_refused_at_start_up() {
    let reason = refusal("bad_default");
    assert!(
        reason.contains("the default of `count` does not satisfy its own schema"),
        "{reason}"
    );
}

#[test]
fn a_user_type_referring_out_of_the_schema_is_refused_at_start_up() {
    let reason = refusal("far_ref");
    assert!(
        reason.contains("external `$ref` `https://example.com/far.json`"),
        "{reason}"
    );
}

#[test]
fn a_user_type_the_built_in_checker_may_not_compile_is_checked_whole_at_start_up() {
    let registry = if cfg!(feature = "jsonschema") {
        build("backtracking").expect("the general engine checks it")
    } else {
        let reason = refusal("backtracking");
        assert!(reason.contains("`jsonschema` feature"), "{reason}");
        return;
    };
    let decl = registry.get("backtracking").expect("registered").decl();
    assert!(!decl.input_schema.is_assembled());
    assert!(decl.input_schema.is_built());
}

#[test]
fn a_user_type_the_checks_accept_waits_for_first_use() {
    let registry = build("plain").expect("accepted");
    let tool = registry.get("plain").expect("registered");
    let schema = &tool.decl().input_schema;
    assert!(schema.is_assembled() && !schema.is_built());
    assert!(!registry.canonical_dump().is_empty());
    assert!(!schema.is_built(), "the dump is written from the parts");
    assert!(tool
        .validator()
        .is_valid(&serde_json::json!({"label": "x", "count": 2})));
    assert!(!tool
        .validator()
        .is_valid(&serde_json::json!({"label": "x", "count": 0})));
    assert_eq!(schema["properties"]["count"]["$ref"], "#/$defs/Plain");
    // A copy shares the parts; changed, it is no longer taken from them.
    let mut changed = schema.clone();
    assert!(changed.is_assembled());
    changed["properties"]["count"] = serde_json::json!({"type": "string"});
    assert!(!changed.is_assembled() && schema.is_assembled());
    assert_eq!(schema["properties"]["count"]["$ref"], "#/$defs/Plain");
}
