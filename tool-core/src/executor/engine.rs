//! The [`Executor`] itself: the registry it serves, its workspace guard, its configuration and
//! its sessions. The steps a call goes down are in [`pipeline`](super::pipeline).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::config::ExecutorConfig;
use super::session::Session;
use crate::gate::{ScanMode, ScriptGate};
use crate::guard::path::{PathGuard, WorkspaceError};
use crate::registry::Registry;
use crate::resource::{MissingResource, Resources};
use crate::sandbox::setup::Confinement;

/// The executor could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorError {
    /// The workspace root does not exist or is not a directory.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// A tool takes a `State<T>` whose resource is not registered on the configuration.
    #[error("{message}")]
    MissingResources {
        /// Each tool and resource type, in registry order.
        missing: Vec<MissingResource>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// Tools with scripts could not be confined by this program, and it says so before any
    /// call: e.g. `dispatch_helper` ran inside `#[tokio::main]` (use `#[tool_core::main]`).
    #[error("{message}")]
    SandboxUnavailable {
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A resource's sandbox grant is not valid (a relative path, `..`, `/`, a path that does not
    /// exist or overlaps the workspace, a bad host or port).
    #[error("{message}")]
    InvalidGrant {
        /// The resource type whose grant was refused.
        resource: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// Tools take scripts and no script gate judges them: without the `safety` feature there is
    /// no default gate, and unscanned scripts never run.
    #[error("{message}")]
    NoScriptGate {
        /// The tools that declare script arguments, in registry order.
        tools: Vec<String>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The default script gate (the scanner with its default policy) could not be built.
    #[error("the default script gate could not be built: {message}")]
    ScriptGate {
        /// The scanner's error.
        message: String,
    },
}

/// Runs tool calls of a [`Registry`] under an [`ExecutorConfig`]. Share it behind an `Arc`; it
/// keeps no per-conversation state itself (that lives in [`Session`]s).
pub struct Executor {
    pub(super) registry: Arc<Registry>,
    pub(super) guard: PathGuard,
    // The guard's root, shared with every call's context.
    pub(super) root: Arc<Path>,
    pub(super) config: ExecutorConfig,
    // Per capability class: the confined workers and the program launcher (see `crate::sandbox`).
    pub(super) confinement: Confinement,
    // The configuration's resources, shared with every call's context.
    pub(super) resources: Arc<Resources>,
    next_session: AtomicU64,
    next_call: AtomicU64,
    // Calls that took the typed path (`typed.rs`), for tests and diagnostics.
    typed_calls: AtomicU64,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("registry", &self.registry)
            .field("workspace", &self.guard.root())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The script gate a configuration without one gets: none when no tool takes scripts; the
/// scanner with its default policy under the `safety` feature; otherwise a refusal naming it.
fn default_script_gate(registry: &Registry) -> Result<Option<Arc<dyn ScriptGate>>, ExecutorError> {
    let tools: Vec<String> = registry
        .iter()
        .filter(|t| !t.decl().script_args.is_empty())
        .map(|t| t.decl().name.clone())
        .collect();
    if tools.is_empty() {
        return Ok(None);
    }
    scanner_gate(tools)
}

#[cfg(feature = "safety")]
fn scanner_gate(_tools: Vec<String>) -> Result<Option<Arc<dyn ScriptGate>>, ExecutorError> {
    let gate = crate::safety::ScannerGate::with_default_policy().map_err(|e| {
        ExecutorError::ScriptGate {
            message: e.to_string(),
        }
    })?;
    Ok(Some(Arc::new(gate)))
}

#[cfg(not(feature = "safety"))]
fn scanner_gate(tools: Vec<String>) -> Result<Option<Arc<dyn ScriptGate>>, ExecutorError> {
    let names = tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!(
        "{names} take{s} scripts and no script gate is configured: enable tool-core's `safety` \
         feature (`tool-core = {{ version = \"0.1\", features = [\"safety\"] }}`; the static \
         scanner becomes the default gate), or set one with `ExecutorConfig::script_gate`",
        s = if tools.len() == 1 { "s" } else { "" },
    );
    Err(ExecutorError::NoScriptGate { tools, message })
}

impl Executor {
    /// Build an executor; the workspace root is canonicalized here and must be a directory.
    ///
    /// Confinement is set up here too (see [`crate::sandbox`]): the kernel is probed, a pool of
    /// confined workers is started for each capability class the registry's tools use, and the
    /// helper for spawned programs is found. None of it fails the build: what cannot be confined
    /// under [`Mode::Required`](crate::sandbox::Mode::Required) is refused per call
    /// (`sandbox_unavailable`) or, for in-process handlers, run with the static guards after a
    /// `tracing::warn!` here.
    ///
    /// It fails when a tool takes a [`State<T>`](crate::State) whose resource the configuration
    /// does not hold ([`ExecutorError::MissingResources`], naming each tool and type), so a
    /// call never finds its resource missing.
    ///
    /// Tools that take scripts need a script gate unless the scan is off
    /// ([`ScanMode::Off`](super::ScanMode::Off)). With the `safety` feature, a configuration
    /// without one gets the scanner with its default policy, judged against this executor's
    /// workspace; without the feature it fails here ([`ExecutorError::NoScriptGate`], naming
    /// the feature), before any call or approval.
    pub fn new(registry: Arc<Registry>, mut config: ExecutorConfig) -> Result<Self, ExecutorError> {
        let missing = crate::resource::missing(
            registry
                .iter()
                .map(|t| (t.decl().name.as_str(), t.def().resources())),
            &config.resources,
        );
        if !missing.is_empty() {
            let message = crate::resource::missing_message(&missing, &config.resources);
            return Err(ExecutorError::MissingResources { missing, message });
        }
        let resources = Arc::new(config.resources.clone());
        let guard = PathGuard::new(&config.workspace)?;
        let root: Arc<Path> = Arc::from(guard.root());
        if config.script_gate.is_none() && config.scan == ScanMode::On {
            config.script_gate = default_script_gate(&registry)?;
        }
        if let Some(bound) = config
            .script_gate
            .as_ref()
            .and_then(|g| g.in_workspace(&root))
        {
            config.script_gate = Some(bound);
        }
        if let Some(message) = crate::sandbox::setup::startup_refusal(&registry, &config.sandbox) {
            return Err(ExecutorError::SandboxUnavailable { message });
        }
        let grants = crate::sandbox::tool_grants::tool_grants(&registry, &config.resources, &root)
            .map_err(|e| ExecutorError::InvalidGrant {
                resource: e.resource,
                message: e.message,
            })?;
        let confinement = Confinement::new(&root, &registry, &config.sandbox, &grants);
        Ok(Executor {
            registry,
            guard,
            root,
            config,
            confinement,
            resources,
            next_session: AtomicU64::new(1),
            next_call: AtomicU64::new(1),
            typed_calls: AtomicU64::new(0),
        })
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The sandbox mode in force (see [`crate::sandbox`]).
    pub fn sandbox_mode(&self) -> crate::sandbox::Mode {
        self.confinement.mode
    }

    /// The canonical workspace root.
    pub fn workspace(&self) -> &Path {
        self.guard.root()
    }

    /// Start a session with a fresh id (`session-N`).
    pub fn new_session(&self) -> Arc<Session> {
        let n = self.next_session.fetch_add(1, Ordering::Relaxed);
        Arc::new(Session::new(
            format!("session-{n}"),
            self.config.session_output_budget,
        ))
    }

    /// Start a session with the caller's id (e.g. a conversation id).
    pub fn session_with_id(&self, id: impl Into<String>) -> Arc<Session> {
        Arc::new(Session::new(id.into(), self.config.session_output_budget))
    }

    /// Cancel one in-flight call of `session` (by id), or all of them (`None`).
    pub fn cancel(&self, session: &Session, call_id: Option<&str>) {
        match call_id {
            Some(id) => {
                session.cancel_call(id);
            }
            None => session.cancel_all(),
        }
    }

    /// The call id: the given one (the caller's or the provider's), or a fresh `call-N`.
    /// How many calls took the typed path: arguments read straight into a `#[tool]`'s
    /// parameter types (see `Executor::execute`). Diagnostics only.
    #[doc(hidden)]
    pub fn typed_calls(&self) -> u64 {
        self.typed_calls.load(Ordering::Relaxed)
    }

    pub(super) fn count_typed(&self) {
        self.typed_calls.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn call_id(&self, given: Option<String>) -> String {
        given.unwrap_or_else(|| numbered_id(self.next_call.fetch_add(1, Ordering::Relaxed)))
    }
}

/// `call-N`, written without the formatting machinery (this runs on every call without an id).
fn numbered_id(n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        // `rest % 10` is a single digit.
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut id = String::with_capacity(5 + digits.len() - at);
    id.push_str("call-");
    for &d in &digits[at..] {
        id.push(char::from(d));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::numbered_id;

    #[test]
    fn numbered_ids_match_the_formatted_ones() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(numbered_id(n), format!("call-{n}"));
        }
    }
}
