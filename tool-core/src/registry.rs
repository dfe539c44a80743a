//! The tool registry: declared tools (from `#[tool]` through inventory) and dynamic ones, checked
//! once at build time, looked up by exact name, dumped canonically and fingerprinted.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::context::ToolContext;
use crate::decl::{Risk, ScriptLang, ScriptSetup, ToolDecl};
use crate::outcome::IntoToolOutcome;
use crate::resource::ResourceType;
pub use dump::decl_to_json;

mod checks;
mod dump;
mod error;
mod handler;
mod script_setup;
pub(crate) mod typed;
mod validators;

pub use checks::check_decl;
use checks::{check_and_prepare, schema_property};
pub(crate) use checks::{check_in_full, parts_hold};
pub use error::RegistryError;
pub use handler::{ArgumentError, BoxFuture, Handler, PermissionCheck};

/// A tool definition: its declaration plus the code that runs it.
#[derive(Clone)]
pub struct ToolDef {
    decl: ToolDecl,
    handler: Handler,
    check_permissions: Option<PermissionCheck>,
    legacy_path_fields: bool,
    // An async `#[tool]` function: its future touches nothing of the caller's runtime, so it
    // may run on a confined one.
    async_fn: bool,
    // The types of the `State<T>` parameters of a `#[tool]`, checked at executor start.
    resources: Vec<ResourceType>,
    // A `#[tool]`'s arguments read straight into its parameter types (see `typed`).
    typed: Option<typed::TypedEntry>,
    // The canonical text of `decl.input_schema`, written by `#[tool]` (see
    // `ToolRegistration::canonical_input`); the declaration cannot change after it is set.
    canonical_input: Option<&'static str>,
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("decl", &self.decl)
            .field("check_permissions", &self.check_permissions.is_some())
            .field("legacy_path_fields", &self.legacy_path_fields)
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// Start a dynamic tool definition (plugins, MCP proxies). `build()` checks the same rules
    /// `#[tool]` checks at compile time.
    pub fn builder(name: impl Into<String>) -> ToolDefBuilder {
        ToolDefBuilder::new(name.into())
    }

    /// Used by `#[tool]`-generated code, through `__private::tool_def`: the declaration was
    /// checked at compile time.
    pub(crate) fn from_macro(
        decl: ToolDecl,
        handler: Handler,
        check_permissions: Option<PermissionCheck>,
    ) -> Self {
        ToolDef {
            decl,
            handler,
            check_permissions,
            legacy_path_fields: false,
            async_fn: false,
            resources: Vec::new(),
            typed: None,
            canonical_input: None,
        }
    }

    /// Gives a `#[tool]` its typed entry (see [`typed`]).
    pub(crate) fn with_typed(mut self, entry: typed::TypedEntry) -> Self {
        self.typed = Some(entry);
        self
    }

    /// The typed entry of a `#[tool]` whose parameter types check what its schema says.
    pub(crate) fn typed(&self) -> Option<typed::TypedEntry> {
        self.typed
    }

    /// Whether calls of this `#[tool]` may take the executor's typed path (its parameter types
    /// check exactly what its schema says). Diagnostics only.
    #[doc(hidden)]
    pub fn has_typed_entry(&self) -> bool {
        self.typed.is_some()
    }

    /// Records the resources a `#[tool]`'s `State<T>` parameters take.
    pub(crate) fn with_resources(mut self, resources: Vec<ResourceType>) -> Self {
        self.resources = resources;
        self
    }

    /// The resource types the tool's `State<T>` parameters take ([`crate::resource`]): an
    /// executor without one of them refuses to start.
    pub fn resources(&self) -> &[ResourceType] {
        &self.resources
    }

    /// Marks the handler as an async `#[tool]` function's.
    pub(crate) fn async_handler(mut self) -> Self {
        self.async_fn = true;
        self
    }

    /// Whether the handler is an async `#[tool]` function's (which the executor may run on a
    /// confined runtime); `false` for sync and dynamic tools.
    pub fn is_async_fn(&self) -> bool {
        self.async_fn
    }

    /// Whether the tool was built with [`ToolDef::builder`] (its handler takes the JSON
    /// arguments as they are, so the executor applies what its schema states first).
    pub(crate) fn is_dynamic(&self) -> bool {
        self.legacy_path_fields
    }

    /// The declaration.
    pub fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    /// The handler.
    pub fn handler(&self) -> &Handler {
        &self.handler
    }

    /// The tool's own permission rule, if any.
    pub fn permission_check(&self) -> Option<&PermissionCheck> {
        self.check_permissions.as_ref()
    }

    /// Every argument the path guard checks: the declared `path_args`, plus, for dynamic tools,
    /// string properties named like paths (`path`, `source`, `destination`, `cwd`).
    pub fn guarded_path_args(&self) -> Vec<String> {
        self.guarded_path_names().map(str::to_owned).collect()
    }

    /// [`ToolDef::guarded_path_args`], borrowed: what the guard walks on every call.
    pub(crate) fn guarded_path_names(&self) -> impl Iterator<Item = &str> + '_ {
        let declared = &self.decl.path_args;
        let legacy: &[&str] = if self.legacy_path_fields {
            LEGACY_PATH_FIELDS
        } else {
            &[]
        };
        declared
            .iter()
            .map(String::as_str)
            .chain(legacy.iter().copied().filter(move |name| {
                !declared.iter().any(|n| n == name)
                    && schema_property(&self.decl.input_schema, name).is_some()
            }))
    }
}

/// Property names guarded as paths on dynamic tools even when not declared (older plugins).
pub const LEGACY_PATH_FIELDS: &[&str] = &["path", "source", "destination", "cwd"];

/// Builder for a dynamic [`ToolDef`].
pub struct ToolDefBuilder {
    decl: ToolDecl,
    risk_error: Option<String>,
    lang_error: Option<String>,
    handler: Option<Handler>,
    check_permissions: Option<PermissionCheck>,
}

impl ToolDefBuilder {
    fn new(name: String) -> Self {
        ToolDefBuilder {
            decl: ToolDecl {
                source: format!("dynamic tool `{name}`"),
                name,
                description: String::new(),
                input_schema:
                    json!({"type": "object", "properties": {}, "additionalProperties": false})
                        .into(),
                output_schema: None,
                risk: Risk::default(),
                concurrency_safe: false,
                idempotent: false,
                open_world: false,
                path_args: Vec::new(),
                script_args: Vec::new(),
                script_lang: None,
                script_setup: ScriptSetup::default(),
                timeout: None,
                unix_sockets: Vec::new(),
            },
            risk_error: None,
            lang_error: None,
            handler: None,
            check_permissions: None,
        }
    }

    /// What the tool does (required).
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.decl.description = d.into();
        self
    }

    /// The argument schema (Draft 2020-12, root object).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.decl.input_schema = schema.into();
        self
    }

    /// The output schema, for structured output.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.decl.output_schema = Some(schema);
        self
    }

    /// The risk level (default `mutation`).
    pub fn risk(mut self, risk: Risk) -> Self {
        self.decl.risk = risk;
        self
    }

    /// The risk level by name; an unknown name makes `build()` fail.
    pub fn risk_name(mut self, name: &str) -> Self {
        match name.parse() {
            Ok(r) => self.decl.risk = r,
            Err(e) => self.risk_error = Some(format!("{e}")),
        }
        self
    }

    /// Declare the tool safe to run concurrently with other concurrency-safe calls.
    pub fn concurrency_safe(mut self, yes: bool) -> Self {
        self.decl.concurrency_safe = yes;
        self
    }

    /// Declare the tool idempotent.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.decl.idempotent = yes;
        self
    }

    /// Declare that the tool reaches outside the workspace.
    pub fn open_world(mut self, yes: bool) -> Self {
        self.decl.open_world = yes;
        self
    }

    /// Arguments that are workspace paths.
    pub fn path_args<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.decl.path_args = names.into_iter().map(Into::into).collect();
        self
    }

    /// Arguments that hold scripts, in `lang`.
    pub fn script_args<I, S>(mut self, names: I, lang: ScriptLang) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.decl.script_args = names.into_iter().map(Into::into).collect();
        self.decl.script_lang = Some(lang);
        self
    }

    /// The arguments that set up a script's run (`#[tool(cwd_arg = .., timeout_arg = ..,
    /// env_arg = ..)]`); see [`ScriptSetup`].
    pub fn script_setup(mut self, setup: ScriptSetup) -> Self {
        self.decl.script_setup = setup;
        self
    }

    /// Script language by name; an unknown name makes `build()` fail.
    pub fn script_lang_name(mut self, name: &str) -> Self {
        match name.parse() {
            Ok(l) => self.decl.script_lang = Some(l),
            Err(e) => self.lang_error = Some(format!("{e}")),
        }
        self
    }

    /// Longest time a call may run.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.decl.timeout = Some(t);
        self
    }

    /// Pathname UNIX sockets on the host the tool may connect to (see [`ToolDecl::unix_sockets`]).
    pub fn unix_sockets<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.decl.unix_sockets = paths.into_iter().map(Into::into).collect();
        self
    }

    /// Where the tool comes from, for error messages (e.g. `mcp proxy: server-x`).
    pub fn source(mut self, s: impl Into<String>) -> Self {
        self.decl.source = s.into();
        self
    }

    /// The handler, as an async closure over the context and the JSON arguments.
    pub fn handler<F, Fut, R>(mut self, f: F) -> Self
    where
        F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolOutcome,
    {
        let f = Arc::new(f);
        self.handler = Some(Arc::new(move |ctx, args| {
            let fut = f(ctx, args);
            Ok(Box::pin(async move { fut.await.into_outcome() }) as BoxFuture)
        }));
        self
    }

    /// A raw handler that may refuse its arguments before running.
    pub fn raw_handler(mut self, h: Handler) -> Self {
        self.handler = Some(h);
        self
    }

    /// The tool's own permission rule on its final arguments.
    pub fn check_permissions<F>(mut self, f: F) -> Self
    where
        F: Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    {
        self.check_permissions = Some(Arc::new(f));
        self
    }

    /// Check the declaration and build the definition. Fails closed on anything doubtful.
    pub fn build(self) -> Result<ToolDef, RegistryError> {
        let name = self.decl.name.clone();
        let bad = |reason: String| RegistryError::InvalidDeclaration {
            tool: name.clone(),
            reason,
        };
        if let Some(e) = self.risk_error {
            return Err(bad(e));
        }
        if let Some(e) = self.lang_error {
            return Err(bad(e));
        }
        let handler = self
            .handler
            .ok_or_else(|| bad("no handler was given".to_owned()))?;
        check_decl(&self.decl)?;
        Ok(ToolDef {
            decl: self.decl,
            handler,
            check_permissions: self.check_permissions,
            legacy_path_fields: true,
            async_fn: false,
            resources: Vec::new(),
            typed: None,
            canonical_input: None,
        })
    }
}

/// What `#[tool]`-generated code submits to `inventory`: public only through `__private`.
pub(crate) mod registration {
    use crate::registry::ToolDef;

    /// A `#[tool]` registration collected through `inventory`.
    pub struct ToolRegistration {
        /// Builds the definition.
        pub build: fn() -> ToolDef,
        /// `module_path!()` of the declaring function.
        pub module_path: &'static str,
        /// The input schema as schemars derives it, for a tool with typed parameters: what a
        /// schema stated at compile time must equal (compared by a test).
        pub derived_schema: Option<fn() -> serde_json::Value>,
        /// The canonical text of the input schema as the canonical dump writes it in place
        /// (indented for its depth there, no trailing newline; `#[tool]` wrote it at compile
        /// time), when the built schema is the one it was written from. The dump copies it (a
        /// test compares it with the dump of the schema).
        pub canonical_input: Option<fn() -> Option<&'static str>>,
    }

    inventory::collect!(ToolRegistration);
}

use registration::ToolRegistration;

/// A registered tool: its definition and its compiled argument validator.
#[derive(Clone)]
pub struct RegisteredTool {
    def: ToolDef,
    validator: Arc<validators::Slot>,
    output_validator: Option<Arc<validators::Slot>>,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("def", &self.def)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// The definition.
    pub fn def(&self) -> &ToolDef {
        &self.def
    }

    /// The declaration.
    pub fn decl(&self) -> &ToolDecl {
        &self.def.decl
    }

    /// The argument validator: the built-in checker or the general engine (see
    /// [`Validator`](crate::schema::Validator)), compiled at registry build or on first use
    /// (only when the registry proved at build that the compile succeeds, or for the general
    /// engine, whose schemas passed the meta-schema at build).
    pub fn validator(&self) -> &crate::schema::validate::Validator {
        validators::get(&self.validator, &self.def.decl.input_schema)
    }

    /// The output validator, made as [`validator`](Self::validator) is; `None` without an
    /// output schema. The executor checks every successful output against it before the
    /// output leaves.
    pub fn output_validator(&self) -> Option<&crate::schema::validate::Validator> {
        let slot = self.output_validator.as_deref()?;
        let schema = self.def.decl.output_schema.as_ref()?;
        Some(validators::get(slot, schema))
    }
}

/// Collects tools and builds a [`Registry`].
#[derive(Default)]
pub struct RegistryBuilder {
    defs: Vec<ToolDef>,
    // Set by `with_inventory*`: an empty result then means the linker dropped the tools.
    inventory: bool,
}

impl RegistryBuilder {
    /// Add every `#[tool]` linked into the program.
    pub fn with_inventory(self) -> Self {
        self.with_inventory_where(|_| true)
    }

    /// Add the `#[tool]`s whose module path satisfies `keep` (e.g. one crate's tools).
    ///
    /// A registry built from the inventory must not be empty: `build()` then fails with
    /// [`RegistryError::NoToolsLinked`].
    pub fn with_inventory_where(mut self, keep: impl Fn(&str) -> bool) -> Self {
        self.inventory = true;
        // Sized once: a declaration is large, and each doubling would move every one so far.
        self.defs
            .reserve(inventory::iter::<ToolRegistration>.into_iter().count());
        for reg in inventory::iter::<ToolRegistration> {
            if keep(reg.module_path) {
                let mut def = (reg.build)();
                def.canonical_input = reg.canonical_input.and_then(|text| text());
                self.defs.push(def);
            }
        }
        self
    }

    /// Add a tool (dynamic or built by hand).
    pub fn tool(mut self, def: ToolDef) -> Self {
        self.defs.push(def);
        self
    }

    /// Check every tool, reject duplicates, compile validators. The first tool, in the order
    /// added, that is a duplicate or breaks a rule is the error. A registry that asked for the
    /// inventory and got no tool at all is refused ([`RegistryError::NoToolsLinked`]); one built
    /// only from [`tool`](Self::tool) calls may be empty.
    pub fn build(self) -> Result<Registry, RegistryError> {
        if self.inventory && self.defs.is_empty() {
            return Err(RegistryError::NoToolsLinked);
        }
        let mut tools: BTreeMap<String, RegisteredTool> = BTreeMap::new();
        for def in self.defs {
            if let Some(existing) = tools.get(&def.decl.name) {
                return Err(RegistryError::DuplicateName {
                    name: def.decl.name.clone(),
                    first: existing.def.decl.source.clone(),
                    second: def.decl.source.clone(),
                });
            }
            let dynamic = def.is_dynamic();
            let (validator, output_validator) = check_and_prepare(&def.decl, dynamic)?;
            tools.insert(
                def.decl.name.clone(),
                RegisteredTool {
                    def,
                    validator: Arc::new(validator),
                    output_validator: output_validator.map(Arc::new),
                },
            );
        }
        Ok(Registry {
            tools,
            dump: OnceLock::new(),
            fingerprint: OnceLock::new(),
        })
    }
}

/// The set of tools a program offers: built once, immutable, fingerprinted.
#[derive(Clone)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
    // Made on first use: a program that never dumps, pins or audits does not pay for them at
    // start-up. The registry is immutable, so they cannot go stale.
    dump: OnceLock<Vec<u8>>,
    fingerprint: OnceLock<String>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("fingerprint", &self.fingerprint())
            .finish()
    }
}

impl Registry {
    /// Start building a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Every `#[tool]` linked into the program; fails with [`RegistryError::NoToolsLinked`] when
    /// there is none (see there for the usual cause and the one-line fix).
    pub fn from_inventory() -> Result<Registry, RegistryError> {
        Registry::builder().with_inventory().build()
    }

    /// Look a tool up by its exact name.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Every tool, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// `true` when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The canonical dump: sorted keys, two-space indent, trailing newline. One registry, one
    /// byte sequence.
    pub fn canonical_dump(&self) -> &[u8] {
        self.dump.get_or_init(|| {
            dump::canonical_dump_of(
                self.tools
                    .values()
                    .map(|t| (t.decl(), t.def.canonical_input)),
            )
        })
    }

    /// SHA-256 (lowercase hex) of the canonical dump.
    pub fn fingerprint(&self) -> &str {
        self.fingerprint
            .get_or_init(|| hex::encode(Sha256::digest(self.canonical_dump())))
    }

    /// Record the fingerprint a pin check found: the SHA-256 of a file holding exactly the
    /// canonical dump (no effect once it is known).
    pub(crate) fn know_fingerprint(&self, sha256_hex: String) {
        let _ = self.fingerprint.set(sha256_hex);
    }
}

#[cfg(test)]
mod tests;
