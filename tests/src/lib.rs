//! Integration tests live in `it/` (one binary) and `ui/` (compile-fail cases, run by `ui.rs`).
//! The library holds what a test and a binary share: the MCP load client ([`mcp_load`]).

pub mod fleet;
pub mod fleet_load;
pub mod mcp_load;
