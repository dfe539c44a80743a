//! The input schema of a `#[tool]` whose parameters are partly of user types, put together per
//! parameter: the nodes `#[tool]` stated for the common types, schemars for the others.
//!
//! schemars' share is a function of the user types alone, in order: one generator, fresh for each
//! tool, sees nothing but them (the stated nodes never touch it), and names, deduplicates and
//! orders `$defs` from their `schema_id`s, which are what schemars itself takes a type's identity
//! to be. So the nodes and `$defs` made for one sequence of user types are kept, process-wide, and
//! the other tools with that sequence copy them instead of running schemars again; only their
//! descriptions are their own. Tools of one program often share argument types (a filter, a
//! page, a mode enum); a copy costs about half of what schemars does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::integers::state_integer_bounds;

/// The generator of every `#[tool]` schema: Draft 2020-12, `$defs`.
pub(crate) fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12().into_generator()
}

/// The `schema_id`s of a tool's user-typed parameters, in order.
type Key = Vec<Cow<'static, str>>;

/// What schemars made for one sequence of user types: each type's node as `subschema_for`
/// returned it (no description yet), and the `$defs` they brought, integer bounds stated.
#[derive(Clone)]
struct Derived {
    nodes: Vec<Schema>,
    defs: Map<String, Value>,
}

/// Every sequence met: `None` while only one tool had it, then what schemars made for it.
fn cache() -> &'static Mutex<HashMap<Key, Option<Arc<Derived>>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<Arc<Derived>>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Forgets every sequence made so far, so the next tool of each runs schemars again (what a
/// program's first registry pays; the start-up bench measures that).
pub fn forget_derived_schemas() {
    cache().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A user-typed parameter waiting for its node.
struct Pending {
    /// Its place among the properties (a `null` there until `finish`).
    name: &'static str,
    description: &'static str,
    id: Cow<'static, str>,
    make: fn(&mut SchemaGenerator) -> Schema,
}

/// The input schema of a tool assembled per parameter. The result is what schemars makes of the
/// whole argument struct (`__private::input_schema`), key for key (a differential test compares
/// the two): the root's keys in the order schemars and the removal of `title` leave them.
pub struct ArgsSchema {
    properties: Map<String, Value>,
    required: Vec<Value>,
    pending: Vec<Pending>,
}

impl ArgsSchema {
    /// An assembly for `params` parameters.
    pub fn new(params: usize) -> Self {
        ArgsSchema {
            properties: Map::with_capacity(params),
            required: Vec::with_capacity(params),
            pending: Vec::new(),
        }
    }

    /// A parameter whose node `#[tool]` stated.
    pub fn stated(&mut self, name: &str, required: bool, node: Value) {
        self.properties.insert(name.to_owned(), node);
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
    }

    /// A parameter of a user type `T`, as schemars' derive adds a field: required unless an
    /// `Option`; its node comes in `finish`, from the shared generator.
    fn derived<T: JsonSchema + ?Sized>(&mut self, name: &'static str, description: &'static str) {
        self.properties.insert(name.to_owned(), Value::Null);
        // What the derive asks to leave a field out of `required`.
        #[allow(clippy::used_underscore_items)]
        if !T::_schemars_private_is_option() {
            self.required.push(Value::String(name.to_owned()));
        }
        self.pending.push(Pending {
            name,
            description,
            id: T::schema_id(),
            make: SchemaGenerator::subschema_for::<T>,
        });
    }

    /// The finished input schema.
    pub fn finish(self) -> Value {
        let ArgsSchema {
            mut properties,
            required,
            pending,
        } = self;
        let derived = (!pending.is_empty()).then(|| derive(&pending));
        let defs = derived.map(|Derived { nodes, defs }| {
            for (p, mut node) in pending.iter().zip(nodes) {
                if !p.description.is_empty() {
                    node.insert(
                        "description".to_owned(),
                        Value::String(p.description.to_owned()),
                    );
                }
                let mut node = node.to_value();
                state_integer_bounds(&mut node);
                if let Some(slot) = properties.get_mut(p.name) {
                    *slot = node;
                }
            }
            defs
        });
        let mut root = Map::with_capacity(6);
        root.insert("type".to_owned(), Value::String("object".to_owned()));
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
        root.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            root.insert("required".to_owned(), Value::Array(required));
        }
        if let Some(defs) = defs.filter(|d| !d.is_empty()) {
            root.insert("$defs".to_owned(), Value::Object(defs));
        }
        root.insert(
            "$schema".to_owned(),
            Value::String("https://json-schema.org/draft/2020-12/schema".to_owned()),
        );
        Value::Object(root)
    }
}

/// schemars' nodes and `$defs` for the pending parameters' types. A sequence is kept from its
/// second tool on: a copy costs about half of what schemars does, so a sequence met once is not
/// copied into the cache at all (a program whose tools share no type pays a look-up per tool).
fn derive(pending: &[Pending]) -> Derived {
    let key: Key = pending.iter().map(|p| p.id.clone()).collect();
    let keep = {
        let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(&key) {
            Some(Some(kept)) => Err(Arc::clone(kept)),
            Some(None) => Ok(true),
            None => {
                cache.insert(key.clone(), None);
                Ok(false)
            }
        }
    };
    // Copied outside the lock.
    let keep = match keep {
        Err(kept) => return Derived::clone(&kept),
        Ok(keep) => keep,
    };
    // Made outside the lock: a type's `json_schema` is user code. Two threads that make the
    // same sequence at once make the same thing; the first kept stays.
    let mut generator = generator();
    let nodes = pending.iter().map(|p| (p.make)(&mut generator)).collect();
    let mut defs = generator.take_definitions(false);
    defs.values_mut().for_each(state_integer_bounds);
    let made = Derived { nodes, defs };
    if keep {
        let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
        let slot = cache.entry(key).or_insert(None);
        if slot.is_none() {
            *slot = Some(Arc::new(made.clone()));
        }
    }
    made
}

/// Names a parameter type for [`DerivedProperty`] (or, without `JsonSchema`, [`NoSchema`]).
pub struct SchemaOf<T: ?Sized>(std::marker::PhantomData<T>);

impl<T: ?Sized> SchemaOf<T> {
    /// The type's marker.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        SchemaOf(std::marker::PhantomData)
    }
}

/// A parameter of a type with `JsonSchema`, as schemars' derive adds a field: its schema from
/// the shared generator, its description, required unless an `Option`.
pub trait DerivedProperty {
    /// Add the parameter `name` to `schema`.
    fn property(&self, schema: &mut ArgsSchema, name: &'static str, description: &'static str);
}

impl<T: JsonSchema + ?Sized> DerivedProperty for SchemaOf<T> {
    fn property(&self, schema: &mut ArgsSchema, name: &'static str, description: &'static str) {
        schema.derived::<T>(name, description);
    }
}

/// The method `#[tool]` calls finds this one only when the type has no `JsonSchema` (the
/// autoref of the call reaches it after [`DerivedProperty`]). The expansion does not compile
/// then: the argument struct's derive reports the missing `JsonSchema`, once, and this stays
/// silent instead of reporting it a second time.
pub trait NoSchema {
    /// Nothing: never run.
    fn property(&self, _: &mut ArgsSchema, _: &'static str, _: &'static str) {}
}

impl<T: ?Sized> NoSchema for &SchemaOf<T> {}
