//! The bash scanner: tree-sitter-bash syntax tree → normalized commands → findings.
//!
//! `walk` holds the scan's state and the node walk; the rules extend its walker by concern:
//! `words` (word decoding), `commands` (unwrapping and command rules), `exec` (nested
//! interpreters and generated code), `awk` (programs of `awk`), `writes` (redirections and
//! deletions), `system` (host information, allocation, foreign interpreters' code). `text`, `interp` and
//! `parse` are leaves. No file here imports `mod.rs`, which only declares and re-exports.

// Arms dispatch on the command or callee name; folding their conditions into guards would
// blur which name an arm is about.
#![allow(clippy::collapsible_match, clippy::collapsible_if)]

mod archives;
mod awk;
mod cmd;
mod commands;
mod effects;
mod exec;
mod files;
mod interp;
mod loops;
mod net;
mod parse;
mod procs;
mod resolve;
mod system;
mod text;
mod walk;
mod words;
mod writes;

pub(crate) use parse::PARSER;
pub(crate) use walk::scan;
