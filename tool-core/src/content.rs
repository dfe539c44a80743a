//! Rich tool results: content blocks a tool returns next to (or instead of) text and JSON.
//!
//! A `#[tool]` returns blocks the way it returns anything else:
//!
//! ```
//! use tool_core::content::{Audio, Content, EmbeddedResource, Image};
//! use tool_core::tool;
//!
//! /// A one-pixel picture.
//! #[tool(risk = "safe")]
//! fn pixel() -> Image {
//!     Image::png(vec![0x89, b'P', b'N', b'G'])
//! }
//!
//! /// A report: a caption, a chart and the data behind it.
//! #[tool(risk = "safe")]
//! fn report() -> Vec<Content> {
//!     vec![
//!         Content::text("Sales by month:"),
//!         Image::png(vec![0x89, b'P', b'N', b'G']).into(),
//!         EmbeddedResource::text("report://sales.csv", "month,total\n1,10\n")
//!             .with_mime_type("text/csv")
//!             .into(),
//!     ]
//! }
//! # fn main() {}
//! ```
//!
//! The kinds are MCP's: [`Content::Text`], [`Content::Image`], [`Content::Audio`],
//! [`Content::Resource`] (an embedded resource: text or a binary blob) and
//! [`Content::ResourceLink`] (a URI the client may fetch). Binary data is held as bytes and
//! base64-encoded where it leaves the process (MCP, the CLI's JSON lines).
//!
//! The executor checks every block before it leaves ([`Content::check`]: an image's MIME type is
//! `image/...`, an audio's `audio/...`, a URI has a scheme; a bad block fails the call with
//! `tool_error`), and the output caps count every block at its wire size ([`Content::size`]:
//! the base64 length of binary data included). A block that does not fit is never cut in half:
//! text is cut with a marker, a binary block is replaced by a text marker that names what was
//! left out.

use base64::Engine as _;
use serde_json::{json, Map, Value};

/// One block of a tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text.
    Text(String),
    /// An image.
    Image(Image),
    /// Audio.
    Audio(Audio),
    /// A resource embedded in the result (its text or bytes).
    Resource(EmbeddedResource),
    /// A link to a resource the client may read.
    ResourceLink(ResourceLink),
}

/// An image: bytes and their MIME type (`image/png`, ...).
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// The image bytes (base64-encoded on the wire).
    pub data: Vec<u8>,
    /// The MIME type; must start with `image/`.
    pub mime_type: String,
}

/// Audio: bytes and their MIME type (`audio/wav`, ...).
#[derive(Clone, PartialEq, Eq)]
pub struct Audio {
    /// The audio bytes (base64-encoded on the wire).
    pub data: Vec<u8>,
    /// The MIME type; must start with `audio/`.
    pub mime_type: String,
}

/// What an embedded resource holds.
#[derive(Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes (base64-encoded on the wire).
    Blob(Vec<u8>),
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedResource {
    /// The resource's URI (with a scheme: `file:///...`, `report://...`).
    pub uri: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its contents.
    pub body: ResourceBody,
}

/// A link to a resource, for the client to read (or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLink {
    /// The resource's URI (with a scheme).
    pub uri: String,
    /// A name for it.
    pub name: String,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
}

/// The base64 text of `bytes` (standard alphabet, padded), as MCP carries binary data.
pub fn base64_encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Bytes from base64 text (standard alphabet, padded); `None` when it is not base64.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// The length of the base64 text of `n` bytes.
pub fn base64_len(n: usize) -> usize {
    n.div_ceil(3).saturating_mul(4)
}

fn fmt_bytes(
    f: &mut std::fmt::Formatter<'_>,
    name: &str,
    data: &[u8],
    mime: &str,
) -> std::fmt::Result {
    f.debug_struct(name)
        .field("mime_type", &mime)
        .field("bytes", &data.len())
        .finish()
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fmt_bytes(f, "Image", &self.data, &self.mime_type)
    }
}

impl std::fmt::Debug for Audio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fmt_bytes(f, "Audio", &self.data, &self.mime_type)
    }
}

impl std::fmt::Debug for ResourceBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResourceBody::Text(t) => f.debug_tuple("Text").field(t).finish(),
            ResourceBody::Blob(b) => write!(f, "Blob({} bytes)", b.len()),
        }
    }
}

impl Image {
    /// An image of this MIME type.
    pub fn new(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A PNG image.
    pub fn png(data: impl Into<Vec<u8>>) -> Self {
        Image::new(data, "image/png")
    }

    /// A JPEG image.
    pub fn jpeg(data: impl Into<Vec<u8>>) -> Self {
        Image::new(data, "image/jpeg")
    }

    /// A GIF image.
    pub fn gif(data: impl Into<Vec<u8>>) -> Self {
        Image::new(data, "image/gif")
    }

    /// A WebP image.
    pub fn webp(data: impl Into<Vec<u8>>) -> Self {
        Image::new(data, "image/webp")
    }
}

impl Audio {
    /// Audio of this MIME type.
    pub fn new(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// WAV audio.
    pub fn wav(data: impl Into<Vec<u8>>) -> Self {
        Audio::new(data, "audio/wav")
    }

    /// MP3 audio.
    pub fn mp3(data: impl Into<Vec<u8>>) -> Self {
        Audio::new(data, "audio/mpeg")
    }

    /// Ogg audio.
    pub fn ogg(data: impl Into<Vec<u8>>) -> Self {
        Audio::new(data, "audio/ogg")
    }
}

impl EmbeddedResource {
    /// A text resource (MIME type `text/plain` until [`with_mime_type`](Self::with_mime_type)).
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: Some("text/plain".to_owned()),
            body: ResourceBody::Text(text.into()),
        }
    }

    /// A binary resource (no MIME type until [`with_mime_type`](Self::with_mime_type)).
    pub fn blob(uri: impl Into<String>, data: impl Into<Vec<u8>>) -> Self {
        EmbeddedResource {
            uri: uri.into(),
            mime_type: None,
            body: ResourceBody::Blob(data.into()),
        }
    }

    /// Set the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl ResourceLink {
    /// A link to `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// Say what the resource is.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Set the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Set the size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

impl From<Image> for Content {
    fn from(v: Image) -> Self {
        Content::Image(v)
    }
}

impl From<Audio> for Content {
    fn from(v: Audio) -> Self {
        Content::Audio(v)
    }
}

impl From<EmbeddedResource> for Content {
    fn from(v: EmbeddedResource) -> Self {
        Content::Resource(v)
    }
}

impl From<ResourceLink> for Content {
    fn from(v: ResourceLink) -> Self {
        Content::ResourceLink(v)
    }
}

impl From<String> for Content {
    fn from(v: String) -> Self {
        Content::Text(v)
    }
}

impl From<&str> for Content {
    fn from(v: &str) -> Self {
        Content::Text(v.to_owned())
    }
}

/// `type/subtype` with RFC 6838 token characters, and the expected top-level type if given.
fn check_mime(mime: &str, top: Option<&str>) -> Result<(), String> {
    let token = |s: &str| {
        !s.is_empty()
            && s.len() <= 127
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    // Parameters (`; charset=utf-8`) are allowed after the type; the type itself is checked.
    let essence = mime.split(';').next().unwrap_or("").trim();
    let ok = match essence.split_once('/') {
        Some((t, sub)) => {
            token(t) && token(sub) && top.is_none_or(|want| t.eq_ignore_ascii_case(want))
        }
        None => false,
    };
    if ok && !mime.chars().any(char::is_control) {
        Ok(())
    } else {
        match top {
            Some(want) => Err(format!(
                "MIME type `{}` is not `{want}/...`",
                mime.escape_debug()
            )),
            None => Err(format!("`{}` is not a MIME type", mime.escape_debug())),
        }
    }
}

/// A URI with a scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`) and no
/// whitespace or control characters.
fn check_uri(uri: &str) -> Result<(), String> {
    let bad = || {
        Err(format!(
            "`{}` is not a URI with a scheme",
            uri.escape_debug()
        ))
    };
    let Some((scheme, rest)) = uri.split_once(':') else {
        return bad();
    };
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok || rest.is_empty() || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad();
    }
    Ok(())
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// The block's kind as MCP names it: `text`, `image`, `audio`, `resource`, `resource_link`.
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Text(_) => "text",
            Content::Image(_) => "image",
            Content::Audio(_) => "audio",
            Content::Resource(_) => "resource",
            Content::ResourceLink(_) => "resource_link",
        }
    }

    /// The bytes this block costs against the output caps: its text, the base64 length of its
    /// binary data, and its URI, name, description and MIME type.
    pub fn size(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        match self {
            Content::Text(t) => t.len(),
            Content::Image(Image { data, mime_type })
            | Content::Audio(Audio { data, mime_type }) => base64_len(data.len()) + mime_type.len(),
            Content::Resource(r) => {
                let body = match &r.body {
                    ResourceBody::Text(t) => t.len(),
                    ResourceBody::Blob(b) => base64_len(b.len()),
                };
                body + r.uri.len() + opt(&r.mime_type)
            }
            Content::ResourceLink(l) => {
                l.uri.len() + l.name.len() + opt(&l.description) + opt(&l.mime_type)
            }
        }
    }

    /// Check the block before it leaves: MIME types of the right kind, URIs with a scheme, a
    /// resource link with a name. The error says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let what = self.kind();
        let r = match self {
            Content::Text(_) => Ok(()),
            Content::Image(i) => check_mime(&i.mime_type, Some("image")),
            Content::Audio(a) => check_mime(&a.mime_type, Some("audio")),
            Content::Resource(r) => check_uri(&r.uri).and_then(|()| match &r.mime_type {
                Some(m) => check_mime(m, None),
                None => Ok(()),
            }),
            Content::ResourceLink(l) => check_uri(&l.uri)
                .and_then(|()| match &l.mime_type {
                    Some(m) => check_mime(m, None),
                    None => Ok(()),
                })
                .and_then(|()| {
                    if l.name.trim().is_empty() {
                        Err("a resource link needs a name".to_owned())
                    } else {
                        Ok(())
                    }
                }),
        };
        r.map_err(|e| format!("{what} block: {e}"))
    }

    /// A short description, for a consumer that cannot show the block itself (a text-only
    /// provider result): `[image: image/png, 68 bytes]`.
    pub fn describe(&self) -> String {
        match self {
            Content::Text(t) => t.clone(),
            Content::Image(i) => format!("[image: {}, {} bytes]", i.mime_type, i.data.len()),
            Content::Audio(a) => format!("[audio: {}, {} bytes]", a.mime_type, a.data.len()),
            Content::Resource(r) => match &r.body {
                ResourceBody::Text(t) => format!("[resource {}]\n{t}", r.uri),
                ResourceBody::Blob(b) => format!(
                    "[resource {}: {}, {} bytes]",
                    r.uri,
                    r.mime_type.as_deref().unwrap_or("application/octet-stream"),
                    b.len()
                ),
            },
            Content::ResourceLink(l) => match &l.description {
                Some(d) => format!("[resource link {} ({}): {d}]", l.uri, l.name),
                None => format!("[resource link {} ({})]", l.uri, l.name),
            },
        }
    }

    /// The block as MCP's `ContentBlock` JSON: `{"type": "image", "data": "<base64>",
    /// "mimeType": "image/png"}` and so on. The CLI writes blocks in this shape too.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!(self.kind()));
        let put_opt = |m: &mut Map<String, Value>, k: &str, v: &Option<String>| {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        };
        match self {
            Content::Text(t) => {
                m.insert("text".into(), json!(t));
            }
            Content::Image(Image { data, mime_type })
            | Content::Audio(Audio { data, mime_type }) => {
                m.insert("data".into(), json!(base64_encode(data)));
                m.insert("mimeType".into(), json!(mime_type));
            }
            Content::Resource(r) => {
                let mut res = Map::new();
                res.insert("uri".into(), json!(r.uri));
                put_opt(&mut res, "mimeType", &r.mime_type);
                match &r.body {
                    ResourceBody::Text(t) => res.insert("text".into(), json!(t)),
                    ResourceBody::Blob(b) => res.insert("blob".into(), json!(base64_encode(b))),
                };
                m.insert("resource".into(), Value::Object(res));
            }
            Content::ResourceLink(l) => {
                m.insert("uri".into(), json!(l.uri));
                m.insert("name".into(), json!(l.name));
                put_opt(&mut m, "description", &l.description);
                put_opt(&mut m, "mimeType", &l.mime_type);
                if let Some(size) = l.size {
                    m.insert("size".into(), json!(size));
                }
            }
        }
        Value::Object(m)
    }

    /// A block from MCP's `ContentBlock` JSON ([`to_json`](Self::to_json)'s shape); the error
    /// says what is missing or malformed. Unknown fields (`annotations`, `_meta`) are ignored.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let s = |o: &Value, k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
        let need = |o: &Value, k: &str| s(o, k).ok_or_else(|| format!("missing string `{k}`"));
        let bytes = |o: &Value, k: &str| {
            need(o, k).and_then(|t| base64_decode(&t).ok_or_else(|| format!("`{k}` is not base64")))
        };
        match v.get("type").and_then(Value::as_str) {
            Some("text") => Ok(Content::Text(need(v, "text")?)),
            Some("image") => Ok(Content::Image(Image::new(
                bytes(v, "data")?,
                need(v, "mimeType")?,
            ))),
            Some("audio") => Ok(Content::Audio(Audio::new(
                bytes(v, "data")?,
                need(v, "mimeType")?,
            ))),
            Some("resource") => {
                let r = v.get("resource").ok_or("missing `resource`")?;
                let body = match (s(r, "text"), r.get("blob")) {
                    (Some(t), None) => ResourceBody::Text(t),
                    (None, Some(_)) => ResourceBody::Blob(bytes(r, "blob")?),
                    _ => return Err("a resource has either `text` or `blob`".to_owned()),
                };
                Ok(Content::Resource(EmbeddedResource {
                    uri: need(r, "uri")?,
                    mime_type: s(r, "mimeType"),
                    body,
                }))
            }
            Some("resource_link") => Ok(Content::ResourceLink(ResourceLink {
                uri: need(v, "uri")?,
                name: need(v, "name")?,
                description: s(v, "description"),
                mime_type: s(v, "mimeType"),
                size: v.get("size").and_then(Value::as_u64),
            })),
            Some(other) => Err(format!("unknown content type `{}`", other.escape_debug())),
            None => Err("missing `type`".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_json() {
        let blocks = vec![
            Content::text("hi"),
            Image::png(vec![1, 2, 3, 4]).into(),
            Audio::wav(vec![0; 5]).into(),
            EmbeddedResource::text("test://r", "body").into(),
            EmbeddedResource::blob("test://b", vec![9, 8])
                .with_mime_type("application/octet-stream")
                .into(),
            ResourceLink::new("file:///a.txt", "a")
                .with_description("the a file")
                .with_mime_type("text/plain")
                .with_size(3)
                .into(),
        ];
        for b in blocks {
            let j = b.to_json();
            assert_eq!(Content::from_json(&j).as_ref(), Ok(&b), "{j}");
        }
        assert_eq!(
            Image::png(vec![1, 2, 3]).into_json(),
            json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
        );
    }

    impl Image {
        fn into_json(self) -> Value {
            Content::from(self).to_json()
        }
    }

    #[test]
    fn size_counts_base64_of_binary_data() {
        assert_eq!(Content::text("abc").size(), 3);
        // 4 bytes are 8 base64 characters; plus `image/png`.
        assert_eq!(Content::from(Image::png(vec![0; 4])).size(), 8 + 9);
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
        assert_eq!(base64_encode(&[0; 4]).len(), base64_len(4));
    }

    #[test]
    fn checks_refuse_wrong_kinds_and_bad_uris() {
        assert!(Content::from(Image::new(vec![1], "audio/wav"))
            .check()
            .is_err());
        assert!(Content::from(Image::new(vec![1], "image")).check().is_err());
        assert!(Content::from(Image::new(vec![1], "image/png\n"))
            .check()
            .is_err());
        assert!(Content::from(Image::png(vec![1])).check().is_ok());
        assert!(Content::from(Audio::new(vec![1], "image/png"))
            .check()
            .is_err());
        assert!(Content::from(Audio::wav(vec![1])).check().is_ok());
        assert!(Content::from(EmbeddedResource::text("no scheme", "x"))
            .check()
            .is_err());
        assert!(Content::from(EmbeddedResource::text("1x:/a", "x"))
            .check()
            .is_err());
        assert!(Content::from(EmbeddedResource::text("test://r", "x"))
            .check()
            .is_ok());
        assert!(Content::from(ResourceLink::new("file:///a", " "))
            .check()
            .is_err());
        assert!(Content::from(ResourceLink::new("file:///a", "a"))
            .check()
            .is_ok());
    }

    #[test]
    fn malformed_json_blocks_are_refused() {
        assert!(Content::from_json(
            &json!({"type": "image", "data": "!!", "mimeType": "image/png"})
        )
        .is_err());
        assert!(Content::from_json(&json!({"type": "video"})).is_err());
        assert!(
            Content::from_json(&json!({"type": "resource", "resource": {"uri": "a:b"}})).is_err()
        );
    }
}
