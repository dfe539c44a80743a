//! The tools that ask mid-call: the user (forms), the caller's model (sampling), its roots; over
//! 2026-07-28 their questions travel in input-required results.

use serde_json::json;
use tool_core::input::{FormAnswer, InputAnswer, InputError, InputKind, InputRequest, Sampling};
use tool_core::{tool, ToolContext};

/// Asks the user for a name and an email address (a form), and says what they answered.
///
/// # Arguments
/// * `message` - what the user is asked
#[tool(risk = "safe")]
async fn test_elicitation(ctx: ToolContext, message: String) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = ctx.elicit("user_info", message, schema).await?;
    Ok(format!("User response: {}", describe(&answer)))
}

/// Asks the user a form whose every field has a default (SEP-1034).
#[tool(risk = "safe")]
async fn test_elicitation_sep1034_defaults(ctx: ToolContext) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let answer = ctx
        .elicit("defaults", "Please review these values", schema)
        .await?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

/// Asks the user a form with the five kinds of choice fields (SEP-1330).
#[tool(risk = "safe")]
async fn test_elicitation_sep1330_enums(ctx: ToolContext) -> Result<String, InputError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    });
    let answer = ctx.elicit("choices", "Please choose", schema).await?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

/// Asks the caller's model to answer a prompt, and returns its answer.
///
/// # Arguments
/// * `prompt` - what the model is asked
#[tool(risk = "safe")]
async fn test_sampling(ctx: ToolContext, prompt: String) -> Result<String, InputError> {
    let message = ctx
        .sample("completion", Sampling::prompt(prompt, 100))
        .await?;
    Ok(format!(
        "LLM response: {}",
        message.text().unwrap_or("(no text)")
    ))
}

/// The form that asks for a name.
pub(crate) fn name_form() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    })
}

/// A form's answer as text: the action, and the content when accepted.
pub(crate) fn describe(answer: &FormAnswer) -> String {
    match answer {
        FormAnswer::Accept(content) => format!(
            "action=accept, content={}",
            serde_json::Value::Object(content.clone())
        ),
        FormAnswer::Decline => "action=decline".to_owned(),
        FormAnswer::Cancel => "action=cancel".to_owned(),
    }
}

/// The accepted form's `field`, or why there is none.
pub(crate) fn field(answer: &FormAnswer, field: &str) -> Result<String, InputError> {
    match answer {
        FormAnswer::Accept(content) => content
            .get(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .ok_or_else(|| InputError::Invalid(format!("the form has no `{field}`"))),
        other => Err(InputError::Invalid(format!(
            "the user did not fill in the form ({})",
            describe(other)
        ))),
    }
}

/// Asks the user's name (a form, question `user_name`) and greets them.
#[tool(risk = "safe")]
async fn test_input_required_result_elicitation(ctx: ToolContext) -> Result<String, InputError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", name_form())
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")?))
}

/// Asks the caller's model for the capital of France (question `capital_question`).
#[tool(risk = "safe")]
async fn test_input_required_result_sampling(ctx: ToolContext) -> Result<String, InputError> {
    let message = ctx
        .sample(
            "capital_question",
            Sampling::prompt("What is the capital of France?", 100),
        )
        .await?;
    Ok(format!(
        "The model said: {}",
        message.text().unwrap_or("(no text)")
    ))
}

/// Asks for the caller's roots (question `client_roots`) and lists them.
#[tool(risk = "safe")]
async fn test_input_required_result_list_roots(ctx: ToolContext) -> Result<String, InputError> {
    let roots = ctx.list_roots("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("{} root(s): {}", roots.len(), uris.join(", ")))
}

/// Asks a form, the caller's model and the roots in one round.
#[tool(risk = "safe")]
async fn test_input_required_result_multiple_inputs(
    ctx: ToolContext,
) -> Result<String, InputError> {
    let answers = ctx
        .ask(vec![
            (
                "user_name".into(),
                InputRequest::form("What is your name?", name_form()),
            ),
            (
                "greeting".into(),
                InputRequest::sample(Sampling::prompt("Generate a greeting", 50)),
            ),
            ("client_roots".into(), InputRequest::roots()),
        ])
        .await?;
    let mut parts = Vec::new();
    for answer in &answers {
        parts.push(match answer {
            InputAnswer::Form(form) => format!("name: {}", field(form, "name")?),
            InputAnswer::Message(m) => format!("greeting: {}", m.text().unwrap_or("(no text)")),
            InputAnswer::Roots(roots) => format!("{} root(s)", roots.len()),
            other => format!("{other:?}"),
        });
    }
    Ok(parts.join("; "))
}

/// Asks two questions in two rounds: a name (`step1`), then a favourite colour (`step2`).
#[tool(risk = "safe")]
async fn test_input_required_result_multi_round(ctx: ToolContext) -> Result<String, InputError> {
    let name = ctx
        .elicit("step1", "Step 1: What is your name?", name_form())
        .await?;
    let name = field(&name, "name")?;
    let colour_form = json!({
        "type": "object",
        "properties": {"color": {"type": "string"}},
        "required": ["color"]
    });
    let colour = ctx
        .elicit(
            "step2",
            format!("Step 2: What is your favorite color, {name}?"),
            colour_form,
        )
        .await?;
    Ok(format!("{name} likes {}", field(&colour, "color")?))
}

/// Asks only what the client can answer: a form when it declared elicitation, its model when it
/// declared sampling; fails when it declared neither.
#[tool(risk = "safe")]
async fn test_input_required_result_capabilities(ctx: ToolContext) -> Result<String, InputError> {
    let mut questions = Vec::new();
    if ctx.can_ask(InputKind::Elicitation) {
        questions.push((
            "user_name".to_owned(),
            InputRequest::form("What is your name?", name_form()),
        ));
    }
    if ctx.can_ask(InputKind::Sampling) {
        questions.push((
            "capital_question".to_owned(),
            InputRequest::sample(Sampling::prompt("What is the capital of France?", 100)),
        ));
    }
    if questions.is_empty() {
        return Err(InputError::Unavailable {
            kind: InputKind::Elicitation,
            reason: "the client declared neither elicitation nor sampling".into(),
        });
    }
    let answers = ctx.ask(questions).await?;
    Ok(format!("{} answer(s)", answers.len()))
}

/// Needs the caller's model (sampling): a client that did not declare it is refused.
#[tool(risk = "safe")]
async fn test_missing_capability(ctx: ToolContext) -> Result<String, InputError> {
    let message = ctx
        .sample("probe", Sampling::prompt("Say hello", 20))
        .await?;
    Ok(format!(
        "The model said: {}",
        message.text().unwrap_or("(no text)")
    ))
}
