//! The resources a server offers (fixed ones, templates, the workspace's files), listed and
//! read by URI.

use std::collections::BTreeMap;

use rmcp::model::{Resource as McpResource, ResourceTemplate as McpTemplate};
use rmcp::ErrorData;
use serde_json::json;
use tokio::sync::broadcast;

use super::error::{ResourceError, REASON_KEY};
use super::template::{ResourceTemplate, TemplateMatch};
use super::uri::{check_uri, shown};
use super::workspace::WorkspaceResources;
use crate::content::{EmbeddedResource, ResourceBody};
use crate::mcp::completion::Completer;
use crate::reason::ReasonCode;

/// How long a client may keep a list or a fixed resource (they do not change while serving).
pub const STATIC_TTL_MS: u64 = 300_000;

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
    pub(super) updates: broadcast::Sender<String>,
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
