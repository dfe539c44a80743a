//! The integration tests, one module per feature, in one binary: each test binary links the whole
//! kit, so one binary is linked once. `ui.rs` (trybuild) stays a binary of its own; it compiles
//! its cases with cargo and links none of the kit.

mod exec_support;

mod any_main;
mod app_crate;
mod approval;
mod audit;
mod audit_chain;
mod audit_keyed;
mod audit_secrets;
mod batch;
mod call_parsing;
mod call_parsing_props;
mod cli_call;
mod context;
mod dialect_calls;
mod error_codes;
mod executor;
mod grants;
mod host_reach;
mod mcp_2026;
mod mcp_input;
mod mcp_load;
mod mcp_prompt_input;
mod mcp_proxy;
mod mcp_quota;
mod mcp_resources;
mod mcp_tasks;
mod mcp_wire;
mod path_guard;
mod pin;
mod regression_checklist;
mod reply;
mod resources;
mod rich_results;
mod safety_cli;
mod safety_corpus;
mod safety_effects;
mod safety_executor;
mod safety_fixtures;
mod safety_gate;
mod safety_policy;
mod safety_python;
mod safety_robustness;
mod safety_secrets;
mod safety_strace;
mod sandbox;
mod scan_off;
mod schema_agreement;
mod schema_export;
mod tool_logging;
mod tool_macro;
mod tool_schemas;
mod workspace_ops;
mod workspace_races;
