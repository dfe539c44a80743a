//! The Python scanner: ruff_python_parser syntax tree, import aliases resolved, calls checked.
//!
//! `walk` holds the scan's state and the statement walk; `values` (constant values, taint) and
//! `calls` (the rules on each call) extend its walker. No file here imports `mod.rs`, which only
//! declares and re-exports.

// Arms dispatch on the command or callee name; folding their conditions into guards would
// blur which name an arm is about.
#![allow(clippy::collapsible_match, clippy::collapsible_if)]

mod alloc;
mod assign;
mod calls;
mod consts;
mod deser;
mod dynamic;
mod effects;
mod files;
mod inline;
mod net;
mod process;
mod values;
mod walk;

pub(crate) use walk::{scan, PARSER};
