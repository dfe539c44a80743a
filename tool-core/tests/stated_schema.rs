//! The input schemas `#[tool]` states at compile time are the schemas schemars derives.
//!
//! For parameters of the common types the macro states the finished schema; a tool with
//! parameters of other types has schemars make only those parameters' parts (and their `$defs`)
//! and states the rest; a `#[schemars(..)]` attribute or a title-like description, and any
//! parameter whose type is not the one its name suggests, leave the whole schema to schemars at
//! run time. Each registration also carries the schemars route alone, so this test compares,
//! byte for byte (keys in order), what every tool below declares with what schemars derives for
//! the whole argument struct. The corpus covers every type and attribute combination the macro
//! states, user types in every position beside them, and some it must leave to schemars.

// Full paths are part of what is tested.
#![allow(unused_qualifications)]
#![allow(clippy::too_many_arguments, clippy::fn_params_excessive_bools)]

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tool_core::{tool, ToolContext, WorkspacePath};

/// Every scalar.
#[tool(risk = "safe")]
fn scalars(
    a: String,
    b: bool,
    c: i8,
    d: i16,
    e: i32,
    f: i64,
    g: isize,
    h: u8,
    i: u16,
    j: u32,
    k: u64,
    l: usize,
    m: f32,
    n: f64,
    o: PathBuf,
) {
    let _ = (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
}

/// Every scalar, described.
///
/// # Arguments
/// * `a` - a string
/// * `b` - a boolean
/// * `c` - an i8
/// * `d` - an i16
/// * `e` - an i32
/// * `f` - an i64
/// * `g` - an isize
/// * `h` - a u8
/// * `i` - a u16
/// * `j` - a u32
/// * `k` - a u64
/// * `l` - a usize
/// * `m` - an f32
/// * `n` - an f64
/// * `o` - a path buffer, not a guarded one
#[tool(risk = "safe")]
fn scalars_described(
    a: String,
    b: bool,
    c: i8,
    d: i16,
    e: i32,
    f: i64,
    g: isize,
    h: u8,
    i: u16,
    j: u32,
    k: u64,
    l: usize,
    m: f32,
    n: f64,
    o: PathBuf,
) {
    let _ = (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
}

/// Every scalar as an option, every other one described.
///
/// # Arguments
/// * `a` - a string
/// * `c` - an i8
/// * `e` - an i32
/// * `g` - an isize
/// * `i` - a u16
/// * `k` - a u64
/// * `m` - an f32
/// * `o` - a path buffer
#[tool(risk = "safe")]
fn options(
    a: Option<String>,
    b: Option<bool>,
    c: Option<i8>,
    d: Option<i16>,
    e: Option<i32>,
    f: Option<i64>,
    g: Option<isize>,
    h: Option<u8>,
    i: Option<u16>,
    j: Option<u32>,
    k: Option<u64>,
    l: Option<usize>,
    m: Option<f32>,
    n: Option<f64>,
    o: Option<PathBuf>,
) {
    let _ = (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
}

/// Every scalar in a vector, the other half described.
///
/// # Arguments
/// * `b` - booleans
/// * `d` - i16s
/// * `f` - i64s
/// * `h` - u8s
/// * `j` - u32s
/// * `l` - usizes
/// * `n` - f64s
#[tool(risk = "safe")]
fn vectors(
    a: Vec<String>,
    b: Vec<bool>,
    c: Vec<i8>,
    d: Vec<i16>,
    e: Vec<i32>,
    f: Vec<i64>,
    g: Vec<isize>,
    h: Vec<u8>,
    i: Vec<u16>,
    j: Vec<u32>,
    k: Vec<u64>,
    l: Vec<usize>,
    m: Vec<f32>,
    n: Vec<f64>,
    o: Vec<PathBuf>,
) {
    let _ = (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
}

/// Paths by full name, optional ones first.
#[tool(risk = "safe")]
fn full_paths(
    a: ::core::option::Option<::std::string::String>,
    b: std::vec::Vec<core::primitive::u32>,
    c: ::std::string::String,
) {
    let _ = (a, b, c);
}

/// Guarded paths of every kind.
///
/// # Arguments
/// * `path` - the file
/// * `dir` - the directory
/// * `target` - where it goes
/// * `source` - where it came from
#[tool(risk = "read_only", path_args = ["target", "source", "other", "maybe"])]
fn guarded(
    path: WorkspacePath,
    dir: Option<WorkspacePath>,
    target: String,
    source: PathBuf,
    other: Option<String>,
    maybe: Option<PathBuf>,
) {
    let _ = (path, dir, target, source, other, maybe);
}

/// Declared defaults.
///
/// # Arguments
/// * `count` - how many
/// * `label` - what to call it
#[tool(risk = "safe")]
fn defaults(
    #[arg(default = 5)] count: u32,
    #[arg(default = "x".to_owned())] label: String,
    #[arg(default = vec![1, 2])] list: Vec<i64>,
    flag: bool,
) {
    let _ = (count, label, list, flag);
}

/// Every parameter defaulted: no `required` remains.
#[tool(risk = "safe")]
fn all_defaults(#[arg(default = true)] flag: bool) {
    let _ = flag;
}

/// No parameters.
#[tool(risk = "safe")]
fn nothing() {}

/// Descriptions that need escaping, continue over lines or hold unusual text.
///
/// # Arguments
/// * `quoted` - say "hi" \ and C:\dir
/// * `unicode` - ünïcödé — and a tab	inside
/// * `long` - one line
///   and its continuation,
///   and one more
/// * `type` - a raw name
/// * `empty` -
#[tool(risk = "safe")]
fn descriptions(quoted: String, unicode: u8, long: Option<i32>, r#type: String, empty: bool) {
    let _ = (quoted, unicode, long, r#type, empty);
}

/// Context and async: neither changes the arguments.
///
/// # Arguments
/// * `n` - a number
#[tool(risk = "safe")]
async fn with_context(ctx: &ToolContext, n: u16) {
    let _ = (ctx, n);
}

/// How a deployment proceeds.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// At once.
    Recreate,
    /// A few at a time.
    Rolling,
}

/// One row filter.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// Column name.
    pub column: String,
    /// How many.
    pub limit: Option<u8>,
}

/// User types beside known ones: schemars makes this schema.
///
/// # Arguments
/// * `strategy` - how
/// * `filters` - which rows
#[tool(risk = "safe")]
fn user_types(
    name: String,
    strategy: Strategy,
    filters: Vec<Filter>,
    maybe: Option<Filter>,
    nested: Option<Vec<String>>,
    wide: u128,
) {
    let _ = (name, strategy, filters, maybe, nested, wide);
}

mod other {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// Another type named `Filter`: schemars names its definition `Filter2`.
    #[allow(dead_code)]
    #[derive(Debug, Deserialize, JsonSchema)]
    pub struct Filter {
        /// A sized integer inside a definition gets its bounds.
        pub depth: i16,
        /// The first `Filter`, from inside the second.
        pub inner: Option<super::Filter>,
    }
}

/// A name for a known type: a derived part, made by schemars.
type Label = String;

/// User types in every position beside stated parameters: alone, described, optional, twice,
/// named alike, nested, defaults beside them, a raw JSON value, a type alias.
///
/// # Arguments
/// * `first` - the first filter
/// * `again` - the same type again
/// * `strategy` - maybe a strategy
/// * `count` - a defaulted count
/// * `any` - any JSON at all
#[tool(risk = "safe")]
fn user_types_mixed(
    other: other::Filter,
    first: Filter,
    again: Vec<Filter>,
    strategy: Option<Strategy>,
    #[arg(default = 3)] count: u8,
    any: serde_json::Value,
    label: Label,
    maybe_any: Option<serde_json::Value>,
) {
    let _ = (other, first, again, strategy, count, any, label, maybe_any);
}

/// A user type alone.
#[tool(risk = "safe")]
fn user_type_alone(strategy: Strategy) {
    let _ = strategy;
}

/// The user types of `user_type_alone` again, under another name and description: schemars'
/// share is made once for both, the words are each tool's own.
///
/// # Arguments
/// * `mode` - this tool's own words
#[tool(risk = "safe")]
fn user_type_shared(label: String, mode: Strategy) {
    let _ = (label, mode);
}

/// Two types named alike, the other first: schemars names them in the order it meets them.
#[tool(risk = "safe")]
fn alike_other_first(other: other::Filter, first: Filter) {
    let _ = (other, first);
}

/// The same two types in the opposite order: their `$defs` names swap.
#[tool(risk = "safe")]
fn alike_first_first(first: Filter, other: other::Filter) {
    let _ = (first, other);
}

/// The sequence of `alike_other_first` again, with a stated parameter between and words of its
/// own.
///
/// # Arguments
/// * `second` - described here only
#[tool(risk = "safe")]
fn alike_other_first_again(one: other::Filter, between: Option<u8>, second: Filter) {
    let _ = (one, between, second);
}

/// Only optional parameters, one of a user type: no `required`.
///
/// # Arguments
/// * `strategy` - maybe
#[tool(risk = "safe")]
fn user_type_optional(strategy: Option<Strategy>, n: Option<u32>) {
    let _ = (strategy, n);
}

/// A `#[schemars(..)]` attribute: schemars makes this schema.
#[tool(risk = "safe")]
fn with_attributes(
    #[schemars(range(min = 1, max = 120))] secs: Option<u64>,
    #[schemars(length(max = 8))] code: String,
) {
    let _ = (secs, code);
}

/// A description schemars reads as a title.
///
/// # Arguments
/// * `a` - # Title
#[tool(risk = "safe")]
fn titled(a: String) {
    let _ = a;
}

mod shadowed {
    use schemars::JsonSchema;
    use serde::Deserialize;

    /// A user type named like the standard string: its own schema must be the one declared.
    #[allow(dead_code)]
    #[derive(Debug, Deserialize, JsonSchema)]
    pub struct String(pub i64);

    mod types {
        use schemars::JsonSchema;
        use serde::Deserialize;

        /// A user type, imported below under a primitive's name.
        #[allow(dead_code)]
        #[derive(Debug, Deserialize, JsonSchema)]
        pub struct Byte {
            pub inner: bool,
        }
    }

    use types::Byte as u8;

    /// Shadowed names.
    ///
    /// # Arguments
    /// * `a` - not a string
    #[tool_core::tool(risk = "safe")]
    pub fn shadowed(a: String, b: Option<u8>, c: Vec<String>, d: bool) {
        let _ = (a, b, c, d);
    }
}

fn schemas() -> Vec<(String, Value, Value)> {
    // The generated code's support module: the registrations keep the schemars route there.
    tool_core::__private_0_1_0::declared_and_derived_schemas()
}

#[test]
fn every_declared_schema_is_the_one_schemars_derives() {
    let all = schemas();
    assert_eq!(
        all.len(),
        22,
        "{:?}",
        all.iter().map(|t| &t.0).collect::<Vec<_>>()
    );
    for (name, declared, derived) in &all {
        let declared = serde_json::to_string(declared).expect("serializes");
        let derived = serde_json::to_string(derived).expect("serializes");
        assert_eq!(
            declared, derived,
            "`{name}`: stated schema differs from schemars'"
        );
    }
}

#[test]
fn a_shadowed_type_name_takes_its_own_schema() {
    let all = schemas();
    let (_, declared, _) = all
        .iter()
        .find(|t| t.0 == "shadowed")
        .expect("the tool is linked");
    let props = &declared["properties"];
    // The user's `String` is a newtype of `i64`, its `u8` an object: not the standard ones.
    assert_eq!(props["a"]["$ref"], "#/$defs/String", "{declared}");
    assert_eq!(props["c"]["items"]["$ref"], "#/$defs/String", "{declared}");
    assert_eq!(declared["$defs"]["String"]["type"], "integer", "{declared}");
    assert_eq!(declared["$defs"]["Byte"]["type"], "object", "{declared}");
    assert_eq!(props["d"]["type"], "boolean", "{declared}");
}

#[test]
fn the_registry_accepts_every_schema() {
    let registry = tool_core::Registry::builder()
        .with_inventory()
        .build()
        .expect("every schema of the corpus is accepted");
    assert_eq!(registry.len(), 22);
}

/// `#[tool]` writes the canonical text of a schema it states whole (no user type, no default,
/// every type the one its name suggests), which the registry's dump copies: the text is the
/// canonical dump of the schema built, and the dump is the one of the declarations' `Value`s.
#[test]
fn the_canonical_text_written_for_a_stated_schema_is_its_dump() {
    let written = tool_core::__private_0_1_0::declared_canonical_inputs();
    let mut names: Vec<&str> = written.iter().map(|t| t.0.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "descriptions",
            "full_paths",
            "guarded",
            "nothing",
            "options",
            "scalars",
            "scalars_described",
            "vectors",
            "with_context"
        ]
    );
    for (name, schema, text) in &written {
        // In the dump a tool's input schema sits three levels deep (root, `tools`, the tool).
        let mut dump =
            String::from_utf8(tool_core::schema::canonical_bytes(schema)).expect("UTF-8");
        assert_eq!(dump.pop(), Some('\n'));
        assert_eq!(*text, dump.replace('\n', "\n      "), "`{name}`");
    }
    let registry = tool_core::Registry::builder()
        .with_inventory()
        .build()
        .expect("registry");
    let tools: Vec<Value> = registry
        .iter()
        .map(|t| tool_core::registry::decl_to_json(t.decl()))
        .collect();
    let expected = tool_core::schema::canonical_bytes(
        &serde_json::json!({"schema_version": 1, "tools": tools}),
    );
    assert_eq!(
        String::from_utf8_lossy(registry.canonical_dump()),
        String::from_utf8_lossy(&expected)
    );
}

/// schemars' share of a schema is made once per sequence of user types and shared by the
/// others: a schema made from the kept share is the one made afresh, for every tool, whichever
/// tool of a sequence comes first and however many threads make them at once.
#[test]
fn schemas_made_from_a_kept_share_are_the_ones_made_afresh() {
    use tool_core::__private_0_1_0::{declared_and_derived_schemas, forget_derived_schemas};
    forget_derived_schemas();
    let cold = declared_and_derived_schemas();
    let warm = declared_and_derived_schemas();
    assert_eq!(cold, warm);
    let racing: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                forget_derived_schemas();
                declared_and_derived_schemas()
            })
        })
        .collect();
    for thread in racing {
        assert_eq!(thread.join().expect("no panic"), cold);
    }
    let by_name = |name: &str| {
        cold.iter()
            .find(|t| t.0 == name)
            .map(|t| t.1.clone())
            .expect("the tool is linked")
    };
    // One share, each tool's own words and names.
    let alone = by_name("user_type_alone");
    let shared = by_name("user_type_shared");
    assert_eq!(alone["$defs"], shared["$defs"]);
    assert_eq!(
        shared["properties"]["mode"]["description"],
        "this tool's own words"
    );
    assert!(
        alone["properties"]["strategy"].get("description").is_none(),
        "{alone}"
    );
    // Types named alike: the names follow the order of each sequence.
    let other_first = by_name("alike_other_first");
    let first_first = by_name("alike_first_first");
    assert_eq!(other_first["properties"]["other"]["$ref"], "#/$defs/Filter");
    assert_eq!(
        other_first["properties"]["first"]["$ref"],
        "#/$defs/Filter2"
    );
    assert_eq!(first_first["properties"]["first"]["$ref"], "#/$defs/Filter");
    assert_eq!(
        first_first["properties"]["other"]["$ref"],
        "#/$defs/Filter2"
    );
    let again = by_name("alike_other_first_again");
    assert_eq!(again["$defs"], other_first["$defs"]);
    assert_eq!(
        again["properties"]["second"]["description"],
        "described here only"
    );
    assert!(other_first["properties"]["first"]
        .get("description")
        .is_none());
}

/// Every tool linked in, collected, checked, pinned and the pin verified: what start-up does.
fn pinned_registry() -> tool_core::Registry {
    let registry = tool_core::Registry::builder()
        .with_inventory()
        .build()
        .expect("registry");
    let dir = tempfile::tempdir().expect("tempdir");
    tool_core::pin::write(&registry, dir.path()).expect("pin");
    registry.verify_pin(dir.path()).expect("pin holds");
    registry
}

/// How many tools of `registry` have a schema of the kind `kind` tells that is not built yet.
fn unbuilt(registry: &tool_core::Registry, kind: fn(&tool_core::InputSchema) -> bool) -> usize {
    registry
        .iter()
        .filter(|t| kind(&t.decl().input_schema) && !t.decl().input_schema.is_built())
        .count()
}

/// A schema `#[tool]` stated whole is taken on the macro's word at start-up: it passes every
/// check the registry makes of any other schema, and it is built on first use, not by
/// collecting, checking, pinning or dumping the registry.
#[test]
fn schemas_stated_whole_pass_the_registry_checks_and_wait_for_first_use() {
    let stated = tool_core::__private_0_1_0::stated_schemas_checked_in_full();
    // Every tool without a user type, a default or an attribute of schemars'.
    let names: Vec<&str> = stated.iter().map(|(n, _)| n.as_str()).collect();
    for expected in [
        "scalars",
        "options",
        "vectors",
        "guarded",
        "nothing",
        "with_context",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    for absent in ["defaults", "user_types", "with_attributes", "shadowed"] {
        assert!(!names.contains(&absent), "{names:?}");
    }
    for (name, checked) in &stated {
        assert_eq!(checked, &Ok(()), "`{name}`");
    }

    let registry = pinned_registry();
    let unbuilt = |r: &tool_core::Registry| unbuilt(r, tool_core::InputSchema::is_stated);
    assert_eq!(unbuilt(&registry), stated.len());
    // Read, each is the value its registration states, and its checker works.
    for (name, _) in &stated {
        let decl = registry.get(name).expect("registered").decl();
        assert_eq!(decl.input_schema["type"], "object", "`{name}`");
    }
    assert_eq!(unbuilt(&registry), 0);
}

/// A schema of user types without a declared default is put together on first use: at
/// start-up the registry checks only what schemars made of the user types, and the dump is
/// written from the parts. Each such schema passes every check the registry makes of a whole
/// schema, the built-in checker surely compiles it, its dump from the parts is the dump of its
/// value, and collecting, checking, pinning and dumping the registry builds none of them.
#[test]
fn schemas_put_together_from_parts_pass_the_checks_and_dump_as_their_values() {
    let assembled = tool_core::__private_0_1_0::assembled_schemas_checked_in_full();
    let mut names: Vec<&str> = assembled.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "alike_first_first",
            "alike_other_first",
            "alike_other_first_again",
            "user_type_alone",
            "user_type_optional",
            "user_type_shared",
            "user_types",
        ]
    );
    for a in &assembled {
        assert_eq!(a.checked, Ok(()), "`{}`", a.name);
        assert_eq!(a.from_parts, a.from_value, "`{}`", a.name);
    }

    let registry = pinned_registry();
    let unbuilt = |r: &tool_core::Registry| unbuilt(r, tool_core::InputSchema::is_assembled);
    assert_eq!(unbuilt(&registry), assembled.len());
    // Built, each is the schema schemars derives, and a call is checked against it.
    let derived = schemas();
    for a in &assembled {
        let decl = registry.get(&a.name).expect("registered").decl();
        let (_, _, schemars) = derived.iter().find(|t| t.0 == a.name).expect("derived");
        assert_eq!(decl.input_schema.value(), schemars, "`{}`", a.name);
    }
    assert_eq!(unbuilt(&registry), 0);
    let tool = registry.get("user_type_alone").expect("registered");
    assert!(tool
        .validator()
        .is_valid(&serde_json::json!({"strategy": "rolling"})));
    assert!(!tool
        .validator()
        .is_valid(&serde_json::json!({"strategy": "sideways"})));
}
