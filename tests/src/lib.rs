//! Integration tests live in `it/` (one binary); the compile-fail cases are the `ui-tests` crate.
//! The library holds what a test and a binary share: the MCP load client ([`mcp_load`]).

pub mod fleet;
pub mod fleet_load;
pub mod mcp_load;
