//! Tool results as MCP content: our [`Content`] blocks to rmcp's [`ContentBlock`]s and back, and
//! the `tools/call` result of a successful call.

use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::Value;

use crate::content::{base64_decode, base64_encode, Audio, Content, EmbeddedResource, Image};
use crate::content::{ResourceBody, ResourceLink};

/// An embedded resource as MCP's resource contents (of a `resources/read`, or inside a block).
pub(crate) fn to_contents(r: &EmbeddedResource) -> ResourceContents {
    match &r.body {
        ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri: r.uri.clone(),
            mime_type: r.mime_type.clone(),
            text: text.clone(),
            meta: None,
        },
        ResourceBody::Blob(bytes) => ResourceContents::BlobResourceContents {
            uri: r.uri.clone(),
            mime_type: r.mime_type.clone(),
            blob: base64_encode(bytes),
            meta: None,
        },
    }
}

/// One block as MCP's `ContentBlock`.
pub fn to_mcp(block: &Content) -> ContentBlock {
    match block {
        Content::Text(t) => ContentBlock::text(t.clone()),
        Content::Image(i) => ContentBlock::image(base64_encode(&i.data), i.mime_type.clone()),
        Content::Audio(a) => ContentBlock::audio(base64_encode(&a.data), a.mime_type.clone()),
        Content::Resource(r) => ContentBlock::resource(to_contents(r)),
        Content::ResourceLink(l) => {
            let mut res = Resource::new(l.uri.clone(), l.name.clone());
            if let Some(d) = &l.description {
                res = res.with_description(d.clone());
            }
            if let Some(m) = &l.mime_type {
                res = res.with_mime_type(m.clone());
            }
            if let Some(s) = l.size {
                res = res.with_size(s);
            }
            ContentBlock::resource_link(res)
        }
    }
}

/// One MCP `ContentBlock` as ours; `Err` names what cannot be taken over (data that is not
/// base64, a block kind this version does not know).
pub fn from_mcp(block: &ContentBlock) -> Result<Content, String> {
    let bytes = |data: &str, what: &str| {
        base64_decode(data).ok_or_else(|| format!("the {what} data is not base64"))
    };
    Ok(match block {
        ContentBlock::Text(t) => Content::Text(t.text.clone()),
        ContentBlock::Image(i) => {
            Content::Image(Image::new(bytes(&i.data, "image")?, i.mime_type.clone()))
        }
        ContentBlock::Audio(a) => {
            Content::Audio(Audio::new(bytes(&a.data, "audio")?, a.mime_type.clone()))
        }
        ContentBlock::Resource(r) => Content::Resource(match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => EmbeddedResource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                body: ResourceBody::Text(text.clone()),
            },
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => EmbeddedResource {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                body: ResourceBody::Blob(bytes(blob, "resource")?),
            },
            #[allow(unreachable_patterns)]
            _ => return Err("an embedded resource of an unknown kind".to_owned()),
        }),
        ContentBlock::ResourceLink(l) => Content::ResourceLink(ResourceLink {
            uri: l.uri.clone(),
            name: l.name.clone(),
            description: l.description.clone(),
            mime_type: l.mime_type.clone(),
            size: l.size,
        }),
        #[allow(unreachable_patterns)]
        _ => return Err("a content block of an unknown kind".to_owned()),
    })
}

/// The `tools/call` result of a successful call.
///
/// Without blocks: a string becomes one text block; an object becomes `structuredContent` and,
/// for clients that read text only, its JSON as a text block; any other value becomes its JSON
/// as text. With blocks: the blocks, in order, after the output value when there is one (an
/// object again as `structuredContent` plus its JSON text).
pub fn call_result(output: Value, content: &[Content]) -> CallToolResult {
    let mut blocks: Vec<ContentBlock> = Vec::with_capacity(content.len() + 1);
    let mut structured = None;
    match output {
        Value::Null if !content.is_empty() => {}
        Value::String(s) => blocks.push(ContentBlock::text(s)),
        Value::Object(_) => {
            blocks.push(ContentBlock::text(output.to_string()));
            structured = Some(output);
        }
        other => blocks.push(ContentBlock::text(other.to_string())),
    }
    blocks.extend(content.iter().map(to_mcp));
    let mut r = CallToolResult::success(blocks);
    r.structured_content = structured;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn every_kind() -> Vec<Content> {
        vec![
            Content::text("caption"),
            Image::png(vec![1, 2, 3]).into(),
            Audio::wav(vec![4, 5]).into(),
            EmbeddedResource::text("test://r", "body").into(),
            EmbeddedResource::blob("test://b", vec![6])
                .with_mime_type("application/octet-stream")
                .into(),
            ResourceLink::new("file:///a.txt", "a")
                .with_description("d")
                .with_mime_type("text/plain")
                .with_size(1)
                .into(),
        ]
    }

    #[test]
    fn blocks_survive_the_round_trip_through_rmcp() {
        for b in every_kind() {
            let m = to_mcp(&b);
            assert_eq!(from_mcp(&m).as_ref(), Ok(&b));
            // rmcp's wire form is the one `Content::to_json` writes.
            assert_eq!(serde_json::to_value(&m).expect("serializes"), b.to_json());
        }
    }

    #[test]
    fn outputs_map_to_content() {
        let r = call_result(json!("hi"), &[]);
        assert!(r.structured_content.is_none());
        assert_eq!(r.content, vec![ContentBlock::text("hi")]);
        let r = call_result(json!({"a": 1}), &[]);
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
        let r = call_result(json!([1, 2]), &[]);
        assert!(r.structured_content.is_none());
        let r = call_result(Value::Null, &[]);
        assert_eq!(r.content, vec![ContentBlock::text("null")]);
    }

    #[test]
    fn blocks_come_in_order_after_the_value() {
        let blocks = every_kind();
        let r = call_result(Value::Null, &blocks);
        assert_eq!(r.content.len(), blocks.len());
        assert_eq!(r.is_error, Some(false));
        let r = call_result(json!({"k": 1}), &blocks[1..2]);
        assert_eq!(r.content.len(), 2);
        assert_eq!(r.structured_content, Some(json!({"k": 1})));
        assert!(r.content[1].as_image().is_some());
    }

    #[test]
    fn non_base64_data_is_refused() {
        assert!(from_mcp(&ContentBlock::image("not base64!", "image/png")).is_err());
    }
}
