//! Guards run on the final arguments before a tool runs.

pub mod path;
