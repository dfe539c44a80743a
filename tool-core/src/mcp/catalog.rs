//! What the server offers besides tools, and its answers: resources, prompts and completion
//! (the `resources/*`, `prompts/*` and `completion/complete` methods). The server's handler
//! delegates here; a method whose feature is not configured is `-32601` (method not found).

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResult, ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesRequestMethod, ListResourcesResult, PromptsCapability, ReadResourceRequestParams,
    ReadResourceResult, Reference, ResourcesCapability, ServerCapabilities,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{json, Value};

use super::completion::{run, CompletionRequest};
use super::content::to_contents;
use super::prompts::{PromptInput, Prompts};
use super::resources::{Resources, Subscriptions, STATIC_TTL_MS};
use crate::reason::ReasonCode;

/// The resources and prompts one server offers (shared by all its connections).
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) resources: Option<Resources>,
    pub(crate) prompts: Option<Prompts>,
}

fn not_offered<M: rmcp::model::ConstString>() -> ErrorData {
    ErrorData::method_not_found::<M>()
}

impl Catalog {
    fn resources(&self) -> Result<&Resources, ErrorData> {
        self.resources
            .as_ref()
            .ok_or_else(not_offered::<ListResourcesRequestMethod>)
    }

    fn prompts(&self) -> Result<&Prompts, ErrorData> {
        self.prompts
            .as_ref()
            .ok_or_else(not_offered::<ListPromptsRequestMethod>)
    }

    /// Declare what is offered. `subscribe` only for 2025-11-25 sessions (`legacy`): on
    /// 2026-07-28 updates travel through `subscriptions/listen`, which is not offered.
    pub(crate) fn declare(&self, caps: &mut ServerCapabilities, legacy: bool) {
        if let Some(r) = &self.resources {
            let mut c = ResourcesCapability::default();
            c.list_changed = Some(false);
            c.subscribe = legacy.then_some(true);
            caps.resources = Some(c);
            if r.has_completers() {
                caps.completions = Some(Default::default());
            }
        }
        if let Some(p) = &self.prompts {
            let mut c = PromptsCapability::default();
            c.list_changed = Some(false);
            caps.prompts = Some(c);
            if p.has_completers() {
                caps.completions = Some(Default::default());
            }
        }
    }

    pub(crate) fn list_resources(&self, stateless: bool) -> Result<ListResourcesResult, ErrorData> {
        let r = self.resources()?;
        let mut result = ListResourcesResult::with_all_items(r.list());
        if stateless {
            result = result
                .with_ttl_ms(r.list_ttl_ms())
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    pub(crate) fn list_templates(
        &self,
        stateless: bool,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let r = self.resources()?;
        let mut result = ListResourceTemplatesResult::with_all_items(r.templates());
        if stateless {
            result = result
                .with_ttl_ms(STATIC_TTL_MS)
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    pub(crate) fn read(
        &self,
        request: &ReadResourceRequestParams,
        stateless: bool,
    ) -> Result<ReadResourceResult, ErrorData> {
        let r = self.resources()?;
        let read = r.read(&request.uri).map_err(|e| e.to_error_data())?;
        let mut result = ReadResourceResult::new(vec![to_contents(&read.contents)]);
        if stateless {
            result = result
                .with_ttl_ms(read.ttl_ms)
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    pub(crate) fn subscribe(
        &self,
        subs: &Arc<Subscriptions>,
        uri: &str,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let r = self.resources()?;
        subs.subscribe(uri, r, peer).map_err(|e| e.to_error_data())
    }

    pub(crate) fn unsubscribe(&self, subs: &Subscriptions, uri: &str) -> Result<(), ErrorData> {
        self.resources()?;
        subs.unsubscribe(uri);
        Ok(())
    }

    pub(crate) fn list_prompts(&self, stateless: bool) -> Result<ListPromptsResult, ErrorData> {
        let p = self.prompts()?;
        let mut result = ListPromptsResult::with_all_items(p.list());
        if stateless {
            result = result
                .with_ttl_ms(STATIC_TTL_MS)
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    pub(crate) async fn get_prompt(
        &self,
        request: &GetPromptRequestParams,
        input: PromptInput,
    ) -> Result<GetPromptResult, ErrorData> {
        let p = self.prompts()?;
        let args = string_args(&request.name, request.arguments.as_ref())?;
        let (description, messages) = p.get(&request.name, args, input).await?;
        let mut result = GetPromptResult::new(messages);
        result.description = description;
        Ok(result)
    }

    pub(crate) fn complete(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let completer = match &request.r#ref {
            Reference::Prompt(p) => self.prompts()?.completer(&p.name, &request.argument.name)?,
            Reference::Resource(t) => self
                .resources()?
                .completer(&t.uri, &request.argument.name)?,
            _ => {
                return Err(ErrorData::invalid_params(
                    "unknown completion reference type",
                    Some(json!({"reason_code": ReasonCode::InvalidArguments})),
                ))
            }
        };
        let context: BTreeMap<String, String> = request
            .context
            .as_ref()
            .and_then(|c| c.arguments.as_ref())
            .map(|a| a.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        let got = run(
            completer,
            &CompletionRequest {
                argument: &request.argument.name,
                value: &request.argument.value,
                context: &context,
            },
        );
        let total = u32::try_from(got.total).unwrap_or(u32::MAX);
        let info = CompletionInfo::with_pagination(got.values, Some(total), got.has_more)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}

/// Prompt arguments as strings (MCP prompt arguments are strings; anything else is refused).
fn string_args(
    name: &str,
    args: Option<&serde_json::Map<String, Value>>,
) -> Result<BTreeMap<String, String>, ErrorData> {
    let mut out = BTreeMap::new();
    for (k, v) in args.into_iter().flatten() {
        let Value::String(s) = v else {
            return Err(ErrorData::invalid_params(
                format!("prompt `{name}`: argument `{k}` must be a string"),
                Some(
                    json!({"name": name, "argument": k, "reason_code": ReasonCode::InvalidArguments}),
                ),
            ));
        };
        out.insert(k.clone(), s.clone());
    }
    Ok(out)
}
