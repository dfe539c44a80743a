//! Output caps: the per-call cap (step `run`) and the session's output budget (step `outcome`).
//! Output over a cap is cut with a marker that names the limit.

use serde_json::Value;

use super::session::Session;

/// Which limit cut an output; the marker names it.
#[derive(Clone, Copy)]
enum Limit {
    /// The per-call output cap.
    Call,
    /// What remained of the session's output budget.
    Session,
}

/// The marker appended where output was cut.
fn cut_marker(limit: Limit, shown: usize, total: usize) -> String {
    match limit {
        Limit::Call => format!("\n[output truncated: showing {shown} of {total} bytes]"),
        Limit::Session => format!(
            "\n[output truncated at the session's output budget: showing {shown} of {total} bytes]"
        ),
    }
}

/// Cut text to at most `cap` bytes (on a character boundary) plus the marker.
pub(super) fn cap_text(text: String, cap: usize) -> (String, bool) {
    cap_text_at(text, cap, Limit::Call)
}

fn cap_text_at(text: String, cap: usize, limit: Limit) -> (String, bool) {
    if text.len() <= cap {
        return (text, false);
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = text[..end].to_owned();
    out.push_str(&cut_marker(limit, end, text.len()));
    (out, true)
}

/// Cap an output: strings are cut; structured output over the cap becomes its cut JSON text
/// (no longer valid JSON, which the marker says).
pub(super) fn cap_value(value: Value, cap: usize) -> (Value, bool) {
    cap_value_at(value, cap, Limit::Call)
}

fn cap_value_at(value: Value, cap: usize, limit: Limit) -> (Value, bool) {
    match value {
        Value::String(s) => {
            let (s, cut) = cap_text_at(s, cap, limit);
            (Value::String(s), cut)
        }
        other => {
            let text = other.to_string();
            if text.len() <= cap {
                return (other, false);
            }
            let (s, cut) = cap_text_at(text, cap, limit);
            (Value::String(s), cut)
        }
    }
}

/// The bytes an output costs against the session budget.
fn output_len(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    }
}

/// Charge an output to the session's remaining budget, cutting what does not fit.
pub(super) fn charge_session_budget(session: &Session, output: Value) -> (Value, bool) {
    let len = output_len(&output);
    let granted = session.take_output(len);
    if granted >= len {
        return (output, false);
    }
    cap_value_at(output, granted, Limit::Session)
}
