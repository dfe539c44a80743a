//! Compile-fail cases of `#[tool]` and `#[tool_core::main]`: `ui/` holds the cases and their
//! committed `.stderr`, `tests/ui.rs` runs them. The crate is its own so that trybuild, which
//! builds every case against the crate's dependencies in a target directory of its own, builds
//! only `tool-core` and what the cases name, not the integration tests' whole tree.
