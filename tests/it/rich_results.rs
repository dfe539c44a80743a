//! Rich tool results: every content block kind a `#[tool]` can return, through the executor, the
//! command line and a real MCP client; output schemas enforced before an output leaves; output
//! caps that count every block.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ContentBlock, ResourceContents};
use serde_json::{json, Value};
use tool_core::content::{Audio, Content, EmbeddedResource, Image, ResourceBody, ResourceLink};
use tool_core::mcp::ExecutorBackend;
use tool_core::{
    tool, CallOptions, CallResult, Executor, ExecutorConfig, ReasonCode, Registry, ToolDef,
    ToolOutcome,
};

use crate::exec_support::call;

/// Returns a picture.
#[tool(risk = "safe")]
fn rich_image() -> Image {
    Image::png(tool_examples::media::png_rgb(2, 2, [0, 128, 255]))
}

/// Returns a sound.
#[tool(risk = "safe")]
fn rich_audio() -> Audio {
    Audio::wav(tool_examples::media::wav_tone(8000, 440.0, 0.01))
}

/// Returns an embedded text resource.
#[tool(risk = "safe")]
fn rich_text_resource() -> EmbeddedResource {
    EmbeddedResource::text("test://notes/a", "alpha").with_mime_type("text/markdown")
}

/// Returns an embedded binary resource.
#[tool(risk = "safe")]
fn rich_blob_resource() -> EmbeddedResource {
    EmbeddedResource::blob("test://blobs/b", vec![0, 1, 2, 255])
        .with_mime_type("application/octet-stream")
}

/// Returns a link.
#[tool(risk = "safe")]
fn rich_link() -> ResourceLink {
    ResourceLink::new("file:///srv/report.pdf", "report")
        .with_description("the monthly report")
        .with_mime_type("application/pdf")
        .with_size(1234)
}

/// Returns a caption, a picture and a link.
#[tool(risk = "safe")]
fn rich_mixed() -> Vec<Content> {
    vec![
        Content::text("caption"),
        Image::png(tool_examples::media::png_rgb(1, 1, [255, 0, 0])).into(),
        ResourceLink::new("test://x", "x").into(),
    ]
}

/// Returns an image that says it is audio.
#[tool(risk = "safe")]
fn rich_mislabelled() -> Image {
    Image::new(vec![1, 2, 3], "audio/wav")
}

/// Returns a result or fails, as a `Result` of blocks.
///
/// # Arguments
/// * `fail` - fail instead
#[tool(risk = "safe")]
fn rich_fallible(fail: bool) -> Result<Vec<Content>, String> {
    if fail {
        Err("no picture today".to_owned())
    } else {
        Ok(vec![Image::png(vec![1]).into()])
    }
}

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .with_inventory_where(|m| m == module_path!())
            .build()
            .expect("the rich result tools are valid"),
    )
}

fn executor(
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (tempfile::TempDir, Executor) {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec =
        Executor::new(registry(), config(ExecutorConfig::new(dir.path()))).expect("executor");
    (dir, exec)
}

async fn run(exec: &Executor, name: &str, args: Value) -> CallResult {
    let session = exec.new_session();
    exec.execute(&session, call(name, args), CallOptions::default())
        .await
}

#[tokio::test]
async fn every_block_kind_comes_back_as_returned() {
    let (_dir, exec) = executor(|c| c);
    let expect: [(&str, Content); 5] = [
        ("rich_image", rich_image().into()),
        ("rich_audio", rich_audio().into()),
        ("rich_text_resource", rich_text_resource().into()),
        ("rich_blob_resource", rich_blob_resource().into()),
        ("rich_link", rich_link().into()),
    ];
    for (name, block) in expect {
        let r = run(&exec, name, json!({})).await;
        assert!(r.is_ok(), "{name}: {r:?}");
        assert_eq!(r.output, Some(Value::Null), "{name}: blocks only");
        assert_eq!(r.content, vec![block], "{name}");
        assert!(!r.truncated);
    }
    let r = run(&exec, "rich_mixed", json!({})).await;
    let kinds: Vec<&str> = r.content.iter().map(Content::kind).collect();
    assert_eq!(kinds, ["text", "image", "resource_link"]);
    // A text-only consumer gets the text and a description of each other block.
    let text = r.text();
    assert!(text.starts_with("caption\n[image: image/png, "), "{text}");
    assert!(text.contains("[resource link test://x (x)]"), "{text}");

    let ok = run(&exec, "rich_fallible", json!({"fail": false})).await;
    assert_eq!(ok.content.len(), 1);
    let failed = run(&exec, "rich_fallible", json!({"fail": true})).await;
    assert_eq!(failed.code, Some(ReasonCode::ToolError));
    assert!(failed.content.is_empty());
}

#[tokio::test]
async fn a_mislabelled_block_fails_the_call() {
    let (_dir, exec) = executor(|c| c);
    let r = run(&exec, "rich_mislabelled", json!({})).await;
    assert_eq!(r.code, Some(ReasonCode::ToolError), "{r:?}");
    let msg = r.message.unwrap_or_default();
    assert!(
        msg.contains("MIME type `audio/wav` is not `image/...`"),
        "{msg}"
    );
    assert!(r.content.is_empty());
}

#[tokio::test]
async fn the_output_cap_counts_base64_of_every_block() {
    // The 2x2 PNG: its base64 text plus `image/png`.
    let png = tool_examples::media::png_rgb(2, 2, [0, 128, 255]);
    let image_cost = png.len().div_ceil(3) * 4 + "image/png".len();
    let (_dir, exec) = executor(|c| c.default_output_cap(image_cost));
    let r = run(&exec, "rich_image", json!({})).await;
    assert!(r.is_ok() && !r.truncated, "exactly at the cap: {r:?}");
    assert_eq!(r.content, vec![Content::from(Image::png(png.clone()))]);

    let (_dir, exec) = executor(|c| c.default_output_cap(image_cost - 1));
    let r = run(&exec, "rich_image", json!({})).await;
    assert!(r.is_ok() && r.truncated, "one byte over: {r:?}");
    match &r.content[..] {
        [Content::Text(t)] => {
            assert!(
                t.contains("image/png") && t.contains("left out at the output cap"),
                "{t}"
            )
        }
        other => panic!("the image must be replaced by a marker, got {other:?}"),
    }

    // The caption fits, the image does not; the link after it is left out and counted.
    let (_dir, exec) = executor(|c| c.default_output_cap(20));
    let r = run(&exec, "rich_mixed", json!({})).await;
    assert!(r.truncated);
    assert_eq!(r.content[0], Content::text("caption"));
    assert_eq!(r.content.len(), 3, "{:?}", r.content);
    assert!(matches!(&r.content[2], Content::Text(t) if t.contains("1 more content block")));
}

#[tokio::test]
async fn the_session_budget_counts_blocks_too() {
    let png = tool_examples::media::png_rgb(2, 2, [0, 128, 255]);
    let image_cost = png.len().div_ceil(3) * 4 + "image/png".len();
    let (_dir, exec) = executor(|c| c.session_output_budget(Some(image_cost + image_cost / 2)));
    let session = exec.new_session();
    let first = exec
        .execute(
            &session,
            call("rich_image", json!({})),
            CallOptions::default(),
        )
        .await;
    assert!(!first.truncated);
    assert_eq!(session.output_remaining(), Some(image_cost / 2));
    let second = exec
        .execute(
            &session,
            call("rich_image", json!({})),
            CallOptions::default(),
        )
        .await;
    assert!(second.truncated, "{second:?}");
    assert!(
        matches!(&second.content[..], [Content::Text(t)] if t.contains("session's output budget"))
    );
}

fn counted(output: Value) -> ToolDef {
    ToolDef::builder("counted")
        .description("Returns a count.")
        .risk(tool_core::Risk::Safe)
        .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        .output_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
            "additionalProperties": false
        }))
        .handler(move |_ctx, _args| {
            let output = output.clone();
            async move { ToolOutcome::ok(output) }
        })
        .build()
        .expect("valid tool")
}

async fn run_counted(output: Value) -> CallResult {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Registry::builder()
        .tool(counted(output))
        .build()
        .expect("registry");
    let exec =
        Executor::new(Arc::new(registry), ExecutorConfig::new(dir.path())).expect("executor");
    run(&exec, "counted", json!({})).await
}

#[tokio::test]
async fn an_output_that_breaks_its_schema_never_leaves() {
    let ok = run_counted(json!({"n": 3})).await;
    assert!(ok.is_ok(), "{ok:?}");
    assert_eq!(ok.output, Some(json!({"n": 3})));

    for bad in [
        json!({"n": -1}),
        json!({"n": "3"}),
        json!({"m": 1}),
        json!("3"),
    ] {
        let r = run_counted(bad.clone()).await;
        assert_eq!(r.code, Some(ReasonCode::ToolError), "{bad}: {r:?}");
        assert_eq!(r.output, None, "{bad}: the output must not leave");
        let msg = r.message.unwrap_or_default();
        assert!(
            msg.starts_with("the output of `counted` does not match its output schema: at `"),
            "{msg}"
        );
    }
}

#[tokio::test]
async fn a_bad_output_schema_is_refused_at_registry_build() {
    let def = ToolDef::builder("bad_out")
        .description("x")
        .input_schema(json!({"type": "object"}))
        .output_schema(json!({"type": "object", "properties": {"n": {"pattern": "("}}}))
        .handler(|_ctx, _args| async { "x" })
        .build();
    let built = def.map_err(|e| e.to_string()).and_then(|d| {
        Registry::builder()
            .tool(d)
            .build()
            .map(drop)
            .map_err(|e| e.to_string())
    });
    let err = built.expect_err("an output schema that does not compile is refused");
    assert!(err.contains("invalid output schema"), "{err}");
}

#[test]
fn the_cli_writes_blocks_in_mcp_shape() {
    use tool_core::cli::call::{run_call, CallArgs, SandboxArg};
    let dir = tempfile::tempdir().expect("tempdir");
    let args = CallArgs {
        sandbox: SandboxArg::Off,
        ..crate::exec_support::call_args(dir.path())
    };
    let input = "{\"tool\": \"rich_mixed\", \"args\": {}}\n{\"tool\": \"rich_blob_resource\", \"args\": {}}\n";
    let mut out = Vec::new();
    run_call(registry(), input.as_bytes(), &mut out, &args).expect("call runs");
    let lines: Vec<Value> = crate::exec_support::json_lines(out);
    assert_eq!(lines[0]["status"], "ok", "{}", lines[0]);
    assert_eq!(lines[0]["output"], Value::Null);
    let blocks = lines[0]["content"].as_array().expect("content blocks");
    assert_eq!(blocks[0], json!({"type": "text", "text": "caption"}));
    assert_eq!(blocks[1]["type"], "image");
    assert_eq!(blocks[1]["mimeType"], "image/png");
    let png = tool_core::content::base64_decode(blocks[1]["data"].as_str().expect("data"))
        .expect("base64");
    assert_eq!(png, tool_examples::media::png_rgb(1, 1, [255, 0, 0]));
    assert_eq!(
        blocks[2],
        json!({"type": "resource_link", "uri": "test://x", "name": "x"})
    );
    assert_eq!(
        lines[1]["content"][0]["resource"],
        json!({"uri": "test://blobs/b", "mimeType": "application/octet-stream", "blob": "AAEC/w=="})
    );
}

/// An MCP client connected to our server over an in-process pipe.
pub(crate) async fn mcp_client<H: rmcp::ClientHandler>(
    exec: Arc<Executor>,
    handler: H,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    crate::mcp_session::connect(
        tool_core::mcp::McpServer::new(ExecutorBackend::new(exec)),
        handler,
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_client_receives_every_block_kind() {
    let (_dir, exec) = executor(|c| c);
    let client = mcp_client(Arc::new(exec), ()).await;
    let call = |name: &'static str| {
        let peer = client.peer().clone();
        async move {
            peer.call_tool(CallToolRequestParams::new(name))
                .await
                .expect("the call is answered")
        }
    };
    let r = call("rich_image").await;
    assert_eq!(r.is_error, Some(false));
    let img = r.content[0].as_image().expect("an image block");
    assert_eq!(img.mime_type, "image/png");
    assert_eq!(
        tool_core::content::base64_decode(&img.data),
        Some(tool_examples::media::png_rgb(2, 2, [0, 128, 255]))
    );
    assert!(r.structured_content.is_none());

    let r = call("rich_audio").await;
    assert!(matches!(&r.content[0], ContentBlock::Audio(a) if a.mime_type == "audio/wav"));

    let r = call("rich_text_resource").await;
    match &r.content[0] {
        ContentBlock::Resource(e) => assert_eq!(
            e.resource,
            ResourceContents::TextResourceContents {
                uri: "test://notes/a".into(),
                mime_type: Some("text/markdown".into()),
                text: "alpha".into(),
                meta: None
            }
        ),
        other => panic!("{other:?}"),
    }

    let r = call("rich_blob_resource").await;
    assert!(matches!(&r.content[0], ContentBlock::Resource(e)
        if matches!(&e.resource, ResourceContents::BlobResourceContents { blob, .. } if blob == "AAEC/w==")));

    let r = call("rich_link").await;
    match &r.content[0] {
        ContentBlock::ResourceLink(l) => {
            assert_eq!(
                (l.uri.as_str(), l.name.as_str()),
                ("file:///srv/report.pdf", "report")
            );
            assert_eq!(l.size, Some(1234));
        }
        other => panic!("{other:?}"),
    }

    let r = call("rich_mixed").await;
    let back: Vec<Content> = r
        .content
        .iter()
        .map(|b| tool_core::mcp::content::from_mcp(b).expect("our own blocks"))
        .collect();
    assert_eq!(back, rich_mixed());

    let r = call("rich_mislabelled").await;
    assert_eq!(r.is_error, Some(true));
    assert!(r.content[0]
        .as_text()
        .is_some_and(|t| t.text.starts_with("tool_error: ")));
    client.cancel().await.expect("the client closes");
}

#[test]
fn blocks_keep_their_bytes_in_the_body_enum() {
    // A resource body is text or bytes, never both: the type says so.
    let r = rich_blob_resource();
    assert!(matches!(r.body, ResourceBody::Blob(ref b) if b == &[0, 1, 2, 255]));
}
