//! Output caps: the per-call cap (step `run`) and the session's output budget (step `outcome`).
//! Output over a cap is cut with a marker that names the limit.
//!
//! Every content block counts at its wire size ([`Content::size`]: the base64 length of binary
//! data included), after the output value. Blocks are kept in order while they fit; the first
//! one that does not is cut if it is text (a text block, a text resource) and replaced by a text
//! marker naming what was left out if it is binary; the blocks after it are left out, and one
//! marker says how many.

use serde_json::Value;

use super::session::Session;
use crate::content::{Content, EmbeddedResource, ResourceBody};

/// Which limit cut an output; the marker names it.
#[derive(Clone, Copy)]
enum Limit {
    /// The per-call output cap.
    Call,
    /// What remained of the session's output budget.
    Session,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::Call => "the output cap",
            Limit::Session => "the session's output budget",
        }
    }
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

/// The bytes an output value costs (`Null` costs nothing: it is the value of a result made of
/// content blocks only).
fn value_len(value: &Value) -> usize {
    match value {
        Value::Null => 0,
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    }
}

/// The bytes an output costs against the caps: its value and every content block.
pub(super) fn output_len(value: &Value, content: &[Content]) -> usize {
    content
        .iter()
        .fold(value_len(value), |n, b| n.saturating_add(b.size()))
}

/// The output of a call: its value and its content blocks.
pub(super) struct Output {
    pub(super) value: Value,
    pub(super) content: Vec<Content>,
}

/// Cap an output at `cap` bytes. Strings are cut; structured output over the cap becomes its cut
/// JSON text (no longer valid JSON, which the marker says); blocks as the module says.
pub(super) fn cap_output(out: Output, cap: usize) -> (Output, bool) {
    cap_output_at(out, cap, Limit::Call)
}

fn cap_output_at(out: Output, cap: usize, limit: Limit) -> (Output, bool) {
    let total = output_len(&out.value, &out.content);
    if total <= cap {
        return (out, false);
    }
    let value_cost = value_len(&out.value);
    let (value, mut cut) = if value_cost == 0 {
        (out.value, false)
    } else {
        cap_value_at(out.value, cap, limit)
    };
    let mut left = cap.saturating_sub(value_cost.min(cap));
    let mut kept = Vec::with_capacity(out.content.len());
    let mut blocks = out.content.into_iter();
    for block in blocks.by_ref() {
        let size = block.size();
        if size <= left {
            left -= size;
            kept.push(block);
            continue;
        }
        cut = true;
        kept.push(cut_block(block, left, limit));
        break;
    }
    let dropped = blocks.len();
    if dropped > 0 {
        kept.push(Content::Text(format!(
            "[{dropped} more content block{} left out at {}]",
            if dropped == 1 { "" } else { "s" },
            limit.name()
        )));
    }
    (
        Output {
            value,
            content: kept,
        },
        cut,
    )
}

/// The part of a block that fits in `left` bytes: text is cut, binary data is replaced by a
/// marker (half an image is no image).
fn cut_block(block: Content, left: usize, limit: Limit) -> Content {
    match block {
        Content::Text(t) => Content::Text(cap_text_at(t, left, limit).0),
        Content::Resource(EmbeddedResource {
            uri,
            mime_type,
            body: ResourceBody::Text(t),
        }) => {
            let room = left.saturating_sub(uri.len() + mime_type.as_ref().map_or(0, String::len));
            Content::Resource(EmbeddedResource {
                uri,
                mime_type,
                body: ResourceBody::Text(cap_text_at(t, room, limit).0),
            })
        }
        other => Content::Text(format!(
            "[{} left out at {}: {} bytes with its base64]",
            other.describe(),
            limit.name(),
            other.size()
        )),
    }
}

/// Charge an output to the session's remaining budget, cutting what does not fit.
pub(super) fn charge_session_budget(session: &Session, out: Output) -> (Output, bool) {
    let len = output_len(&out.value, &out.content);
    let granted = session.take_output(len);
    if granted >= len {
        return (out, false);
    }
    cap_output_at(out, granted, Limit::Session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Image;
    use serde_json::json;

    fn out(value: Value, content: Vec<Content>) -> Output {
        Output { value, content }
    }

    #[test]
    fn blocks_count_at_their_base64_size() {
        // 30 bytes of PNG are 40 base64 characters, plus `image/png` (9).
        let img = Content::from(Image::png(vec![7; 30]));
        assert_eq!(output_len(&Value::Null, std::slice::from_ref(&img)), 49);
        let (o, cut) = cap_output(out(Value::Null, vec![img.clone()]), 49);
        assert!(!cut);
        assert_eq!(o.content, vec![img.clone()]);
        let (o, cut) = cap_output(out(Value::Null, vec![img]), 48);
        assert!(cut);
        match &o.content[..] {
            [Content::Text(t)] => assert!(t.contains("image/png") && t.contains("left out"), "{t}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_blocks_are_cut_and_later_blocks_left_out() {
        let blocks = vec![
            Content::text("0123456789"),
            Content::text("abcdefghij"),
            Image::png(vec![1]).into(),
        ];
        let (o, cut) = cap_output(out(Value::Null, blocks), 15);
        assert!(cut);
        assert_eq!(o.content.len(), 3, "{:?}", o.content);
        assert_eq!(o.content[0], Content::text("0123456789"));
        match &o.content[1] {
            Content::Text(t) => assert!(t.starts_with("abcde\n[output truncated"), "{t}"),
            other => panic!("{other:?}"),
        }
        match &o.content[2] {
            Content::Text(t) => assert!(t.contains("1 more content block left out"), "{t}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_value_counts_before_the_blocks() {
        let (o, cut) = cap_output(out(json!("12345"), vec![Content::text("abcdef")]), 8);
        assert!(cut);
        assert_eq!(o.value, json!("12345"));
        match &o.content[..] {
            [Content::Text(t)] => assert!(t.starts_with("abc\n"), "{t}"),
            other => panic!("{other:?}"),
        }
    }
}
