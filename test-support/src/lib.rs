//! What the workspace's tests share: a workspace with a canary next to it ([`site`]), a raw
//! HTTP/1.1 client for wire-level checks ([`http`]), the loud skip of a kernel test
//! ([`kernel`]), a parser for `strace` output ([`strace`], over [`paths`]), a JSON-RPC peer over a
//! child's stdin/stdout ([`stdio`]), and this run's processes and JSON-line output ([`procs`]).
//!
//! A dev-dependency only; nothing here is part of a published crate.

pub mod http;
pub mod kernel;
pub mod paths;
pub mod procs;
pub mod site;
pub mod stdio;
pub mod strace;
