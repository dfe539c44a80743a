//! Resources for tools: shared, typed values the application owns (a database pool, an HTTP
//! client, its configuration) that `#[tool]` functions take as a [`State<T>`] parameter.
//!
//! The application registers each resource once, on the executor's configuration
//! ([`ExecutorConfig::resource`](crate::ExecutorConfig::resource)); every `#[tool]` records the
//! types of its `State<T>` parameters in its registry entry, so
//! [`Executor::new`](crate::Executor::new) refuses to start when a tool's resource is missing,
//! naming the tool and the type. A call never finds a resource missing.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//! use tool_core::{tool, State};
//!
//! /// The application's shared counter.
//! #[derive(Default)]
//! pub struct Counter(AtomicU64);
//!
//! /// Count one more visit.
//! #[tool(risk = "mutation")]
//! fn visit(State(counter): State<Arc<Counter>>) -> String {
//!     (counter.0.fetch_add(1, Ordering::Relaxed) + 1).to_string()
//! }
//!
//! let config = tool_core::ExecutorConfig::new(".").resource(Arc::new(Counter::default()));
//! # let _ = config;
//! ```
//!
//! A resource that lives outside the workspace (a database file, a socket, a server) declares
//! what its tools need from the kernel sandbox when it is registered
//! ([`ExecutorConfig::resource_with_grants`](crate::ExecutorConfig::resource_with_grants) with
//! [`Grants`]): every tool taking it is confined with those grants added, and nothing more.
//!
//! `State<T>` parameters are not arguments: the model never sees them (they are not in the
//! schema) and cannot choose them. Each call gets a clone of the registered value (share one
//! instance through an `Arc`); concurrent calls and sync tools, which run on confined worker
//! threads, hold it at once, so it must be `Clone + Send + Sync + 'static`.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::sandbox::grant::Grants;

/// A resource registered on the executor, as a `#[tool]` parameter: `db: State<Db>` (or
/// `State(db): State<Db>`). Each call gets a clone of the registered value, as with axum's
/// `State`: a value that is expensive to clone or must be one shared instance goes in an `Arc`
/// (`State<Arc<Db>>`, registered as `resource(Arc::new(db))`); handle types such as connection
/// pools and HTTP clients are cheap clones of one shared value already.
#[derive(Clone, Copy, Default)]
pub struct State<T: Clone + Send + Sync + 'static>(pub T);

impl<T: Clone + Send + Sync + 'static> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone + Send + Sync + fmt::Debug + 'static> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&self.0).finish()
    }
}

/// The type of a resource a tool takes: what [`Executor::new`](crate::Executor::new) checks
/// is registered.
#[derive(Clone, Copy)]
pub struct ResourceType {
    id: TypeId,
    name: &'static str,
}

impl ResourceType {
    /// The resource type `T`.
    pub fn of<T: ?Sized + 'static>() -> Self {
        ResourceType {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
        }
    }

    /// The type's name (`std::any::type_name`).
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl PartialEq for ResourceType {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for ResourceType {}

impl fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The resources registered on an executor, one value per type. Cloning shares the values.
#[derive(Clone, Default)]
pub struct Resources {
    // Each value is a `T`, keyed by `T`'s id; a call gets a clone.
    map: HashMap<TypeId, Entry>,
}

#[derive(Clone)]
struct Entry {
    name: &'static str,
    value: Arc<dyn Any + Send + Sync>,
    /// What the tools that take it need from the sandbox.
    grants: Arc<Grants>,
}

impl Resources {
    /// No resources.
    pub fn new() -> Self {
        Resources::default()
    }

    /// Register `value` as the resource of type `T` (replacing an earlier one of that type).
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.insert_with_grants(value, Grants::new());
    }

    /// Register `value` as the resource of type `T`, with what the tools that take it need from
    /// the kernel sandbox (paths outside the workspace, UNIX sockets, TCP ports; see
    /// [`Grants`]). They are checked when the executor starts.
    pub fn insert_with_grants<T: Clone + Send + Sync + 'static>(
        &mut self,
        value: T,
        grants: Grants,
    ) {
        let ty = ResourceType::of::<T>();
        self.map.insert(
            ty.id,
            Entry {
                name: ty.name,
                value: Arc::new(value),
                grants: Arc::new(grants),
            },
        );
    }

    /// Every resource's type name and grants.
    pub(crate) fn all_grants(&self) -> impl Iterator<Item = (&'static str, &Grants)> {
        self.map.values().map(|e| (e.name, &*e.grants))
    }

    /// What the resource of this type was registered with for the sandbox (`None`: not
    /// registered).
    pub fn grants(&self, ty: ResourceType) -> Option<&Grants> {
        self.map.get(&ty.id).map(|e| &*e.grants)
    }

    /// Add every resource of `other`, replacing those of the same types.
    pub fn extend(&mut self, other: &Resources) {
        for (id, entry) in &other.map {
            self.map.insert(*id, entry.clone());
        }
    }

    /// The resource of type `T`, if registered.
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<State<T>> {
        let entry = self.map.get(&TypeId::of::<T>())?;
        entry.value.downcast_ref::<T>().cloned().map(State)
    }

    /// Whether a resource of this type is registered.
    pub fn contains(&self, ty: ResourceType) -> bool {
        self.map.contains_key(&ty.id)
    }

    /// The names of the registered types, sorted.
    pub fn type_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.map.values().map(|e| e.name).collect();
        names.sort_unstable();
        names
    }

    /// How many resources are registered.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// `true` when none are.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.type_names()).finish()
    }
}

/// A tool whose resource is not registered (see [`Executor::new`](crate::Executor::new)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingResource {
    /// The tool's name.
    pub tool: String,
    /// The type of its `State<T>` parameter's resource.
    pub resource: &'static str,
}

/// The resources `tools` take that `resources` does not hold, in tool order.
pub(crate) fn missing<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a [ResourceType])>,
    resources: &Resources,
) -> Vec<MissingResource> {
    let mut out = Vec::new();
    for (tool, needs) in tools {
        for ty in needs {
            if !resources.contains(*ty) {
                out.push(MissingResource {
                    tool: tool.to_owned(),
                    resource: ty.name,
                });
            }
        }
    }
    out
}

/// The message of a refused start: every missing resource, what is registered, and the fix.
pub(crate) fn missing_message(missing: &[MissingResource], resources: &Resources) -> String {
    let list: Vec<String> = missing
        .iter()
        .map(|m| {
            format!(
                "tool `{}` takes `State<{}>`, but no resource of type `{}` is registered",
                m.tool, m.resource, m.resource
            )
        })
        .collect();
    let registered = if resources.is_empty() {
        "none is registered".to_owned()
    } else {
        format!("registered: {}", resources.type_names().join(", "))
    };
    format!(
        "{} ({registered}); register it with `ExecutorConfig::resource(value)`, `Cli::resource` for the command line",
        list.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Clock: Send + Sync {
        fn now(&self) -> u64;
    }

    struct Fixed(u64);

    impl Clock for Fixed {
        fn now(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn values_are_found_by_type_and_cloned() {
        let mut r = Resources::new();
        r.insert(7u32);
        r.insert(String::from("cfg"));
        let shared: Arc<dyn Clock> = Arc::new(Fixed(42));
        r.insert(Arc::clone(&shared));
        assert_eq!(*r.get::<u32>().expect("u32"), 7);
        assert_eq!(&*r.get::<String>().expect("string"), "cfg");
        let clock = r.get::<Arc<dyn Clock>>().expect("Arc<dyn Clock>");
        assert_eq!(clock.now(), 42);
        assert!(Arc::ptr_eq(&clock.0, &shared));
        assert!(r.get::<u64>().is_none());
        // An `Arc<T>` is a resource of type `Arc<T>`, not `T`.
        r.insert(Arc::new(1u8));
        assert!(r.get::<u8>().is_none());
        assert!(r.get::<Arc<u8>>().is_some());
        r.insert(8u32);
        assert_eq!(*r.get::<u32>().expect("replaced"), 8);
        assert_eq!(r.len(), 4);
    }

    #[test]
    fn missing_names_the_tool_and_the_type() {
        let mut r = Resources::new();
        r.insert(1u32);
        let needs = [ResourceType::of::<u32>(), ResourceType::of::<String>()];
        let m = missing([("query", &needs[..])], &r);
        assert_eq!(
            m,
            [MissingResource {
                tool: "query".into(),
                resource: "alloc::string::String"
            }]
        );
        let msg = missing_message(&m, &r);
        assert!(
            msg.contains("tool `query` takes `State<alloc::string::String>`"),
            "{msg}"
        );
        assert!(msg.contains("registered: u32"), "{msg}");
    }
}
