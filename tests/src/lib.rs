//! Integration tests live in `it/` (one binary) and `ui/` (compile-fail cases, run by `ui.rs`);
//! this crate has no library code.
