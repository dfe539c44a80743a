//! The approval question as an MCP form elicitation, and how its answer is read. Shared by the
//! two ways of asking: a server-to-client `elicitation/create` request (2025-11-25 sessions) and
//! an input request inside an input-required result (2026-07-28).

use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};

use crate::approval::{ApprovalDecision, ApprovalReason, ApprovalRequest, Approver};

/// The form that asks whether `req` may run. It offers a session grant only when the request
/// allows one.
pub(super) fn approval_params(req: &ApprovalRequest) -> Result<ElicitRequestParams, String> {
    let args = req.args_shown();
    let mut properties = serde_json::Map::new();
    properties.insert(
        "approve".into(),
        json!({"type": "boolean", "title": "Run this call", "default": false}),
    );
    if req.session_grant_allowed {
        properties.insert(
            "for_session".into(),
            json!({"type": "boolean", "title": "Also allow later calls of this tool in this session", "default": false}),
        );
    }
    let effects = req
        .effects_line()
        .map(|e| format!("\nWhat it will do: {e}."))
        .unwrap_or_default();
    let params = json!({
        "mode": "form",
        "message": format!(
            "Allow the {} tool `{}` to run with these arguments? (Asked because {}.){effects}\n{}",
            req.risk, req.tool, reason_text(&req.reason), args
        ),
        "requestedSchema": {"type": "object", "properties": properties, "required": ["approve"]},
    });
    serde_json::from_value(params).map_err(|e| format!("could not build the approval request: {e}"))
}

fn reason_text(reason: &ApprovalReason) -> String {
    match reason {
        ApprovalReason::Risk { risk } => format!("the tool's risk is {risk}"),
        ApprovalReason::Review { .. } => format!("the safety scan asks for review: {reason}"),
    }
}

/// The decision an answer to [`approval_params`]'s form gives: only an accepted form with an
/// explicit `approve: true` approves.
pub(super) fn interpret_answer(
    action: ElicitationAction,
    content: Option<&Value>,
    req: &ApprovalRequest,
) -> ApprovalDecision {
    let deny = |reason: &str| ApprovalDecision::Deny {
        reason: reason.to_owned(),
    };
    match action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return deny("the user declined"),
        _ => return deny("the user cancelled the approval"),
    }
    let Some(content) = content else {
        return deny("the approval answer was empty");
    };
    // Only an explicit `true` approves; anything else (absent, string, number) denies.
    if content.get("approve") != Some(&Value::Bool(true)) {
        return deny("the user did not approve");
    }
    if req.session_grant_allowed && content.get("for_session") == Some(&Value::Bool(true)) {
        ApprovalDecision::ApproveForSession
    } else {
        ApprovalDecision::Approve
    }
}

/// Approval through MCP form elicitation; a client without the capability gets a denial.
pub(super) struct ElicitationApprover {
    pub(super) peer: Peer<RoleServer>,
}

impl Approver for ElicitationApprover {
    fn decide<'a>(&'a self, req: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            if !self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return ApprovalDecision::Deny {
                    reason: "approval needed, and the client does not support elicitation".into(),
                };
            }
            let params = match approval_params(req) {
                Ok(p) => p,
                Err(e) => return ApprovalDecision::Deny { reason: e },
            };
            match self.peer.create_elicitation(params).await {
                Ok(res) => interpret_answer(res.action, res.content.as_ref(), req),
                Err(e) => ApprovalDecision::Deny {
                    reason: format!("the approval request failed: {e}"),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::Risk;

    fn req(session: bool) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            call_id: "1".into(),
            tool: "t".into(),
            risk: Risk::Mutation,
            args: json!({}),
            reason: ApprovalReason::Risk {
                risk: Risk::Mutation,
            },
            session_grant_allowed: session,
            round: 0,
            effects: Vec::new(),
        }
    }

    #[test]
    fn only_an_explicit_true_approves() {
        let r = req(true);
        let accept = ElicitationAction::Accept;
        assert_eq!(
            interpret_answer(accept.clone(), Some(&json!({"approve": true})), &r),
            ApprovalDecision::Approve
        );
        assert!(matches!(
            interpret_answer(accept.clone(), Some(&json!({"approve": "true"})), &r),
            ApprovalDecision::Deny { .. }
        ));
        assert!(matches!(
            interpret_answer(accept.clone(), None, &r),
            ApprovalDecision::Deny { .. }
        ));
        assert!(matches!(
            interpret_answer(
                ElicitationAction::Decline,
                Some(&json!({"approve": true})),
                &r
            ),
            ApprovalDecision::Deny { .. }
        ));
    }

    #[test]
    fn session_grant_only_when_offered() {
        let answer = json!({"approve": true, "for_session": true});
        assert_eq!(
            interpret_answer(ElicitationAction::Accept, Some(&answer), &req(true)),
            ApprovalDecision::ApproveForSession
        );
        assert_eq!(
            interpret_answer(ElicitationAction::Accept, Some(&answer), &req(false)),
            ApprovalDecision::Approve
        );
    }

    #[test]
    fn the_question_says_what_the_script_will_do() {
        let mut r = req(false);
        let plain = serde_json::to_value(approval_params(&r).expect("form")).expect("json");
        assert!(!plain["message"]
            .as_str()
            .unwrap_or_default()
            .contains("What it will do"));
        r.effects = vec![
            "fetches https://example.com/x.html".into(),
            "kills processes named sshd".into(),
        ];
        let v = serde_json::to_value(approval_params(&r).expect("form")).expect("json");
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(
                "What it will do: fetches https://example.com/x.html; kills processes named sshd."
            ),
            "{message}"
        );
    }

    #[test]
    fn the_question_masks_secrets_in_the_arguments() {
        let mut r = req(false);
        r.args = json!({
            "script": "import os\nos.environ['TOKEN'] = 'sk-proj-0123456789abcdefghijKLMN'\nprint('ok')",
            "password": "correct-horse-battery",
            "path": "src/main.rs"
        });
        let v = serde_json::to_value(approval_params(&r).expect("form")).expect("json");
        let message = v["message"].as_str().unwrap_or_default();
        for secret in ["sk-proj-0123456789abcdefghijKLMN", "correct-horse-battery"] {
            assert!(!message.contains(secret), "{secret} shown: {message}");
        }
        assert!(message.contains("<redacted>"), "{message}");
        assert!(message.contains("src/main.rs"), "{message}");
        assert_eq!(r.args["password"], "correct-horse-battery");
    }

    #[test]
    fn approval_form_is_a_valid_elicitation() {
        assert!(approval_params(&req(true)).is_ok());
        assert!(approval_params(&req(false)).is_ok());
    }
}
