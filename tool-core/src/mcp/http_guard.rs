//! Checks on a streamable HTTP request body before rmcp decodes it, for what its decoder cannot
//! see or reports with the wrong error:
//!
//! - a body that is not JSON gets the JSON-RPC parse error `-32700` (HTTP 400);
//! - a message with a duplicate object key anywhere is refused (`-32602`, reason
//!   `malformed_call`), as the CLI refuses one: a JSON decoder keeps one of the two values, so
//!   what would run is not what the sender may have meant, nor what a log shows;
//! - a `tools/call` whose `arguments` is not an object gets `-32602` (invalid params), not
//!   "method not found".
//!
//! Other bodies pass unchanged (the same bytes), and rmcp validates `Host`, `Origin`, headers,
//! sessions and the message itself. The stdio transport applies the same checks to each line
//! (`super::stdio_guard`).

use std::collections::HashSet;
use std::fmt;

use axum::body::{to_bytes, Body};
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Value};

use super::body_scan::{scan, Kind};

use crate::reason::ReasonCode;

/// The largest body read (rmcp's own default limit for a POST body).
pub(super) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_PARAMS: i64 = -32602;

/// The middleware: inspect a POST body, answer the errors above, pass everything else on.
pub(super) async fn check_body(req: Request, next: Next) -> Response {
    if req.method() != Method::POST || !is_json(&req) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
        }
    };
    if let Some(refusal) = inspect(&bytes) {
        return refusal.into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

/// A JSON-RPC error answered without reaching the server.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refusal {
    id: Value,
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Refusal {
    /// The JSON-RPC error response.
    pub(super) fn to_message(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        json!({"jsonrpc": "2.0", "id": self.id, "error": error})
    }

    /// `true` when the refused message was a notification (no id, and it parsed): nothing
    /// answers a notification where a reply has no request to go to (stdio).
    pub(super) fn is_for_notification(&self) -> bool {
        self.id.is_null() && self.code != PARSE_ERROR
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            self.to_message().to_string(),
        )
            .into_response()
    }
}

/// The refusal for a body, or `None` to pass it on.
pub(super) fn inspect(bytes: &[u8]) -> Option<Refusal> {
    inspect_with(bytes, false)
}

/// [`inspect`], and with `initialize` also the `initialize` request's required fields (over stdio,
/// where it opens every session; over HTTP a 2026-07-28 server answers it as a removed method,
/// whatever its params).
pub(super) fn inspect_with(bytes: &[u8], initialize: bool) -> Option<Refusal> {
    // One pass checks the body and keeps what the checks read; only a body it refuses is read
    // again, to tell a parse error from a duplicate key and name where the duplicate is.
    let scanned = match scan(bytes) {
        Ok(s) => s,
        Err(e) => return Some(unparsed(bytes, &e)),
    };
    let id = scanned.id;
    let method = scanned.method.as_deref();
    if initialize && method == Some("initialize") {
        // Once per stdio connection: the whole message, known to parse.
        let message: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => return Some(unparsed(bytes, &e)),
        };
        if let Some(problem) = initialize_problem(message.get("params")) {
            return Some(Refusal {
                id,
                code: INVALID_PARAMS,
                message: format!("Invalid params: initialize: {problem}"),
                data: None,
            });
        }
    }
    if method == Some("tools/call") {
        if let Some(a) = scanned
            .arguments
            .filter(|a| *a != Kind::Object && *a != Kind::Null)
        {
            let kind = match a {
                Kind::Array => "an array",
                Kind::String => "a string",
                Kind::Number => "a number",
                _ => "not an object",
            };
            return Some(Refusal {
                id,
                code: INVALID_PARAMS,
                message: format!("tools/call `arguments` must be an object, got {kind}"),
                data: Some(json!({"reason_code": ReasonCode::InvalidArguments})),
            });
        }
    }
    None
}

/// The refusal of a body [`scan`] refused with `error`: the parse error when it is not
/// JSON, else the duplicate key and where it is.
fn unparsed(bytes: &[u8], error: &serde_json::Error) -> Refusal {
    let message: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Refusal {
                id: Value::Null,
                code: PARSE_ERROR,
                message: format!("Parse error: {e}"),
                data: None,
            }
        }
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    // Both passes found nothing: still refused (fail closed), with the one-pass error.
    let e = no_duplicate_keys(bytes)
        .err()
        .unwrap_or_else(|| error.to_string());
    Refusal {
        id,
        code: INVALID_PARAMS,
        message: format!("{}: {e}", ReasonCode::MalformedCall),
        data: Some(json!({"reason_code": ReasonCode::MalformedCall, "message": e})),
    }
}

/// What an `initialize` request lacks of what every revision with that handshake requires
/// (`protocolVersion`, `capabilities`, `clientInfo` with `name` and `version`), named field by
/// field; `None` when it has them. The server would refuse it too, but with an error about
/// another revision's request metadata.
fn initialize_problem(params: Option<&Value>) -> Option<String> {
    let Some(params) = params.and_then(Value::as_object) else {
        return Some("`params` must be an object".to_owned());
    };
    let kind = |v: Option<&Value>| match v {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    };
    if !params.get("protocolVersion").is_some_and(Value::is_string) {
        return Some(format!(
            "`protocolVersion` must be a string, it is {}",
            kind(params.get("protocolVersion"))
        ));
    }
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Some(format!(
            "`capabilities` must be an object, it is {}",
            kind(params.get("capabilities"))
        ));
    }
    let Some(info) = params.get("clientInfo").and_then(Value::as_object) else {
        return Some(format!(
            "`clientInfo` must be an object with `name` and `version`, it is {}",
            kind(params.get("clientInfo"))
        ));
    };
    for field in ["name", "version"] {
        if !info.get(field).is_some_and(Value::is_string) {
            return Some(format!(
                "`clientInfo.{field}` must be a string, it is {}",
                kind(info.get(field))
            ));
        }
    }
    None
}

/// `Err` naming the first duplicate key (and where it is) in a JSON document known to parse.
/// Slower than [`scan`] (it keeps the path): only for a body that one refused.
fn no_duplicate_keys(bytes: &[u8]) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut path = Vec::new();
    NoDup { path: &mut path }
        .deserialize(&mut de)
        .map_err(|e| e.to_string())
}

struct NoDup<'a> {
    path: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for NoDup<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDup<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(i.to_string());
            let more = seq.next_element_seed(NoDup { path: self.path })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                let at = if self.path.is_empty() {
                    "the message".to_owned()
                } else {
                    format!("`{}`", self.path.join("."))
                };
                return Err(de::Error::custom(format!(
                    "duplicate key {} in the object at {at}",
                    Value::String(key)
                )));
            }
            self.path.push(key);
            map.next_value_seed(NoDup { path: self.path })?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_json_is_a_parse_error() {
        let r = inspect(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#).expect("refused");
        assert_eq!(r.code, PARSE_ERROR);
        assert_eq!(r.id, Value::Null);
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":{"b":1,"b":2}}}}"#;
        let r = inspect(body).expect("refused");
        assert_eq!(r.code, INVALID_PARAMS);
        assert_eq!(r.id, json!(7));
        assert!(r.message.contains("params.arguments.a"), "{}", r.message);
        assert_eq!(
            r.data.expect("data")["reason_code"],
            json!("malformed_call")
        );
        assert!(inspect(br#"{"id":1,"id":2,"method":"ping"}"#).is_some());
    }

    /// The checks as they were with the whole document parsed first, then checked again for
    /// duplicates: what the one pass must answer, body for body.
    fn two_pass_inspect(bytes: &[u8], initialize: bool) -> Option<Refusal> {
        let message: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                return Some(Refusal {
                    id: Value::Null,
                    code: PARSE_ERROR,
                    message: format!("Parse error: {e}"),
                    data: None,
                })
            }
        };
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Err(e) = no_duplicate_keys(bytes) {
            return Some(Refusal {
                id,
                code: INVALID_PARAMS,
                message: format!("{}: {e}", ReasonCode::MalformedCall),
                data: Some(json!({"reason_code": ReasonCode::MalformedCall, "message": e})),
            });
        }
        if initialize && message.get("method").and_then(Value::as_str) == Some("initialize") {
            if let Some(problem) = initialize_problem(message.get("params")) {
                return Some(Refusal {
                    id,
                    code: INVALID_PARAMS,
                    message: format!("Invalid params: initialize: {problem}"),
                    data: None,
                });
            }
        }
        if message.get("method").and_then(Value::as_str) == Some("tools/call") {
            let arguments = message.get("params").and_then(|p| p.get("arguments"));
            if let Some(a) = arguments.filter(|a| !a.is_object() && !a.is_null()) {
                let kind = match a {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    _ => "not an object",
                };
                return Some(Refusal {
                    id,
                    code: INVALID_PARAMS,
                    message: format!("tools/call `arguments` must be an object, got {kind}"),
                    data: Some(json!({"reason_code": ReasonCode::InvalidArguments})),
                });
            }
        }
        None
    }

    #[test]
    fn one_pass_answers_every_body_as_the_two_passes_did() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[{"b":1}]}}}"#[..],
            br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            br#"{"id":2,"method":"tools/call","params":{"arguments":"s"}}"#,
            br#"{"id":3,"method":"tools/call","params":{"arguments":4.5}}"#,
            br#"{"id":4,"method":"tools/call","params":{"arguments":false}}"#,
            br#"{"id":5,"method":"tools/call","params":{"arguments":null}}"#,
            br#"{"params":{"arguments":[]},"id":{"n":[1]},"method":"tools/call"}"#,
            br#"{"id":6,"method":"tools/list","params":{"arguments":[]}}"#,
            br#"{"id":7,"method":"tools/call","params":[{"arguments":[]}]}"#,
            br#"{"id":8,"method":"tools/call","params":{"x":{"arguments":[]}}}"#,
            br#"{"id":9,"method":"tools/\u0063all","params":{"arguments":[]}}"#,
            br#"{"id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
            br#"{"id":11,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
            br#"{"id":12,"method":"initialize"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":[]}}]"#,
            br#"{"id":13,"id":14,"method":"tools/call","params":{"arguments":[]}}"#,
            br#"{"id":15,"method":"tools/call","params":{"arguments":{"a":1,"a":2}}}"#,
            br#"{"id":16,"method":"initialize","params":{"x":1,"x":2}}"#,
            br#"{"id":17,"method":"tools/call""#,
            br#"{"id":18} x"#,
            br#"42"#,
        ] {
            for initialize in [false, true] {
                assert_eq!(
                    inspect_with(body, initialize),
                    two_pass_inspect(body, initialize),
                    "{} (initialize: {initialize})",
                    String::from_utf8_lossy(body)
                );
            }
        }
    }

    #[test]
    fn one_pass_refuses_as_the_two_passes_did() {
        // What the refusal was when the body was parsed, then checked for duplicates.
        let two_passes = |body: &[u8]| match serde_json::from_slice::<Value>(body) {
            Err(e) => (PARSE_ERROR, Value::Null, format!("Parse error: {e}")),
            Ok(v) => {
                let e = no_duplicate_keys(body).expect_err("a duplicate");
                let id = v.get("id").cloned().unwrap_or(Value::Null);
                (INVALID_PARAMS, id, format!("malformed_call: {e}"))
            }
        };
        for body in [
            &br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":{"b":1,"b":2}}}}"#[..],
            br#"{"id":1,"id":2,"method":"ping"}"#,
            br#"[{"a":1},{"a":1,"a":1}]"#,
            br#"{"id":3,"params":{"x":[1,{"y":{},"y":{}}]}}"#,
            // A duplicate before the body stops being JSON: still a parse error.
            br#"{"id":1,"id":2,"method":"#,
            br#"{"id":1} trailing"#,
            br#"{"a":1,"a":2} {"#,
        ] {
            let r = inspect(body).expect("refused");
            let (code, id, message) = two_passes(body);
            assert_eq!((r.code, r.id, r.message), (code, id, message));
            if code == INVALID_PARAMS {
                assert_eq!(
                    r.data.expect("data")["reason_code"],
                    json!("malformed_call")
                );
            }
        }
    }

    #[test]
    fn an_initialize_without_what_it_requires_is_refused_by_name() {
        let refused = |params: &str| {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{params}}}"#);
            assert_eq!(
                inspect(body.as_bytes()),
                None,
                "over HTTP the server answers"
            );
            inspect_with(body.as_bytes(), true).map(|r| {
                assert_eq!(r.code, INVALID_PARAMS);
                assert_eq!(r.id, json!(1));
                r.message
            })
        };
        let ok = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#;
        assert_eq!(refused(ok), None);
        for (params, names) in [
            (
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c"}}"#,
                "`clientInfo.version` must be a string, it is missing",
            ),
            (
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":1,"version":"1"}}"#,
                "`clientInfo.name` must be a string, it is a number",
            ),
            (
                r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#,
                "`clientInfo` must be an object",
            ),
            (
                r#"{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"}}"#,
                "`capabilities` must be an object, it is missing",
            ),
            (
                r#"{"protocolVersion":7,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#,
                "`protocolVersion` must be a string, it is a number",
            ),
            ("[]", "`params` must be an object"),
        ] {
            let message = refused(params).expect(params);
            assert!(message.contains(names), "{params}: {message}");
            assert!(
                message.starts_with("Invalid params: initialize: "),
                "{message}"
            );
        }
    }

    #[test]
    fn array_arguments_are_invalid_params() {
        let body = br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":[1]}}"#;
        let r = inspect(body).expect("refused");
        assert_eq!(r.code, INVALID_PARAMS);
        assert_eq!(r.id, json!("x"));
    }

    #[test]
    fn ordinary_messages_pass() {
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[{"b":1},{"b":2}]}}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        ] {
            assert_eq!(inspect(body), None);
        }
    }
}
