//! MCP resources: what an application offers for reading by URI (`resources/list`,
//! `resources/read`, `resources/templates/list`, and `resources/subscribe` for 2025-11-25
//! sessions).
//!
//! A [`Resources`] set holds
//! - fixed resources ([`Resource::text`], [`Resource::blob`]),
//! - resource templates ([`ResourceTemplate`]): an RFC 6570 level-1 URI template such as
//!   `notes://{day}/summary` whose variables a reader function turns into content,
//! - and, if asked, the files of the workspace ([`WorkspaceResources`]) as `file://` URIs,
//!   read through the path guard like a tool's path argument: the URI's path must lie inside
//!   the workspace, symlinks may not lead out, only regular files with a single hard link are
//!   read (never a FIFO, a device, a socket), beneath the workspace's directory handle so a
//!   swap after the check cannot escape, and at most a size cap.
//!
//! Every requested URI is checked before anything is looked up (length, characters, scheme).
//! An unknown URI is the resource-not-found error with the URI in `data.uri` (`-32602` on
//! 2026-07-28, SEP-2164; `-32002` on 2025-11-25); a refused one is `-32602` with the reason
//! code in `data`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::{
    Resource as McpResource, ResourceContents, ResourceTemplate as McpTemplate,
    ResourceUpdatedNotificationParam,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::completion::Completer;
use crate::content::{base64_encode, EmbeddedResource, ResourceBody};
use crate::guard::path::PathGuard;
use crate::guard::workspace::{FileKind, WorkspaceFsError};
use crate::reason::ReasonCode;

/// The longest URI accepted, in a registration or a request.
pub const MAX_URI_LEN: usize = 2048;

/// How long a client may keep a list or a fixed resource (they do not change while serving).
pub const STATIC_TTL_MS: u64 = 300_000;

/// The `data` key of a refusal's reason code (the same key tool refusals use).
const REASON_KEY: &str = "reason_code";

/// Why a resource could not be registered or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource has this URI.
    #[error("resource not found: {uri}")]
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The URI is not one this server accepts (too long, control characters, no scheme, a
    /// query or fragment on a `file://` URI, bad percent-encoding).
    #[error("invalid resource URI `{uri}`: {reason}")]
    InvalidUri {
        /// The URI (cut to [`MAX_URI_LEN`]).
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The resource exists but may not be read: outside the workspace, not a regular file,
    /// hard-linked.
    #[error("refused `{uri}`: {message}")]
    Refused {
        /// The URI.
        uri: String,
        /// The reason code.
        code: ReasonCode,
        /// Details.
        message: String,
    },
    /// The resource is larger than the cap.
    #[error("refused `{uri}`: larger than {max} bytes")]
    TooLarge {
        /// The URI.
        uri: String,
        /// The cap.
        max: usize,
    },
    /// Reading failed (an I/O error, a reader function's failure).
    #[error("reading `{uri}` failed: {message}")]
    Failed {
        /// The URI.
        uri: String,
        /// Details.
        message: String,
    },
    /// A registration was refused: a bad URI template, a duplicate URI or name.
    #[error("resource registration refused: {0}")]
    Registration(String),
}

impl ResourceError {
    /// The reason code this error carries in `data`.
    pub fn code(&self) -> ReasonCode {
        match self {
            ResourceError::NotFound { .. } | ResourceError::InvalidUri { .. } => {
                ReasonCode::InvalidArguments
            }
            ResourceError::Refused { code, .. } => *code,
            ResourceError::TooLarge { .. } => ReasonCode::MalformedCall,
            ResourceError::Failed { .. } | ResourceError::Registration(_) => ReasonCode::ToolError,
        }
    }

    /// The JSON-RPC error for this failure, with the URI in `data.uri`.
    pub fn to_error_data(&self) -> ErrorData {
        let uri = match self {
            ResourceError::NotFound { uri }
            | ResourceError::InvalidUri { uri, .. }
            | ResourceError::Refused { uri, .. }
            | ResourceError::TooLarge { uri, .. }
            | ResourceError::Failed { uri, .. } => uri.as_str(),
            ResourceError::Registration(_) => "",
        };
        let data = json!({"uri": uri, REASON_KEY: self.code()});
        match self {
            // rmcp turns this into -32602 for 2026-07-28 requests (SEP-2164).
            ResourceError::NotFound { .. } => {
                ErrorData::resource_not_found(self.to_string(), Some(data))
            }
            ResourceError::Failed { .. } | ResourceError::Registration(_) => {
                ErrorData::internal_error(self.to_string(), Some(data))
            }
            _ => ErrorData::invalid_params(self.to_string(), Some(data)),
        }
    }
}

/// A URI cut to [`MAX_URI_LEN`] bytes (at a character boundary), for error messages.
fn shown(uri: &str) -> String {
    let mut end = uri.len().min(MAX_URI_LEN);
    while !uri.is_char_boundary(end) {
        end -= 1;
    }
    uri[..end].to_owned()
}

/// Check a URI's shape: bounded length, no whitespace or control characters, a scheme.
pub fn check_uri(uri: &str) -> Result<(), ResourceError> {
    let bad = |reason: &str| ResourceError::InvalidUri {
        uri: shown(uri),
        reason: reason.to_owned(),
    };
    if uri.is_empty() {
        return Err(bad("empty"));
    }
    if uri.len() > MAX_URI_LEN {
        return Err(bad("too long"));
    }
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(bad("contains whitespace or control characters"));
    }
    let Some((scheme, _)) = uri.split_once(':') else {
        return Err(bad("no scheme"));
    };
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
        return Err(bad("the scheme is not valid"));
    }
    Ok(())
}

/// A fixed resource: its URI, name and content.
#[derive(Debug, Clone)]
pub struct Resource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: String,
    body: ResourceBody,
}

impl Resource {
    /// A text resource (`text/plain` unless [`Resource::with_mime_type`] says otherwise).
    pub fn text(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: "text/plain".to_owned(),
            body: ResourceBody::Text(text.into()),
        }
    }

    /// A binary resource of this MIME type.
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        data: impl Into<Vec<u8>>,
        mime_type: impl Into<String>,
    ) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: mime_type.into(),
            body: ResourceBody::Blob(data.into()),
        }
    }

    /// With a description for the client's list.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a human-readable title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With this MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = mime_type.into();
        self
    }

    fn size(&self) -> usize {
        match &self.body {
            ResourceBody::Text(t) => t.len(),
            ResourceBody::Blob(b) => b.len(),
        }
    }

    fn listed(&self) -> McpResource {
        let mut r = McpResource::new(self.uri.clone(), self.name.clone())
            .with_mime_type(self.mime_type.clone())
            .with_size(u64::try_from(self.size()).unwrap_or(u64::MAX));
        if let Some(t) = &self.title {
            r = r.with_title(t.clone());
        }
        if let Some(d) = &self.description {
            r = r.with_description(d.clone());
        }
        r
    }

    fn contents(&self) -> EmbeddedResource {
        EmbeddedResource {
            uri: self.uri.clone(),
            mime_type: Some(self.mime_type.clone()),
            body: self.body.clone(),
        }
    }
}

/// One piece of a parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// What a template reader gets: the requested URI and the values of the template's variables
/// (percent-decoded; never empty, never containing `/`, `?`, `#` or control characters).
#[derive(Debug, Clone)]
pub struct TemplateMatch<'a> {
    /// The URI asked for.
    pub uri: &'a str,
    /// Variable name → value.
    pub vars: &'a BTreeMap<String, String>,
}

type ReadFn = dyn Fn(&TemplateMatch<'_>) -> Result<ResourceBody, ResourceError> + Send + Sync;

/// Resources named by a URI template (RFC 6570 level 1: `{name}` expressions only), read by a
/// function of the variables.
#[derive(Clone)]
pub struct ResourceTemplate {
    template: String,
    parts: Vec<Part>,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    read: Arc<ReadFn>,
    completers: BTreeMap<String, Completer>,
    ttl_ms: u64,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// A template `uri_template` (e.g. `test://template/{id}/data`) named `name`, read by `read`.
    /// Refused: operators other than simple expansion (`{+x}`, `{/x}`, …), unbalanced braces,
    /// variable names outside `[A-Za-z0-9_]`, a repeated variable, two variables with no text
    /// between them, and no variable at all.
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        read: impl Fn(&TemplateMatch<'_>) -> Result<ResourceBody, ResourceError> + Send + Sync + 'static,
    ) -> Result<Self, ResourceError> {
        let template = uri_template.into();
        let parts = parse_template(&template).map_err(|reason| {
            ResourceError::Registration(format!("URI template `{template}`: {reason}"))
        })?;
        Ok(ResourceTemplate {
            template,
            parts,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            read: Arc::new(read),
            completers: BTreeMap::new(),
            ttl_ms: 0,
        })
    }

    /// With a description for the client's list.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a human-readable title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The MIME type of what it reads.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// How long a client may keep what it reads (default 0: read again each time).
    pub fn with_ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// Suggest values of variable `var` for `completion/complete`. Refused when the template has
    /// no such variable.
    pub fn with_completer(
        mut self,
        var: impl Into<String>,
        completer: Completer,
    ) -> Result<Self, ResourceError> {
        let var = var.into();
        if !self.vars().any(|v| v == var) {
            return Err(ResourceError::Registration(format!(
                "URI template `{}` has no variable `{var}`",
                self.template
            )));
        }
        self.completers.insert(var, completer);
        Ok(self)
    }

    /// The template as written.
    pub fn uri_template(&self) -> &str {
        &self.template
    }

    fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` matches this template.
    fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut rest = uri;
        let mut vars = BTreeMap::new();
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(lit) => rest = rest.strip_prefix(lit.as_str())?,
                Part::Var(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let raw = &rest[..end];
                    vars.insert(name.clone(), template_value(raw)?);
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }

    fn listed(&self) -> McpTemplate {
        let mut t = McpTemplate::new(self.template.clone(), self.name.clone());
        if let Some(title) = &self.title {
            t = t.with_title(title.clone());
        }
        if let Some(d) = &self.description {
            t = t.with_description(d.clone());
        }
        if let Some(m) = &self.mime_type {
            t = t.with_mime_type(m.clone());
        }
        t
    }
}

/// A variable's value as matched: non-empty, percent-decoded to UTF-8, without `/`, `?`, `#`
/// or control characters (before or after decoding).
fn template_value(raw: &str) -> Option<String> {
    if raw.is_empty() || raw.contains(['/', '?', '#']) {
        return None;
    }
    let value = percent_decode(raw)?;
    if value.is_empty() || value.contains(['/', '?', '#']) || value.chars().any(char::is_control) {
        return None;
    }
    Some(value)
}

fn parse_template(template: &str) -> Result<Vec<Part>, String> {
    check_uri(&template.replace(['{', '}'], "x")).map_err(|e| e.to_string())?;
    let mut parts = Vec::new();
    let mut seen = BTreeSet::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            Some(i) if rest.as_bytes()[i] == b'}' => return Err("unbalanced `}`".into()),
            Some(i) => {
                if i > 0 {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                }
                let after = &rest[i + 1..];
                let close = after.find('}').ok_or("unbalanced `{`")?;
                let name = &after[..close];
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!(
                        "`{{{name}}}`: only simple `{{name}}` expressions are supported"
                    ));
                }
                if !seen.insert(name.to_owned()) {
                    return Err(format!("variable `{name}` appears twice"));
                }
                if matches!(parts.last(), Some(Part::Var(_))) {
                    return Err("two variables need text between them".into());
                }
                parts.push(Part::Var(name.to_owned()));
                rest = &after[close + 1..];
            }
            None => {
                parts.push(Part::Literal(rest.to_owned()));
                rest = "";
            }
        }
    }
    if seen.is_empty() {
        return Err("no variable: register a fixed resource instead".into());
    }
    Ok(parts)
}

/// Decode `%XX` escapes; `None` on a bad escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encode a path for a `file://` URI: everything but unreserved characters and `/`.
fn percent_encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The workspace's files as `file://` resources, listed and read through the path guard.
#[derive(Debug, Clone)]
pub struct WorkspaceResources {
    guard: PathGuard,
    max_bytes: usize,
    max_listed: usize,
    max_depth: usize,
}

impl WorkspaceResources {
    /// The files of `guard`'s workspace: at most 1 MiB read per file, at most 1000 files listed,
    /// 8 directory levels deep, hidden files (names starting with `.`) not listed.
    pub fn new(guard: PathGuard) -> Self {
        WorkspaceResources {
            guard,
            max_bytes: 1 << 20,
            max_listed: 1000,
            max_depth: 8,
        }
    }

    /// Refuse files larger than `max_bytes`.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// List at most `max` files.
    pub fn with_max_listed(mut self, max: usize) -> Self {
        self.max_listed = max;
        self
    }

    /// The `file://` URI of a path inside the workspace.
    pub fn uri_of(&self, abs: &Path) -> Option<String> {
        abs.to_str()
            .map(|p| format!("file://{}", percent_encode_path(p)))
    }

    /// `true` when `uri` is a `file://` URI (this set answers for all of them).
    fn claims(uri: &str) -> bool {
        uri.starts_with("file:")
    }

    /// The decoded absolute path of a `file://` URI.
    fn path_of(uri: &str) -> Result<String, ResourceError> {
        let bad = |reason: &str| ResourceError::InvalidUri {
            uri: shown(uri),
            reason: reason.to_owned(),
        };
        let rest = uri
            .strip_prefix("file://")
            .ok_or_else(|| bad("a file URI is `file:///absolute/path`"))?;
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if !rest.starts_with('/') {
            return Err(bad("only local files (`file:///…`) are served"));
        }
        if rest.contains(['?', '#']) {
            return Err(bad("a file URI has no query or fragment"));
        }
        let path = percent_decode(rest).ok_or_else(|| bad("bad percent-encoding or not UTF-8"))?;
        if path.contains('\0') {
            return Err(bad("the path contains a NUL byte"));
        }
        Ok(path)
    }

    fn read(&self, uri: &str) -> Result<EmbeddedResource, ResourceError> {
        let path = Self::path_of(uri)?;
        let checked = self
            .guard
            .check(&path)
            .map_err(|e| ResourceError::Refused {
                uri: shown(uri),
                code: e.code(),
                message: e.to_string(),
            })?;
        let fs_err = |e: WorkspaceFsError| {
            if e.is_not_found() {
                ResourceError::NotFound { uri: shown(uri) }
            } else if matches!(e, WorkspaceFsError::Io { .. }) {
                ResourceError::Failed {
                    uri: shown(uri),
                    message: e.to_string(),
                }
            } else {
                ResourceError::Refused {
                    uri: shown(uri),
                    code: e.code(),
                    message: e.to_string(),
                }
            }
        };
        let bytes = checked
            .read(self.max_bytes.saturating_add(1))
            .map_err(fs_err)?;
        if bytes.len() > self.max_bytes {
            return Err(ResourceError::TooLarge {
                uri: shown(uri),
                max: self.max_bytes,
            });
        }
        let mime = mime_of(&path);
        let body = match String::from_utf8(bytes) {
            Ok(text) if mime.is_none_or(is_text_mime) => ResourceBody::Text(text),
            Ok(text) => ResourceBody::Blob(text.into_bytes()),
            Err(e) => ResourceBody::Blob(e.into_bytes()),
        };
        let mime_type = mime.map(str::to_owned).or_else(|| {
            Some(match body {
                ResourceBody::Text(_) => "text/plain".to_owned(),
                ResourceBody::Blob(_) => "application/octet-stream".to_owned(),
            })
        });
        Ok(EmbeddedResource {
            uri: uri.to_owned(),
            mime_type,
            body,
        })
    }

    /// The regular, singly linked, non-hidden files, breadth first, sorted by name within a
    /// directory; symlinks are not followed.
    fn list(&self) -> Vec<McpResource> {
        let mut out = Vec::new();
        let mut queue = std::collections::VecDeque::from([(String::new(), 0usize)]);
        while let Some((dir, depth)) = queue.pop_front() {
            let Ok(checked) = self.guard.check(if dir.is_empty() { "." } else { &dir }) else {
                continue;
            };
            let Ok(mut entries) = checked.read_dir() else {
                continue;
            };
            entries.sort_by(|a, b| a.name().cmp(b.name()));
            for entry in entries {
                let Some(name) = entry.name().to_str() else {
                    continue;
                };
                if name.starts_with('.') {
                    continue;
                }
                let rel = if dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{dir}/{name}")
                };
                match entry.kind() {
                    FileKind::Dir if depth + 1 < self.max_depth => {
                        queue.push_back((rel, depth + 1))
                    }
                    FileKind::File => {
                        if out.len() >= self.max_listed {
                            return out;
                        }
                        let Ok(file) = self.guard.check(&rel) else {
                            continue;
                        };
                        let Ok(meta) = file.symlink_metadata() else {
                            continue;
                        };
                        if meta.kind() != FileKind::File || meta.links() > 1 {
                            continue;
                        }
                        let Some(uri) = self.uri_of(file.as_path()) else {
                            continue;
                        };
                        let mut r = McpResource::new(uri, rel.clone())
                            .with_title(rel.clone())
                            .with_size(meta.len());
                        if let Some(m) = mime_of(&rel) {
                            r = r.with_mime_type(m);
                        }
                        out.push(r);
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json" | "application/toml" | "application/yaml" | "image/svg+xml"
        )
}

/// The MIME type a file name's extension implies, for the common kinds.
fn mime_of(name: &str) -> Option<&'static str> {
    let ext = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "zip" => "application/zip",
        _ => return None,
    })
}

/// What one read gave, and how long a client may keep it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutcome {
    /// The content.
    pub contents: EmbeddedResource,
    /// The caching hint (`ttlMs`).
    pub ttl_ms: u64,
}

/// The resources an MCP server offers.
#[derive(Debug, Clone)]
pub struct Resources {
    fixed: BTreeMap<String, Resource>,
    templates: Vec<ResourceTemplate>,
    workspace: Option<WorkspaceResources>,
    updates: broadcast::Sender<String>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources::new()
    }
}

impl Resources {
    /// No resources yet.
    pub fn new() -> Self {
        Resources {
            fixed: BTreeMap::new(),
            templates: Vec::new(),
            workspace: None,
            updates: broadcast::channel(64).0,
        }
    }

    /// Add a fixed resource. Refused: an invalid URI, a URI already registered, a `file:` URI
    /// (those are the workspace's).
    pub fn with_resource(mut self, resource: Resource) -> Result<Self, ResourceError> {
        check_uri(&resource.uri).map_err(|e| ResourceError::Registration(e.to_string()))?;
        if WorkspaceResources::claims(&resource.uri) {
            return Err(ResourceError::Registration(format!(
                "`{}`: `file:` URIs name workspace files",
                resource.uri
            )));
        }
        if self.fixed.contains_key(&resource.uri) {
            return Err(ResourceError::Registration(format!(
                "`{}` is registered twice",
                resource.uri
            )));
        }
        self.fixed.insert(resource.uri.clone(), resource);
        Ok(self)
    }

    /// Add a resource template. Refused: a template already registered, or one for `file:`.
    pub fn with_template(mut self, template: ResourceTemplate) -> Result<Self, ResourceError> {
        if WorkspaceResources::claims(&template.template) {
            return Err(ResourceError::Registration(format!(
                "`{}`: `file:` URIs name workspace files",
                template.template
            )));
        }
        if self
            .templates
            .iter()
            .any(|t| t.template == template.template)
        {
            return Err(ResourceError::Registration(format!(
                "URI template `{}` is registered twice",
                template.template
            )));
        }
        self.templates.push(template);
        self.templates.sort_by(|a, b| a.template.cmp(&b.template));
        Ok(self)
    }

    /// Offer the workspace's files as `file://` resources.
    pub fn with_workspace(mut self, workspace: WorkspaceResources) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// `true` when nothing is offered.
    pub fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.templates.is_empty() && self.workspace.is_none()
    }

    /// `true` when some template has a completer.
    pub fn has_completers(&self) -> bool {
        self.templates.iter().any(|t| !t.completers.is_empty())
    }

    /// The `resources/list` entries, sorted by URI.
    pub fn list(&self) -> Vec<McpResource> {
        let mut out: Vec<McpResource> = self.fixed.values().map(Resource::listed).collect();
        if let Some(ws) = &self.workspace {
            out.extend(ws.list());
        }
        out.sort_by(|a, b| a.uri.cmp(&b.uri));
        out
    }

    /// How long a client may keep the `resources/list` result: the workspace's files change,
    /// fixed resources do not.
    pub fn list_ttl_ms(&self) -> u64 {
        if self.workspace.is_some() {
            0
        } else {
            STATIC_TTL_MS
        }
    }

    /// The `resources/templates/list` entries, sorted by template.
    pub fn templates(&self) -> Vec<McpTemplate> {
        self.templates
            .iter()
            .map(ResourceTemplate::listed)
            .collect()
    }

    /// Read `uri`: a fixed resource, else the first template (in template order) that matches,
    /// else a workspace file for a `file://` URI.
    pub fn read(&self, uri: &str) -> Result<ReadOutcome, ResourceError> {
        check_uri(uri)?;
        if let Some(r) = self.fixed.get(uri) {
            return Ok(ReadOutcome {
                contents: r.contents(),
                ttl_ms: STATIC_TTL_MS,
            });
        }
        if WorkspaceResources::claims(uri) {
            return match &self.workspace {
                Some(ws) => ws.read(uri).map(|contents| ReadOutcome {
                    contents,
                    ttl_ms: 0,
                }),
                None => Err(ResourceError::NotFound {
                    uri: uri.to_owned(),
                }),
            };
        }
        for t in &self.templates {
            if let Some(vars) = t.matches(uri) {
                let body = (t.read)(&TemplateMatch { uri, vars: &vars })?;
                return Ok(ReadOutcome {
                    contents: EmbeddedResource {
                        uri: uri.to_owned(),
                        mime_type: t.mime_type.clone(),
                        body,
                    },
                    ttl_ms: t.ttl_ms,
                });
            }
        }
        Err(ResourceError::NotFound {
            uri: uri.to_owned(),
        })
    }

    /// The completer of variable `var` of the template written `template`: `Err` when there is
    /// no such template or variable, `Ok(None)` when the variable has no completer.
    pub fn completer(&self, template: &str, var: &str) -> Result<Option<&Completer>, ErrorData> {
        let t = self
            .templates
            .iter()
            .find(|t| t.template == template)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("no resource template `{}`", shown(template)),
                    Some(json!({"uri": shown(template), REASON_KEY: ReasonCode::InvalidArguments})),
                )
            })?;
        if !t.vars().any(|v| v == var) {
            return Err(ErrorData::invalid_params(
                format!("resource template `{template}` has no variable `{var}`"),
                Some(
                    json!({"uri": template, "argument": var, REASON_KEY: ReasonCode::InvalidArguments}),
                ),
            ));
        }
        Ok(t.completers.get(var))
    }

    /// Tell subscribed 2025-11-25 sessions that `uri` changed (`notifications/resources/updated`).
    pub fn notify_updated(&self, uri: impl Into<String>) {
        // No receiver (no subscribed session) is not an error.
        let _ = self.updates.send(uri.into());
    }
}

/// The `resources/read` contents of one read.
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

/// The resources one 2025-11-25 session subscribed to, and the task that forwards their
/// updates. Dropped with the session; the task ends then.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
    forwarding: AtomicBool,
    stop: CancellationToken,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The most URIs one session may subscribe to.
const MAX_SUBSCRIPTIONS: usize = 1024;

impl Subscriptions {
    /// Subscribe to `uri`, which must be readable now; updates go to `peer`.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        resources: &Resources,
        peer: Peer<RoleServer>,
    ) -> Result<(), ResourceError> {
        resources.read(uri)?;
        {
            let mut uris = self.uris.lock().unwrap_or_else(|p| p.into_inner());
            if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(uri) {
                return Err(ResourceError::Refused {
                    uri: uri.to_owned(),
                    code: ReasonCode::MalformedCall,
                    message: format!("at most {MAX_SUBSCRIPTIONS} subscriptions per session"),
                });
            }
            uris.insert(uri.to_owned());
        }
        if !self.forwarding.swap(true, Ordering::SeqCst) {
            let rx = resources.updates.subscribe();
            tokio::spawn(forward(Arc::downgrade(self), self.stop.clone(), rx, peer));
        }
        Ok(())
    }

    /// Stop sending updates of `uri`.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uri);
    }
}

async fn forward(
    subs: Weak<Subscriptions>,
    stop: CancellationToken,
    mut rx: broadcast::Receiver<String>,
    peer: Peer<RoleServer>,
) {
    loop {
        let uri = tokio::select! {
            () = stop.cancelled() => return,
            msg = rx.recv() => match msg {
                Ok(uri) => uri,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        let subscribed = match subs.upgrade() {
            Some(s) => s
                .uris
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&uri),
            None => return,
        };
        if subscribed
            && peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(m: &TemplateMatch<'_>) -> Result<ResourceBody, ResourceError> {
        Ok(ResourceBody::Text(format!("{:?}", m.vars)))
    }

    #[test]
    fn templates_match_simple_expressions_and_refuse_the_rest() {
        let t = ResourceTemplate::new("test://template/{id}/data", "t", echo).expect("valid");
        let vars = t.matches("test://template/123/data").expect("matches");
        assert_eq!(vars["id"], "123");
        assert_eq!(
            t.matches("test://template/a%20b/data").expect("decoded")["id"],
            "a b"
        );
        for uri in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/a%2Fb/data",
            "test://template/%ZZ/data",
            "test://template/1/datax",
            "test://other/1/data",
        ] {
            assert!(t.matches(uri).is_none(), "{uri} must not match");
        }
        for bad in [
            "test://{+path}",
            "test://{a}{b}",
            "test://{a}/{a}",
            "test://{a",
            "test://a}",
            "test://fixed",
            "no scheme {a}",
        ] {
            assert!(
                ResourceTemplate::new(bad, "t", echo).is_err(),
                "{bad} must be refused"
            );
        }
    }

    #[test]
    fn uris_are_checked_and_file_uris_decoded() {
        assert!(check_uri("test://static-text").is_ok());
        for bad in ["", "no-scheme", "1x://a", "test://a b", "test://a\nb"] {
            assert!(check_uri(bad).is_err(), "{bad:?}");
        }
        assert!(check_uri(&format!("x:{}", "a".repeat(MAX_URI_LEN))).is_err());
        assert_eq!(
            WorkspaceResources::path_of("file:///ws/a%20b.txt").expect("decoded"),
            "/ws/a b.txt"
        );
        assert_eq!(
            WorkspaceResources::path_of("file://localhost/ws/a").expect("local"),
            "/ws/a"
        );
        for bad in [
            "file://host/ws/a",
            "file:ws/a",
            "file:///ws/a?x=1",
            "file:///ws/a#f",
            "file:///ws/%00",
            "file:///ws/%C3",
        ] {
            assert!(WorkspaceResources::path_of(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_encode_path("/a b/ü"), "/a%20b/%C3%BC");
    }

    #[test]
    fn registrations_refuse_duplicates_and_file_uris() {
        let r = Resources::new()
            .with_resource(Resource::text("test://a", "a", "x"))
            .expect("first");
        assert!(r
            .clone()
            .with_resource(Resource::text("test://a", "a", "y"))
            .is_err());
        assert!(r
            .clone()
            .with_resource(Resource::text("file:///etc/passwd", "p", "y"))
            .is_err());
        let t = ResourceTemplate::new("test://t/{x}", "t", echo).expect("valid");
        let r = r.with_template(t.clone()).expect("template");
        assert!(r.clone().with_template(t.clone()).is_err());
        assert!(t
            .with_completer("nope", Completer::from_values(["a"]))
            .is_err());
        assert!(matches!(
            r.read("test://missing"),
            Err(ResourceError::NotFound { .. })
        ));
        assert!(matches!(
            r.read("file:///anything"),
            Err(ResourceError::NotFound { .. })
        ));
    }
}
