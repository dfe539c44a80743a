//! Resource templates: RFC 6570 level-1 URI templates, parsed and matched.
//!
//! Written here rather than taken from a library: a server needs the reverse of expansion
//! (matching a requested URI and extracting the variables, with the checks on their values),
//! which RFC 6570 crates such as `iri-string` do not offer; the parser is the ~40 lines of
//! level 1 that matching supports. Percent-decoding is the `percent-encoding` crate's.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rmcp::model::ResourceTemplate as McpTemplate;

use super::error::ResourceError;
use super::uri::{check_uri, percent_decode};
use crate::content::ResourceBody;
use crate::mcp::completion::Completer;

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
    pub(super) template: String,
    parts: Vec<Part>,
    pub(super) name: String,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) mime_type: Option<String>,
    pub(super) read: Arc<ReadFn>,
    pub(super) completers: BTreeMap<String, Completer>,
    pub(super) ttl_ms: u64,
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

    pub(super) fn vars(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values when `uri` matches this template.
    pub(super) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
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

    pub(super) fn listed(&self) -> McpTemplate {
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
