//! Outcomes as MCP: tool results for refusals and failures (reason code as data), and the
//! JSON-RPC errors of refused requests.

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use rmcp::ErrorData;
use serde_json::{json, Map};

use super::backend::McpCallOutcome;
use super::input_required::MAX_INPUT_ROUNDS;

use super::content::call_result;
use crate::input::InputKind;
use crate::reason::ReasonCode;

/// The `_meta` and `structuredContent` key that carries a refusal's or failure's reason code.
pub const REASON_CODE_KEY: &str = "reason_code";

/// The `_meta` and `structuredContent` key that carries a tool's own error code
/// ([`ToolError`](crate::outcome::ToolError)), next to [`REASON_CODE_KEY`].
pub const ERROR_CODE_KEY: &str = "error_code";

/// The tool result for an outcome (not an unknown tool: that is an error). A refusal or failure
/// is `isError: true` with text `CODE: message`, and its reason code as data in
/// `structuredContent` and `_meta` (`{"reason_code": CODE}`, plus `"error_code"` when the tool
/// gave its own).
pub(super) fn result_of(outcome: McpCallOutcome) -> CallToolResult {
    match outcome {
        McpCallOutcome::Ok { output, content } => call_result(output, &content),
        McpCallOutcome::UnknownTool => {
            refusal_result(ReasonCode::UnknownTool, "unknown tool", None)
        }
        McpCallOutcome::Refused { code, message } => refusal_result(code, &message, None),
        McpCallOutcome::Failed {
            code,
            message,
            error_code,
        } => refusal_result(code, &message, error_code),
    }
}

pub(super) fn refusal_result(
    code: ReasonCode,
    message: &str,
    error_code: Option<String>,
) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    let mut data = json!({REASON_CODE_KEY: code, "message": message});
    let mut meta = MetaObject::new();
    meta.0.insert(REASON_CODE_KEY.to_owned(), json!(code));
    if let Some(e) = error_code {
        data[ERROR_CODE_KEY] = json!(e);
        meta.0.insert(ERROR_CODE_KEY.to_owned(), json!(e));
    }
    r.structured_content = Some(data);
    r.meta = Some(meta);
    r
}

/// A JSON-RPC invalid-params error carrying `code` as data.
pub(super) fn invalid_params(code: ReasonCode, message: String) -> ErrorData {
    ErrorData::invalid_params(
        format!("{code}: {message}"),
        Some(json!({REASON_CODE_KEY: code})),
    )
}

/// The `-32021` error for a question of a kind the request's client did not declare.
pub(super) fn missing_capability(kind: InputKind) -> ErrorData {
    let mut required = Map::new();
    required.insert(kind.capability().to_owned(), json!({}));
    let mut e = ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "{}: the tool asks for {kind} input, and the request's client capabilities do not \
             declare `{}`",
            ReasonCode::InputUnavailable,
            kind.capability()
        ),
        None,
    );
    e.data = Some(json!({
        "requiredCapabilities": required,
        REASON_CODE_KEY: ReasonCode::InputUnavailable,
    }));
    e
}

/// The refusal of a call that asked more rounds than allowed.
pub(super) fn too_many_rounds() -> CallToolResult {
    refusal_result(
        ReasonCode::InputLimitExceeded,
        &format!("the call asked for input in more than {MAX_INPUT_ROUNDS} rounds"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_carry_their_reason_code_as_data_and_outputs_keep_their_blocks() {
        let r = result_of(McpCallOutcome::Refused {
            code: ReasonCode::ApprovalDenied,
            message: "no".into(),
        });
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content
                .as_ref()
                .and_then(|v| v.get(REASON_CODE_KEY)),
            Some(&json!("approval_denied"))
        );
        let r = result_of(McpCallOutcome::Failed {
            code: ReasonCode::ToolError,
            message: "no entry `k`".into(),
            error_code: Some("not_found".into()),
        });
        for data in [
            r.structured_content.clone().expect("structured"),
            serde_json::to_value(r.meta.clone().expect("meta")).expect("json"),
        ] {
            assert_eq!(data[REASON_CODE_KEY], "tool_error", "{data}");
            assert_eq!(data[ERROR_CODE_KEY], "not_found", "{data}");
        }
        let r = result_of(McpCallOutcome::Ok {
            output: json!({"a": 1}),
            content: Vec::new(),
        });
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
    }
}
