//! Guards run on the final arguments before a tool runs, and the workspace file operations that
//! keep a guarded path inside the workspace when the handler uses it.

mod handle;
pub mod path;
pub mod workspace;
