//! Argument types covering every constraint a `#[tool]` schema can carry: sized integers and
//! floats, ranges, lengths in characters, patterns, `multipleOf`, array bounds and sets,
//! tuples, maps, optional and defaulted values, unit, tagged, adjacent and untagged enums,
//! nested and recursive `Json<T>`-style structs with their own constraints.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{tool, Json};

/// A unit enum.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical.
    Critical,
}

/// An internally tagged enum.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        #[schemars(range(min = 0.5, max = 100.0))]
        radius: f64,
    },
    /// A rectangle.
    Rect {
        /// Width.
        #[schemars(range(min = 1, max = 10))]
        w: u8,
        /// Height.
        h: u16,
    },
}

/// An adjacently tagged enum.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
pub enum Msg {
    /// Text.
    Text(#[schemars(length(max = 5))] String),
    /// Number.
    Num(i32),
}

/// An untagged enum.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Either {
    /// A count.
    Count(u32),
    /// A label.
    Label(String),
}

/// An externally tagged enum with data.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Stop.
    Stop,
    /// Move by.
    Move(i64),
    /// Turn.
    Turn {
        /// Degrees.
        #[schemars(range(min = -180, max = 180))]
        degrees: i16,
    },
}

/// A nested struct with its own constraints.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// Column.
    #[schemars(length(min = 1, max = 8), regex(pattern = r"^[a-z_]+$"))]
    pub column: String,
    /// Values.
    #[schemars(length(min = 1, max = 3))]
    pub values: Vec<String>,
    /// Weight.
    #[schemars(extend("multipleOf" = 0.25))]
    pub weight: Option<f32>,
    /// Step.
    #[schemars(extend("multipleOf" = 5))]
    pub step: Option<u32>,
    /// Deeper.
    pub inner: Option<Box<Filter>>,
}

/// A recursive tree.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tree {
    /// Name.
    pub name: String,
    /// Children.
    #[schemars(length(max = 4))]
    pub children: Vec<Tree>,
}

/// Take numbers of every size with ranges and `multipleOf`.
///
/// # Arguments
/// * `a` - a u8
/// * `b` - an i8
/// * `c` - a u64
/// * `d` - an i64
/// * `e` - an f32
/// * `f` - a ranged f64
/// * `g` - a u32
/// * `h` - a ranged i32
#[tool(risk = "safe")]
#[allow(clippy::too_many_arguments)]
fn diff_numbers(
    a: u8,
    b: Option<i8>,
    c: Option<u64>,
    d: Option<i64>,
    e: Option<f32>,
    #[schemars(range(min = -1.5, max = 2.25))] f: Option<f64>,
    g: Option<u32>,
    #[schemars(range(min = -10, max = 10))] h: Option<i32>,
) -> String {
    format!("{a}{b:?}{c:?}{d:?}{e:?}{f:?}{g:?}{h:?}")
}

/// Take strings with lengths and patterns.
///
/// # Arguments
/// * `name` - 1 to 4 characters
/// * `code` - a pattern
/// * `word` - an ECMA class
/// * `single` - one character
/// * `free` - anything
#[tool(risk = "safe")]
fn diff_strings(
    #[schemars(length(min = 1, max = 4))] name: String,
    #[schemars(regex(pattern = r"^[A-Z]{2}-\d{3}$"))] code: Option<String>,
    #[schemars(regex(pattern = r"\w+\s?\w*"))] word: Option<String>,
    single: Option<char>,
    #[arg(default = "x".to_owned())] free: String,
) -> String {
    format!("{name}{code:?}{word:?}{single:?}{free}")
}

/// Take arrays, sets, tuples and maps.
///
/// # Arguments
/// * `list` - 1 to 3 numbers
/// * `set` - unique words
/// * `pair` - a tuple
/// * `map` - a map
/// * `grid` - nested arrays
#[tool(risk = "safe")]
fn diff_collections(
    #[schemars(length(min = 1, max = 3))] list: Vec<u16>,
    set: Option<BTreeSet<String>>,
    pair: Option<(u8, String)>,
    map: Option<BTreeMap<String, i32>>,
    grid: Option<Vec<Vec<bool>>>,
) -> String {
    format!("{list:?}{set:?}{pair:?}{map:?}{grid:?}")
}

/// Take enums of every representation.
///
/// # Arguments
/// * `level` - a unit enum
/// * `shape` - internally tagged
/// * `msg` - adjacently tagged
/// * `either` - untagged
/// * `step` - externally tagged
/// * `flag` - a bool
#[tool(risk = "safe")]
fn diff_enums(
    level: Level,
    shape: Option<Shape>,
    msg: Option<Msg>,
    either: Option<Either>,
    step: Option<Step>,
    flag: Option<bool>,
) -> String {
    format!("{level:?}{shape:?}{msg:?}{either:?}{step:?}{flag:?}")
}

/// Take nested and recursive structs; return one.
///
/// # Arguments
/// * `filter` - a nested struct
/// * `filters` - up to two of them
/// * `tree` - a recursive type
#[tool(risk = "safe")]
fn diff_nested(
    filter: Filter,
    #[schemars(length(max = 2))] filters: Option<Vec<Filter>>,
    tree: Option<Tree>,
) -> Json<Filter> {
    let _ = (filters, tree);
    Json(filter)
}
