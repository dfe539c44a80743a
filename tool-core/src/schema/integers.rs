//! Integers as the handler's type sees them. JSON Schema's `integer` accepts `1.0` and any
//! magnitude; a Rust `u32` accepts neither `1.0` nor `5000000000`. Two fixes make the validator and
//! the deserializer agree: the schema of a sized integer states its type's bounds, and a number
//! with no fractional part reaches the deserializer as an integer.

use serde_json::{Map, Number, Value};

/// The bounds of the integer `format`s schemars writes for Rust's sized integer types.
fn format_bounds(format: &str) -> Option<(Number, Number)> {
    tool_rules::integer_format_bounds(format).map(|(lo, hi)| (Number::from(lo), Number::from(hi)))
}

/// `node.get(key)`, found by comparing the keys of a small node in order instead of hashing
/// (a schema node has a handful of keys; `preserve_order` hashes with SipHash).
fn field<'a>(node: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if node.len() <= 8 {
        node.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    } else {
        node.get(key)
    }
}

fn is_integer_node(node: &Map<String, Value>) -> bool {
    match field(node, "type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// Give every sized integer node of `schema` its type's `minimum` and `maximum`, keeping a
/// tighter bound the declaration already has.
pub(crate) fn state_integer_bounds(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            if is_integer_node(node) {
                let bounds = field(node, "format")
                    .and_then(Value::as_str)
                    .and_then(format_bounds);
                if let Some((lo, hi)) = bounds {
                    let lo_f = lo.as_f64().unwrap_or(f64::MIN);
                    let hi_f = hi.as_f64().unwrap_or(f64::MAX);
                    let keep_lo = field(node, "minimum")
                        .and_then(Value::as_f64)
                        .is_some_and(|m| m >= lo_f);
                    let keep_hi = field(node, "maximum")
                        .and_then(Value::as_f64)
                        .is_some_and(|m| m <= hi_f);
                    if !keep_lo {
                        node.insert("minimum".to_owned(), Value::Number(lo));
                    }
                    if !keep_hi {
                        node.insert("maximum".to_owned(), Value::Number(hi));
                    }
                }
            }
            node.values_mut()
                .filter(|v| v.is_object() || v.is_array())
                .for_each(state_integer_bounds);
        }
        Value::Array(items) => items
            .iter_mut()
            .filter(|v| v.is_object() || v.is_array())
            .for_each(state_integer_bounds),
        _ => {}
    }
}

/// Turn every number with no fractional part that fits an `i64` or a `u64` (`1.0`, `1e2`) into
/// that integer, so an integer parameter receives what its schema accepted. Floating-point
/// parameters deserialize from integers too.
pub(crate) fn integral_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                // 2^64 and -2^63 are exact in f64; the casts below are then exact.
                if f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                    *n = Number::from(f as u64);
                } else if f.fract() == 0.0 && (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
                    *n = Number::from(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sized_integers_get_their_bounds_and_tighter_ones_stay() {
        let mut s = json!({"properties": {
            "a": {"type": "integer", "format": "uint32"},
            "b": {"type": ["integer", "null"], "format": "int8", "minimum": -3},
            "c": {"type": "integer", "format": "uint64", "minimum": 1, "maximum": 120},
            "d": {"type": "integer"},
        }});
        state_integer_bounds(&mut s);
        let p = &s["properties"];
        assert_eq!(p["a"]["minimum"], 0);
        assert_eq!(p["a"]["maximum"], u32::MAX);
        assert_eq!(p["b"]["minimum"], -3);
        assert_eq!(p["b"]["maximum"], 127);
        assert_eq!(
            (&p["c"]["minimum"], &p["c"]["maximum"]),
            (&json!(1), &json!(120))
        );
        assert!(p["d"].get("minimum").is_none());
    }

    #[test]
    fn integral_floats_become_integers_and_others_stay() {
        let mut v: Value =
            serde_json::from_str(r#"{"a": 1.0, "b": [1e2, -3.0], "c": 1.5, "d": 1e300, "e": 7}"#)
                .expect("json");
        integral_numbers_as_integers(&mut v);
        assert!(v["a"].is_u64() && v["a"] == 1);
        assert!(v["b"][0].is_u64() && v["b"][0] == 100);
        assert!(v["b"][1].is_i64() && v["b"][1] == -3);
        assert!(v["c"].is_f64());
        assert!(v["d"].is_f64());
        assert_eq!(v["e"], 7);
    }
}
