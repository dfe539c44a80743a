//! Numbers and equality as JSON Schema sees them: `1` equals `1.0`, and every comparison between
//! a `u64`, an `i64` and an `f64` is exact (no rounding through `f64`).

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A JSON number in the widest exact form it has.
#[derive(Clone, Copy)]
enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(n: &Number) -> Exact {
    if let Some(u) = n.as_u64() {
        Exact::Int(i128::from(u))
    } else if let Some(i) = n.as_i64() {
        Exact::Int(i128::from(i))
    } else {
        // Without `arbitrary_precision` every other number is an `f64`.
        Exact::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// An integer against a float, exactly. `None` for NaN.
fn int_vs_float(i: i128, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Past i128's range (about 1.7e38) the float decides alone.
    const LIMIT: f64 = 1.0e38;
    let t = f.trunc();
    if t >= LIMIT {
        return Some(Ordering::Less);
    }
    if t <= -LIMIT {
        return Some(Ordering::Greater);
    }
    // In range, so the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    let ti = t as i128;
    Some(match i.cmp(&ti) {
        Ordering::Equal if f > t => Ordering::Less,
        Ordering::Equal if f < t => Ordering::Greater,
        other => other,
    })
}

/// `a` against `b`, exactly.
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (exact(a), exact(b)) {
        (Exact::Int(x), Exact::Int(y)) => Some(x.cmp(&y)),
        (Exact::Int(x), Exact::Float(y)) => int_vs_float(x, y),
        (Exact::Float(x), Exact::Int(y)) => int_vs_float(y, x).map(Ordering::reverse),
        (Exact::Float(x), Exact::Float(y)) => x.partial_cmp(&y),
    }
}

/// `true` for a number with no fractional part (`1.0` is an integer since draft 6).
pub(super) fn is_integer(n: &Number) -> bool {
    n.is_u64() || n.is_i64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Largest integer an `f64` holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// `value` is a multiple of `multiple` (> 0), as the general engine decides it: a whole divisor by
/// integer (or exact float) remainder; a fractional one on the shortest decimal each `f64`
/// prints as (`0.3` is a multiple of `0.1`), also where scaling those decimals overflows.
pub(super) fn is_multiple_of(value: &Number, multiple: f64) -> bool {
    if multiple.fract() == 0.0 {
        if multiple > 0.0 && multiple <= MAX_SAFE_INTEGER {
            // Exact: the divisor is a whole number up to 2^53.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let d = multiple as u64;
            if let Some(v) = value.as_u64() {
                return v % d == 0;
            }
            if let Some(v) = value.as_i64() {
                return v.unsigned_abs() % d == 0;
            }
        }
        let Some(v) = value.as_f64() else {
            return false;
        };
        return v.fract() == 0.0 && v % multiple == 0.0;
    }
    let Some(v) = value.as_f64() else {
        return false;
    };
    if v == 0.0 {
        return true;
    }
    if v.abs() < multiple {
        return false;
    }
    if let Some(answer) = divides_exactly(v, multiple) {
        return answer;
    }
    divides_on_decimals(v, multiple).unwrap_or(false)
}

/// [`divides_exactly`] where scaling to shared decimals overflows (`1e300` by `0.001`):
/// `value / multiple = (vm / mm) * 10^(md - vd)`, decided without forming the power, as the
/// general engine decides it on exact fractions of the same decimals.
fn divides_on_decimals(value: f64, multiple: f64) -> Option<bool> {
    let (vm, vd) = decimal_parts(value)?;
    let (mm, md) = decimal_parts(multiple)?;
    let (vm, mm) = (vm.unsigned_abs(), mm.unsigned_abs());
    if mm == 0 {
        return None;
    }
    let k = md - vd;
    if k >= 0 {
        // What is left of mm after its factors shared with vm must divide 10^k.
        let mut rest = mm / gcd(vm, mm);
        let (mut twos, mut fives) = (0, 0);
        while rest % 2 == 0 {
            rest /= 2;
            twos += 1;
        }
        while rest % 5 == 0 {
            rest /= 5;
            fives += 1;
        }
        Some(rest == 1 && twos <= k && fives <= k)
    } else {
        // vm / (mm * 10^-k): a divisor past u128 is larger than vm, which is not zero here.
        let places = u32::try_from(-k).ok()?;
        Some(
            10u128
                .checked_pow(places)
                .and_then(|p| mm.checked_mul(p))
                .is_some_and(|d| vm % d == 0),
        )
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The shortest decimal `value` prints as: `(mantissa, decimals)` with
/// `value = mantissa / 10^decimals`; `None` past `i128`.
fn decimal_parts(value: f64) -> Option<(i128, i32)> {
    if !value.is_finite() {
        return None;
    }
    let text = format!("{value:e}");
    let (digits, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let mut mantissa: i128 = 0;
    let mut decimals = 0;
    let mut fractional = false;
    let mut negative = false;
    for byte in digits.bytes() {
        match byte {
            b'-' => negative = true,
            b'.' => fractional = true,
            _ => {
                mantissa = mantissa
                    .checked_mul(10)?
                    .checked_add(i128::from(byte.checked_sub(b'0')?))?;
                decimals += i32::from(fractional);
            }
        }
    }
    Some((
        if negative { -mantissa } else { mantissa },
        decimals - exponent,
    ))
}

/// `value / multiple` is an integer, on their shortest decimals; `None` when they overflow.
fn divides_exactly(value: f64, multiple: f64) -> Option<bool> {
    let (vm, vd) = decimal_parts(value)?;
    let (mm, md) = decimal_parts(multiple)?;
    if mm == 0 {
        return None;
    }
    let shared = vd.min(md);
    let scale = |mantissa: i128, decimals: i32| {
        let places = u32::try_from(decimals - shared).ok()?;
        mantissa.checked_mul(10_i128.checked_pow(places)?)
    };
    Some(scale(vm, md)? % scale(mm, vd)? == 0)
}

/// JSON Schema equality: numbers by value, objects regardless of key order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equal(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(v: Value) -> Number {
        match v {
            Value::Number(n) => n,
            _ => panic!("not a number"),
        }
    }

    #[test]
    fn comparisons_are_exact_across_representations() {
        assert_eq!(
            compare(
                &n(json!(9007199254740993u64)),
                &n(json!(9007199254740992.0))
            ),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(&n(json!(1)), &n(json!(1.0))), Some(Ordering::Equal));
        assert_eq!(
            compare(&n(json!(-1)), &n(json!(-0.5))),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(&n(json!(2.5)), &n(json!(2))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(&n(json!(u64::MAX)), &n(json!(1e300))),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn multiples_are_decided_exactly() {
        assert!(is_multiple_of(&n(json!(10)), 5.0));
        assert!(!is_multiple_of(&n(json!(11)), 5.0));
        assert!(is_multiple_of(&n(json!(-10)), 5.0));
        assert!(is_multiple_of(&n(json!(1.5)), 0.5));
        assert!(is_multiple_of(&n(json!(0.3)), 0.1));
        assert!(is_multiple_of(&n(json!(19.99)), 0.01));
        // Found by the `validator_diff` fuzz target: decimals past i128 once scaled.
        assert!(is_multiple_of(&n(json!(1e300)), 0.001));
        assert!(is_multiple_of(&n(json!(3e300)), 0.3));
        assert!(!is_multiple_of(&n(json!(1e300)), 0.003));
        assert!(!is_multiple_of(&n(json!(1.5e-300)), 1e-301 * 7.0));
        assert!(!is_multiple_of(&n(json!(1_070_468.145)), 0.01));
        assert!(is_multiple_of(&n(json!(0)), 0.1));
        assert!(!is_multiple_of(&n(json!(0.05)), 0.1));
        assert!(is_multiple_of(&n(json!(7.0)), 7.0));
    }

    #[test]
    fn equality_ignores_representation_and_key_order() {
        assert!(equal(
            &json!({"a": 1, "b": [1.0]}),
            &json!({"b": [1], "a": 1.0})
        ));
        assert!(!equal(&json!([1]), &json!([true])));
        assert!(!equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
    }
}
