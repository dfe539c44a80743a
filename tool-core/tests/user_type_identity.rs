//! Two user types that schemars names alike (a `JsonSchema` written by hand keeps its name as its
//! `schema_id` unless it says otherwise) are still two types: each tool's schema, its pin and its
//! checks are made of its own parameter's type, never of a type of the same name that another
//! tool met first.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::json;
use tool_core::Registry;

/// A user type named `Port` whose schema is `$schema`, inlined when `inline`, and whose
/// `schema_id` is schemars' default: its name.
macro_rules! port {
    ($schema:tt, $inline:literal) => {
        #[derive(Debug, Deserialize)]
        pub struct Port(#[allow(dead_code)] serde_json::Value);

        impl JsonSchema for Port {
            fn schema_name() -> Cow<'static, str> {
                "Port".into()
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

mod numbered {
    use super::*;

    port!({"type": "integer", "minimum": 1, "maximum": 1024}, true);

    /// Listens on a numbered port.
    #[tool_core::tool(risk = "safe")]
    pub fn listen_numbered(port: Port) {
        let _ = port;
    }
}

mod named {
    use super::*;

    port!({"type": "string", "pattern": "^[a-z]+$"}, true);

    /// Listens on a named port.
    #[tool_core::tool(risk = "safe")]
    pub fn listen_named(port: Port) {
        let _ = port;
    }
}

mod numbered_def {
    use super::*;

    port!({"type": "integer", "maximum": 10}, false);

    /// Listens on a low port, its type in `$defs`.
    #[tool_core::tool(risk = "safe")]
    pub fn listen_low(port: Port) {
        let _ = port;
    }
}

mod named_def {
    use super::*;

    port!({"type": "string", "maxLength": 3}, false);

    /// Listens on a short-named port, its type in `$defs`.
    #[tool_core::tool(risk = "safe")]
    pub fn listen_short(port: Port) {
        let _ = port;
    }
}

fn registry() -> Registry {
    Registry::builder()
        .with_inventory_where(|m| m.starts_with("user_type_identity::"))
        .build()
        .expect("registry")
}

/// The node of `tool`'s `port` parameter, its `$ref` followed.
fn port_node(registry: &Registry, tool: &str) -> serde_json::Value {
    let schema = registry
        .get(tool)
        .expect("registered")
        .decl()
        .input_schema
        .value()
        .clone();
    let node = schema["properties"]["port"].clone();
    match node.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").expect("a local reference");
            schema["$defs"][name].clone()
        }
        None => node,
    }
}

#[test]
fn each_tool_has_its_own_types_schema_whatever_its_name() {
    let registry = registry();
    assert_eq!(registry.len(), 4);
    assert_eq!(port_node(&registry, "listen_numbered")["type"], "integer");
    assert_eq!(port_node(&registry, "listen_numbered")["maximum"], 1024);
    assert_eq!(port_node(&registry, "listen_named")["type"], "string");
    assert_eq!(port_node(&registry, "listen_named")["pattern"], "^[a-z]+$");
    assert_eq!(port_node(&registry, "listen_low")["maximum"], 10);
    assert_eq!(port_node(&registry, "listen_short")["maxLength"], 3);
}

#[test]
fn each_tool_checks_its_own_types_constraints() {
    let registry = registry();
    let valid = |tool: &str, port: serde_json::Value| {
        registry
            .get(tool)
            .expect("registered")
            .validator()
            .is_valid(&json!({ "port": port }))
    };
    assert!(valid("listen_numbered", json!(80)));
    assert!(!valid("listen_numbered", json!(5000)));
    assert!(!valid("listen_numbered", json!("http")));
    assert!(valid("listen_named", json!("http")));
    assert!(!valid("listen_named", json!("HTTP")));
    assert!(!valid("listen_named", json!(80)));
    assert!(valid("listen_low", json!(7)));
    assert!(!valid("listen_low", json!(80)));
    assert!(valid("listen_short", json!("ssh")));
    assert!(!valid("listen_short", json!("https")));
}

/// The pin is a dump of each tool's own schema: the same registry's dump, written from the
/// parts, names each tool's own constraints.
#[test]
fn the_dump_names_each_tools_own_constraints() {
    let dump = String::from_utf8(registry().canonical_dump().to_vec()).expect("UTF-8");
    for needle in [
        "\"maximum\": 1024",
        "\"^[a-z]+$\"",
        "\"maximum\": 10,",
        "\"maxLength\": 3",
    ] {
        assert!(dump.contains(needle), "{needle} missing from\n{dump}");
    }
}
