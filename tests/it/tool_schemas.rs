//! Tool-defined input schemas: a `#[tool]` declares a hand-written schema (composition,
//! conditionals, `$anchor`), the executor enforces it, and every export serves it as written.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::{
    tool, CallOptions, CallResult, Executor, ExecutorConfig, ReasonCode, Registry, Step,
};

use crate::exec_support::call;

/// Arguments as the hand-written schema describes them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contact {
    name: Option<String>,
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

/// Reach someone (the schema comes from a file of this crate).
#[tool(risk = "safe", input_schema = "schemas/contact.json")]
fn reach(contact: Contact) -> String {
    let how = match contact.contact_method.as_deref() {
        Some("phone") => contact.phone,
        _ => contact.email.or(contact.phone),
    };
    format!(
        "{}: {}",
        contact.name.unwrap_or_default(),
        how.unwrap_or_default()
    )
}

fn range_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "low": {"type": "integer"},
            "high": {"type": "integer"},
            "unit": {"$ref": "#unit"}
        },
        "$defs": {"unit": {"$anchor": "unit", "enum": ["m", "km"]}},
        "required": ["low", "high"],
        "oneOf": [
            {"properties": {"unit": {"const": "m"}}, "required": ["unit"]},
            {"not": {"required": ["unit"]}}
        ],
        "additionalProperties": false
    })
}

/// Describe a range (the schema comes from a function; the arguments arrive as a `Value`).
#[tool(risk = "safe", input_schema = range_schema)]
fn describe_range(args: Value) -> String {
    format!("{}..{}", args["low"], args["high"])
}

/// Takes no parameter, but its arguments are still checked.
#[tool(risk = "safe", input_schema = range_schema)]
fn ignore_range() -> &'static str {
    "ignored"
}

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .with_inventory_where(|m| m == module_path!())
            .build()
            .expect("hand-written schemas are valid declarations"),
    )
}

async fn run(name: &str, args: Value) -> CallResult {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = Executor::new(registry(), ExecutorConfig::new(dir.path())).expect("executor");
    let session = exec.new_session();
    exec.execute(&session, call(name, args), CallOptions::default())
        .await
}

fn contact_file() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/contact.json"))
            .expect("the schema file");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test]
async fn a_composed_schema_is_enforced() {
    let ok = [
        json!({"name": "Ann", "contactMethod": "phone", "phone": "123"}),
        json!({"name": "Bo", "email": "b@example.org"}),
        json!({"contactMethod": "email", "email": "c@example.org", "address": {"city": "X"}}),
    ];
    for args in ok {
        let r = run("reach", args.clone()).await;
        assert!(r.is_ok(), "{args}: {r:?}");
    }
    assert_eq!(
        run(
            "reach",
            json!({"name": "Ann", "contactMethod": "phone", "phone": "123"})
        )
        .await
        .output,
        Some(json!("Ann: 123"))
    );
    let refused = [
        // anyOf inside allOf: neither phone nor email.
        json!({"name": "Ann"}),
        // if/then: phone chosen, no phone given.
        json!({"contactMethod": "phone", "email": "a@example.org"}),
        // else: no contact method, so an email is required.
        json!({"phone": "123"}),
        // additionalProperties: false.
        json!({"email": "a@example.org", "nickname": "A"}),
        // The `$ref` into `$defs` is followed.
        json!({"email": "a@example.org", "address": {"city": 7}}),
    ];
    for args in refused {
        let r = run("reach", args.clone()).await;
        assert_eq!(r.code, Some(ReasonCode::InvalidArguments), "{args}: {r:?}");
        assert_eq!(r.step, Some(Step::Validate), "{args}");
        let msg = r.message.unwrap_or_default();
        assert!(
            msg.starts_with("the arguments do not match the schema of `reach`"),
            "{msg}"
        );
    }
}

#[tokio::test]
async fn anchors_and_one_of_are_enforced_for_a_function_schema() {
    assert_eq!(
        run("describe_range", json!({"low": 1, "high": 2}))
            .await
            .output,
        Some(json!("1..2"))
    );
    assert!(
        run("describe_range", json!({"low": 1, "high": 2, "unit": "m"}))
            .await
            .is_ok()
    );
    // `km` passes the anchored enum but neither branch of oneOf.
    let r = run("describe_range", json!({"low": 1, "high": 2, "unit": "km"})).await;
    assert_eq!(r.code, Some(ReasonCode::InvalidArguments), "{r:?}");
    // The anchored enum itself.
    let r = run("describe_range", json!({"low": 1, "high": 2, "unit": "mm"})).await;
    assert_eq!(r.code, Some(ReasonCode::InvalidArguments), "{r:?}");
    let r = run("ignore_range", json!({"low": "1", "high": 2})).await;
    assert_eq!(r.code, Some(ReasonCode::InvalidArguments), "{r:?}");
    assert_eq!(
        run("ignore_range", json!({"low": 1, "high": 2}))
            .await
            .output,
        Some(json!("ignored"))
    );
}

#[test]
fn the_schema_is_served_as_written() {
    let reg = registry();
    let reach = reg.get("reach").expect("reach");
    assert_eq!(reach.decl().input_schema, contact_file());
    let mcp = tool_core::schema::export::mcp::tool(reach.decl());
    assert_eq!(
        mcp["inputSchema"],
        contact_file(),
        "nothing stripped for MCP"
    );
    for key in [
        "$schema",
        "$defs",
        "allOf",
        "if",
        "then",
        "else",
        "additionalProperties",
    ] {
        assert!(mcp["inputSchema"].get(key).is_some(), "{key} kept");
    }
    assert_eq!(
        mcp["inputSchema"]["$defs"]["address"]["$anchor"],
        "addressDef"
    );
    let range = reg.get("describe_range").expect("describe_range");
    assert_eq!(range.decl().input_schema, range_schema());
    // The registry dump (what pinning hashes) carries the schema unchanged too.
    let dump: Value = serde_json::from_slice(reg.canonical_dump()).expect("dump is JSON");
    let entry = dump["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "reach"))
        .expect("reach in the dump");
    assert_eq!(entry["input_schema"], contact_file());
}
