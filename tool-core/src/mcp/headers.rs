//! `x-mcp-header` (SEP-2243): a tool parameter whose value an HTTP client also sends as an
//! `Mcp-Param-<Name>` header, so gateways can route on it without reading the body.
//!
//! A tool declares it in its input schema: `"region": {"type": "string", "x-mcp-header":
//! "Region"}`. Over streamable HTTP at revision 2026-07-28 the transport compares each declared
//! header with the argument in the body before the call reaches the server (Base64 values in
//! `=?base64?…?=` decoded first): a missing header for a given argument, a header for an absent
//! one, a mismatch, or invalid Base64 is refused with HTTP 400 and JSON-RPC error `-32020`
//! (HeaderMismatch), and the tool does not run. For that the server answers the transport's
//! lookup of the tool's schema ([`ServerHandler::get_tool`](rmcp::ServerHandler::get_tool)).
//!
//! [`check_header_annotations`] checks the declarations themselves; the server refuses to start
//! with a tool whose declarations are invalid, since their headers could not be checked.

use serde_json::Value;

/// RFC 9110 token character.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Check the `x-mcp-header` declarations of one input schema: each a non-empty HTTP token,
/// unique ignoring case, on a `string`, `integer` or `boolean` property reached from
/// the root through `properties` alone (never on the root, never inside `items`, `allOf`, `$defs`
/// or the like).
pub fn check_header_annotations(schema: &Value) -> Result<(), String> {
    let Some(root) = schema.as_object() else {
        return Ok(());
    };
    if root.contains_key("x-mcp-header") {
        return Err("x-mcp-header must annotate a property, not the schema root".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    check_properties(schema, &mut Vec::new(), &mut seen)?;
    // Anything outside the `properties` chain may not declare a header.
    for (key, value) in root {
        if key != "properties" && mentions_header(value) {
            return Err(format!(
                "x-mcp-header under `{key}`: only properties reached through `properties` may declare one"
            ));
        }
    }
    Ok(())
}

fn check_properties(
    schema: &Value,
    path: &mut Vec<String>,
    seen: &mut std::collections::BTreeSet<String>,
) -> Result<(), String> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, prop) in props {
        path.push(name.clone());
        let at = path.join(".");
        if let Some(header) = prop.get("x-mcp-header") {
            let Some(header) = header.as_str() else {
                return Err(format!("property `{at}`: x-mcp-header must be a string"));
            };
            if header.is_empty() || !header.chars().all(is_tchar) {
                return Err(format!(
                    "property `{at}`: x-mcp-header {header:?} is not an HTTP token"
                ));
            }
            if !seen.insert(header.to_ascii_lowercase()) {
                return Err(format!(
                    "property `{at}`: x-mcp-header `{header}` is declared twice (ignoring case)"
                ));
            }
            match prop.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                other => {
                    return Err(format!(
                        "property `{at}`: x-mcp-header needs a primitive type, got {other:?}"
                    ))
                }
            }
        }
        check_properties(prop, path, seen)?;
        if let Some(obj) = prop.as_object() {
            for (key, value) in obj {
                if key != "properties" && key != "x-mcp-header" && mentions_header(value) {
                    return Err(format!(
                        "property `{at}`: x-mcp-header under `{key}` is not on a `properties` path"
                    ));
                }
            }
        }
        path.pop();
    }
    Ok(())
}

/// `true` when `value` holds an `x-mcp-header` key anywhere.
fn mentions_header(value: &Value) -> bool {
    match value {
        Value::Object(o) => o
            .iter()
            .any(|(k, v)| k == "x-mcp-header" || mentions_header(v)),
        Value::Array(a) => a.iter().any(mentions_header),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declarations_must_be_tokens_on_primitive_properties() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        assert!(check_header_annotations(&ok).is_ok());
        for bad in [
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "a b"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 1}}}),
            json!({"properties": {"a": {"type": "array", "x-mcp-header": "A"}}}),
            json!({"properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"}
            }}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
        ] {
            assert!(check_header_annotations(&bad).is_err(), "{bad}");
        }
    }
}
