//! The tasks extension's fixtures, and which tools are served as tasks.

use crate::asking::{describe, field, name_form};
use std::time::Duration;

use serde_json::json;
use tool_core::input::{FormAnswer, InputAnswer, InputError, InputRequest};
use tool_core::mcp::tasks::{TaskSupport, TaskTools};
use tool_core::{tool, ToolContext};

/// Greets by name, at once (never a task).
///
/// # Arguments
/// * `name` - who is greeted
#[tool(risk = "safe", idempotent)]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Works for `seconds` seconds (at most 600), then says so; stops early when cancelled. Served
/// as a task to clients that declare the tasks extension.
///
/// # Arguments
/// * `seconds` - how long to work
/// * `label` - a name for the job
#[tool(risk = "safe", idempotent)]
async fn slow_compute(
    ctx: ToolContext,
    seconds: f64,
    label: Option<String>,
) -> Result<String, String> {
    let wait = Duration::from_secs_f64(seconds.clamp(0.0, 600.0));
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err("cancelled".to_owned()),
        _ = tokio::time::sleep(wait) => Ok(format!(
            "computed `{}` in {seconds} s",
            label.as_deref().unwrap_or("job")
        )),
    }
}

/// Works a second, then fails with a tool error. Served only as a task.
#[tool(risk = "safe", idempotent)]
async fn failing_job(ctx: ToolContext) -> Result<String, String> {
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err("cancelled".to_owned()),
        _ = tokio::time::sleep(Duration::from_secs(1)) => {
            Err("the job failed, as it always does".to_owned())
        }
    }
}

/// Panics: the executor contains it, and as a task it ends `failed` with a protocol error.
#[tool(risk = "safe", idempotent)]
fn protocol_error_job() -> String {
    panic!("protocol_error_job panics on purpose")
}

/// Asks the user to confirm, then says what they decided (nothing is deleted: a fixture).
///
/// # Arguments
/// * `filename` - what would be deleted
#[tool(risk = "safe")]
async fn confirm_delete(ctx: ToolContext, filename: String) -> Result<String, InputError> {
    let form = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]
    });
    let answer = ctx
        .elicit("confirm", format!("Delete {filename}?"), form)
        .await?;
    Ok(match answer {
        FormAnswer::Accept(c) if c.get("confirm") == Some(&json!(true)) => {
            format!("confirmed: {filename} would be deleted")
        }
        other => format!("not confirmed ({})", describe(&other)),
    })
}

/// Asks two questions in one round (both pending at once), then lists the answers.
#[tool(risk = "safe")]
async fn multi_input(ctx: ToolContext) -> Result<String, InputError> {
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}
    });
    let answers = ctx
        .ask(vec![
            (
                "first".into(),
                InputRequest::form("First input?", form.clone()),
            ),
            ("second".into(), InputRequest::form("Second input?", form)),
        ])
        .await?;
    let parts: Vec<String> = answers
        .iter()
        .map(|a| match a {
            InputAnswer::Form(f) => describe(f),
            other => format!("{other:?}"),
        })
        .collect();
    Ok(parts.join("; "))
}

/// Asks the user's name (question `user_name`), then works half a second and greets them. Served
/// only as a task, once the name is known: the question travels in an input-required result.
#[tool(risk = "safe")]
async fn test_tool_with_task(ctx: ToolContext) -> Result<String, InputError> {
    let answer = ctx
        .elicit("user_name", "What is your name?", name_form())
        .await?;
    let name = field(&answer, "name")?;
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err(InputError::Cancelled),
        _ = tokio::time::sleep(Duration::from_millis(500)) => {
            Ok(format!("Hello, {name}! (finished as a task)"))
        }
    }
}

/// The tools served as tasks.
pub(crate) fn task_tools() -> TaskTools {
    TaskTools::new()
        .with_tool("slow_compute", TaskSupport::Optional)
        .with_tool("failing_job", TaskSupport::Required)
        .with_tool("protocol_error_job", TaskSupport::Optional)
        .with_tool("confirm_delete", TaskSupport::Optional)
        .with_tool("multi_input", TaskSupport::Optional)
        .with_tool_asking_first("test_tool_with_task", TaskSupport::Required)
}
