//! The suite's resources and prompts, and the workspace's files.

use crate::asking::field;

use serde_json::json;
use tool_core::content::ResourceBody;
use tool_core::content::{EmbeddedResource, Image};
use tool_core::guard::path::PathGuard;
use tool_core::mcp::completion::Completer;
use tool_core::mcp::prompts::{Message, Prompt, PromptArgument, Prompts};
use tool_core::mcp::resources::{Resource, ResourceTemplate, Resources, WorkspaceResources};

/// The suite's resources, and the workspace's files.
pub(crate) fn resources(guard: PathGuard) -> Result<Resources, String> {
    let template = ResourceTemplate::new("test://template/{id}/data", "template-data", |m| {
        let id = m.vars.get("id").map(String::as_str).unwrap_or_default();
        let body = serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        Ok(ResourceBody::Text(body.to_string()))
    })
    .and_then(|t| {
        t.with_description("A JSON document per id")
            .with_mime_type("application/json")
            .with_completer("id", Completer::from_values(["123", "456", "789"]))
    })
    .map_err(|e| e.to_string())?;
    Resources::new()
        .with_resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "This is the content of the static text resource.",
            )
            .with_description("A fixed text resource"),
        )
        .and_then(|r| {
            r.with_resource(
                Resource::blob(
                    "test://static-binary",
                    "static-binary",
                    tool_examples::media::png_rgb(1, 1, [255, 0, 0]),
                    "image/png",
                )
                .with_description("A fixed PNG image"),
            )
        })
        .and_then(|r| {
            r.with_resource(
                Resource::text(
                    "test://watched-resource",
                    "watched-resource",
                    "A resource clients subscribe to.",
                )
                .with_description("A resource to subscribe to"),
            )
        })
        .and_then(|r| r.with_template(template))
        .map(|r| r.with_workspace(WorkspaceResources::new(guard)))
        .map_err(|e| e.to_string())
}

/// The suite's prompts.
pub(crate) fn prompts() -> Result<Prompts, String> {
    let simple = Prompt::new("test_simple_prompt", |_| {
        Ok(vec![Message::user("This is a simple prompt for testing.")])
    })
    .with_description("A prompt without arguments");
    let with_args = Prompt::new("test_prompt_with_arguments", |args| {
        Ok(vec![Message::user(format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            args.get("arg1").unwrap_or_default(),
            args.get("arg2").unwrap_or_default()
        ))])
    })
    .with_description("A prompt with two required arguments")
    .with_argument(
        PromptArgument::required("arg1")
            .with_description("First test argument")
            .with_completer(Completer::from_values([
                "paris", "park", "party", "test", "testing",
            ])),
    )
    .with_argument(PromptArgument::required("arg2").with_description("Second test argument"));
    let embedded = Prompt::new("test_prompt_with_embedded_resource", |args| {
        let uri = args.get("resourceUri").unwrap_or_default();
        Ok(vec![
            Message::user(
                EmbeddedResource::text(uri, "Embedded resource content for testing.")
                    .with_mime_type("text/plain"),
            ),
            Message::user("Please process the embedded resource above."),
        ])
    })
    .with_description("A prompt that embeds a resource")
    .with_argument(
        PromptArgument::required("resourceUri").with_description("URI of the resource to embed"),
    );
    let image = Prompt::new("test_prompt_with_image", |_| {
        Ok(vec![
            Message::user(Image::png(tool_examples::media::png_rgb(1, 1, [255, 0, 0]))),
            Message::user("Please analyze the image above."),
        ])
    })
    .with_description("A prompt with an image");
    let asking = Prompt::asking("test_input_required_result_prompt", |_, input| async move {
        let form = json!({
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"]
        });
        let answer = input
            .elicit("user_context", "What context should the prompt use?", form)
            .await?;
        let context = field(&answer, "context")?;
        Ok(vec![Message::user(format!(
            "Answer with this context in mind: {context}"
        ))])
    })
    .with_description("A prompt that asks the user for its context first");
    Prompts::new()
        .with_prompt(simple)
        .and_then(|p| p.with_prompt(with_args))
        .and_then(|p| p.with_prompt(embedded))
        .and_then(|p| p.with_prompt(image))
        .and_then(|p| p.with_prompt(asking))
        .map_err(|e| e.to_string())
}
