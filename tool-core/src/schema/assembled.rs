//! The input schema of a `#[tool]` whose parameters are partly of user types, put together per
//! parameter: the nodes `#[tool]` stated for the common types, schemars for the others.
//!
//! schemars' share is a function of the user types alone, in order: one generator, fresh for each
//! tool, sees nothing but them (the stated nodes never touch it). So the nodes and `$defs` made
//! for one sequence of user types are kept, process-wide, and the other tools with that sequence
//! share them instead of running schemars again; only their descriptions are their own. Tools of
//! one program often share argument types (a filter, a page, a mode enum). A sequence is known by
//! its types' [`TypeId`]s, not by their `schema_id`s: two types may share one (a hand-written
//! `JsonSchema` keeps its name as its id unless it says otherwise; two versions of one crate name
//! their types alike), and each tool must be checked against its own types' schemas.
//!
//! A schema without declared defaults is not even put together at start-up ([`Assembled`]): the
//! registry checks the parts schemars made once per sequence, `#[tool]` vouches for the nodes it
//! stated, and the canonical dump is written from the parts (the stated nodes' text written at
//! compile time, the sequence's `$defs` text written once). The value is put together on first
//! use, from the same parts.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::canonical::Pretty;
use super::integers::state_integer_bounds;

/// The generator of every `#[tool]` schema: Draft 2020-12, `$defs`.
pub(crate) fn generator() -> SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12().into_generator()
}

/// The types of a tool's user-typed parameters, in order.
type Key = Vec<TypeId>;

/// What schemars made for one sequence of user types: each type's node as `subschema_for`
/// returned it (no description yet), and the `$defs` they brought, integer bounds stated.
struct Derived {
    nodes: Vec<Schema>,
    /// A schema of the same root as a tool's: the nodes as its properties (each described, as
    /// a tool may describe them) and the `$defs`, when there are any. What the registry's
    /// checks see of the parts.
    probe: Value,
    /// Decided once: whether the registry may take these parts on their word (`Some`), with
    /// the `$defs` written canonically at the depth of a tool's `$defs` in the dump.
    vouched: OnceLock<Option<Box<str>>>,
}

/// Every sequence met, and what schemars made for it.
fn cache() -> &'static Mutex<HashMap<Key, Arc<Derived>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Derived>>>> = OnceLock::new();
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
    id: TypeId,
    make: fn(&mut SchemaGenerator) -> Schema,
}

/// One parameter of a schema planned for [`Assembled`]: its name, whether it is required, and
/// the canonical text `#[tool]` wrote for its stated node (`None`: a user type's, made by
/// schemars; the `n`th such part has the `n`th derived node).
#[derive(Clone, Copy)]
struct Part {
    name: &'static str,
    required: bool,
    text: Option<&'static str>,
}

/// The input schema of a tool assembled per parameter. The result is what schemars makes of the
/// whole argument struct (`__private::input_schema`), key for key (a differential test compares
/// the two): the root's keys in the order schemars and the removal of `title` leave them.
pub struct ArgsSchema {
    properties: Map<String, Value>,
    required: Vec<Value>,
    pending: Vec<Pending>,
    /// `Some` while only planning ([`Assembled`]): each step records its part, nothing is
    /// built.
    plan: Option<Vec<Part>>,
}

impl ArgsSchema {
    /// An assembly for `params` parameters.
    pub fn new(params: usize) -> Self {
        ArgsSchema {
            properties: Map::with_capacity(params),
            required: Vec::with_capacity(params),
            pending: Vec::new(),
            plan: None,
        }
    }

    /// A plan: the steps record their parts and build nothing.
    fn planning() -> Self {
        ArgsSchema {
            properties: Map::new(),
            required: Vec::new(),
            pending: Vec::new(),
            plan: Some(Vec::new()),
        }
    }

    /// A parameter whose node `#[tool]` stated.
    pub fn stated(&mut self, name: &str, required: bool, node: Value) {
        self.properties.insert(name.to_owned(), node);
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
    }

    /// A parameter whose node `#[tool]` stated, in a schema put together on first use: `text`
    /// is the node's canonical text as the dump writes it in place (at the depth of a tool's
    /// input schema's properties); `node` builds it, only when the schema is built.
    pub fn stated_part(
        &mut self,
        name: &'static str,
        required: bool,
        text: &'static str,
        node: impl FnOnce() -> Value,
    ) {
        match &mut self.plan {
            Some(plan) => plan.push(Part {
                name,
                required,
                text: Some(text),
            }),
            None => self.stated(name, required, node()),
        }
    }

    /// A parameter of a user type `T`, as schemars' derive adds a field: required unless an
    /// `Option`; its node comes in `finish`, from the shared generator.
    fn derived<T: JsonSchema + ?Sized + 'static>(
        &mut self,
        name: &'static str,
        description: &'static str,
    ) {
        // What the derive asks to leave a field out of `required`.
        #[allow(clippy::used_underscore_items)]
        let required = !T::_schemars_private_is_option();
        if let Some(plan) = &mut self.plan {
            plan.push(Part {
                name,
                required,
                text: None,
            });
        } else {
            self.properties.insert(name.to_owned(), Value::Null);
            if required {
                self.required.push(Value::String(name.to_owned()));
            }
        }
        self.pending.push(Pending {
            name,
            description,
            id: TypeId::of::<T>(),
            make: SchemaGenerator::subschema_for::<T>,
        });
    }

    /// The finished input schema.
    pub fn finish(self) -> Value {
        let derived = (!self.pending.is_empty()).then(|| derive(&self.pending));
        self.finish_with(derived.as_deref())
    }

    /// The finished input schema, its user types' nodes and `$defs` copied from `derived`
    /// (what schemars made for this schema's sequence of user types).
    fn finish_with(self, derived: Option<&Derived>) -> Value {
        let ArgsSchema {
            mut properties,
            required,
            pending,
            plan: _,
        } = self;
        let defs = derived.map(|derived| {
            for (p, node) in pending.iter().zip(&derived.nodes) {
                if let Some(slot) = properties.get_mut(p.name) {
                    *slot = described(node, p.description);
                }
            }
            derived.defs().cloned()
        });
        root(properties, required, defs.flatten())
    }
}

/// A tool's input schema root, its keys in the order schemars and the removal of `title` leave
/// them: `required` and `$defs` only when not empty.
fn root(
    properties: Map<String, Value>,
    required: Vec<Value>,
    defs: Option<Map<String, Value>>,
) -> Value {
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
    root.insert("$schema".to_owned(), Value::String(DRAFT.to_owned()));
    Value::Object(root)
}

/// A user type's node as a tool's property: its description inserted (when it has one), its
/// integer bounds stated.
fn described(node: &Schema, description: &str) -> Value {
    let mut node = node.clone();
    if !description.is_empty() {
        node.insert(
            "description".to_owned(),
            Value::String(description.to_owned()),
        );
    }
    let mut node = node.to_value();
    state_integer_bounds(&mut node);
    node
}

/// schemars' nodes and `$defs` for the pending parameters' types, made once per sequence and
/// shared from then on.
fn derive(pending: &[Pending]) -> Arc<Derived> {
    let key: Key = pending.iter().map(|p| p.id).collect();
    if let Some(kept) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Arc::clone(kept);
    }
    // Made outside the lock: a type's `json_schema` is user code. Two threads that make the
    // same sequence at once make the same thing; the first kept stays, and both use it.
    let mut generator = generator();
    let nodes = pending.iter().map(|p| (p.make)(&mut generator)).collect();
    let mut defs = generator.take_definitions(false);
    defs.values_mut().for_each(state_integer_bounds);
    let made = Arc::new(Derived::new(nodes, defs));
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(cache.entry(key).or_insert(made))
}

/// The URI of the Draft every `#[tool]` schema declares.
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

impl Derived {
    fn new(nodes: Vec<Schema>, defs: Map<String, Value>) -> Derived {
        let properties: Map<String, Value> = (nodes.iter().enumerate())
            .map(|(i, node)| (i.to_string(), described(node, "a parameter")))
            .collect();
        Derived {
            nodes,
            probe: root(properties, Vec::new(), Some(defs)),
            vouched: OnceLock::new(),
        }
    }

    /// The `$defs`, when there are any.
    fn defs(&self) -> Option<&Map<String, Value>> {
        self.probe.get("$defs").and_then(Value::as_object)
    }

    /// Whether `vouch` accepts these parts (given [`Derived::probe`]), asked once per
    /// sequence. `Some`: the `$defs`' canonical text (empty when there are none).
    fn vouched(&self, vouch: fn(&Value) -> bool) -> Option<&str> {
        let text = self.vouched.get_or_init(|| {
            vouch(&self.probe).then(|| {
                let Some(defs) = self.probe.get("$defs") else {
                    return Box::default();
                };
                // A tool's `$defs` in the dump: the root, `tools`, the tool, its input schema.
                let mut w = Pretty::at_depth(4, 256);
                w.value(defs);
                w.into_text().into_boxed_str()
            })
        });
        text.as_deref()
    }
}

/// The input schema of a `#[tool]` with user-typed parameters and no declared default, put
/// together on first use: planned at start-up (each parameter's name, whether it is required,
/// the text `#[tool]` wrote for a stated node), with what schemars made for its sequence of user
/// types. The canonical dump writes it from these parts; the value is built by `assemble` from
/// them, the same parts, so what was pinned is what is checked.
pub(crate) struct Assembled {
    assemble: fn(&mut ArgsSchema),
    parts: Vec<Part>,
    /// The derived parts' descriptions, in order.
    descriptions: Vec<&'static str>,
    derived: Arc<Derived>,
}

impl Assembled {
    /// Plan the schema `assemble` puts together. `Err`: the schema built now, because `vouch`
    /// does not accept the parts schemars made (the registry then checks the whole schema).
    pub(crate) fn plan(
        assemble: fn(&mut ArgsSchema),
        vouch: fn(&Value) -> bool,
    ) -> Result<Assembled, Value> {
        let mut plan = ArgsSchema::planning();
        assemble(&mut plan);
        let parts = plan.plan.unwrap_or_default();
        let derived = derive(&plan.pending);
        if derived.vouched(vouch).is_none() {
            let mut schema = ArgsSchema::new(parts.len());
            assemble(&mut schema);
            return Err(schema.finish_with(Some(&derived)));
        }
        Ok(Assembled {
            assemble,
            parts,
            descriptions: plan.pending.iter().map(|p| p.description).collect(),
            derived,
        })
    }

    /// The schema's value.
    pub(crate) fn value(&self) -> Value {
        let mut schema = ArgsSchema::new(self.parts.len());
        (self.assemble)(&mut schema);
        schema.finish_with(Some(&self.derived))
    }

    /// Write the schema canonically, as `w.value(&self.value())` would, at the depth of a tool's
    /// input schema in the dump (the only depth the stated nodes' texts were written for).
    /// `false`, with nothing written, at any other depth.
    pub(crate) fn write_canonical(&self, w: &mut Pretty) -> bool {
        let Some(defs) = self.derived.vouched.get().and_then(|t| t.as_deref()) else {
            return false;
        };
        if w.depth() != 3 {
            return false;
        }
        w.open(b'{');
        let defs_written = self.derived.defs().is_some();
        if defs_written {
            w.key(true, "$defs");
            w.raw(defs);
        }
        w.key(!defs_written, "$schema");
        w.string(DRAFT);
        w.key(false, "additionalProperties");
        w.bool(false);
        w.key(false, "properties");
        // Each part with its derived node's index, sorted by name.
        let mut sorted: Vec<(Part, usize)> = Vec::with_capacity(self.parts.len());
        let mut derived = 0;
        for part in &self.parts {
            sorted.push((*part, derived));
            derived += usize::from(part.text.is_none());
        }
        sorted.sort_unstable_by(|a, b| a.0.name.cmp(b.0.name));
        w.open(b'{');
        for (i, (part, d)) in sorted.iter().enumerate() {
            w.key(i == 0, part.name);
            match part.text {
                Some(text) => w.raw(text),
                None => w.value(&described(&self.derived.nodes[*d], self.descriptions[*d])),
            }
        }
        w.close(b'}', !sorted.is_empty());
        if self.parts.iter().any(|p| p.required) {
            w.key(false, "required");
            w.strings(self.parts.iter().filter(|p| p.required).map(|p| p.name));
        }
        w.key(false, "type");
        w.string("object");
        w.close(b'}', true);
        true
    }
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

// (`'static`: a `#[tool]`'s parameters are fields of an argument struct without lifetimes.)
impl<T: JsonSchema + ?Sized + 'static> DerivedProperty for SchemaOf<T> {
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
