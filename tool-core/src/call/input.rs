//! What kind of input a call is: its size checked, a markdown fence removed, JSON or text.

use super::salvage;
use super::types::{ParseError, ParseLimits};

/// A call's input, once classified.
pub(super) enum Input<'a> {
    Json(&'a str),
    Text(&'a str),
}

/// Size check, fence handling, and the JSON/text decision.
pub(super) fn classify<'a>(input: &'a str, limits: &ParseLimits) -> Result<Input<'a>, ParseError> {
    if input.len() > limits.max_bytes {
        // The envelope may still name the call's id: the refusal is answered under it.
        let err = ParseError::new(format!(
            "the input is {} bytes; the limit is {}",
            input.len(),
            limits.max_bytes
        ));
        return Err(salvage::from_doc(err, input));
    }
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(ParseError::new("the input is empty"));
    }
    if trimmed.starts_with("```") {
        if !limits.allow_fenced {
            return Err(ParseError::new(
                "markdown-fenced input is refused; send bare JSON (or set allow_fenced)",
            ));
        }
        return Ok(Input::Json(unfence(trimmed)?));
    }
    if trimmed.starts_with(['{', '[']) {
        Ok(Input::Json(input))
    } else {
        Ok(Input::Text(input))
    }
}

/// The JSON inside one ```` ``` ```` or ```` ```json ```` fence, and nothing else around it.
fn unfence(fenced: &str) -> Result<&str, ParseError> {
    let Some((open, rest)) = fenced.split_once('\n') else {
        return Err(ParseError::new(
            "the markdown fence has no closing ``` line",
        ));
    };
    let info = open.trim_start_matches('`').trim();
    if !open.starts_with("```") || open.starts_with("````") || !(info.is_empty() || info == "json")
    {
        return Err(ParseError::new(format!(
            "the markdown fence must open with ``` or ```json, not {:?}",
            open.trim()
        )));
    }
    let Some(body) = rest.trim_end().strip_suffix("```") else {
        return Err(ParseError::new(
            "the markdown fence has no closing ``` line",
        ));
    };
    if !(body.is_empty() || body.ends_with('\n')) || body.contains("```") {
        return Err(ParseError::new(
            "the markdown fence must hold one JSON document and close with ``` on its own line",
        ));
    }
    if !body.trim_start().starts_with(['{', '[']) {
        return Err(ParseError::new("a markdown fence may only hold JSON"));
    }
    Ok(body)
}
