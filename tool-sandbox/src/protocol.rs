//! What the library and the helper's processes share: the spec, the status lines, the exit
//! codes and the request format.

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::policy::{Mode, Rlimits, SandboxPolicy};

/// The first argument that selects helper mode (so any binary can embed the helper).
pub const HELPER_FLAG: &str = "--tool-sandbox-exec";
/// Exit code of the helper when confinement could not be set up.
pub const SETUP_FAILED: i32 = 125;
/// Exit code of the helper when the program could not be started.
pub const EXEC_FAILED: i32 = 127;
/// Prefix of the status line that says the program starts confined.
pub(crate) const OK_PREFIX: &str = "\u{1}tool-sandbox-exec:ok ";
/// Prefix of the status line that says setup failed.
pub(crate) const ERR_PREFIX: &str = "\u{1}tool-sandbox-exec:err ";
/// The helper mode argument of the zygote.
pub(crate) const ZYGOTE: &str = "zygote";
/// The largest spec an init reads (arguments and environment included).
pub(crate) const MAX_SPEC: usize = 16 << 20;
/// Prefix of the line an init ends its run socket with: `exit CODE`.
pub(crate) const EXIT_PREFIX: &str = "exit ";
/// Prefix of the limits the run reached, after the exit code: `exit CODE limits=memory,cpu`.
pub(crate) const LIMITS_PREFIX: &str = "limits=";

/// What the helper runs, and how: serialized by the library, read by the init.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ExecSpec {
    pub policy: SandboxPolicy,
    pub mode: Mode,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: std::path::PathBuf,
    pub env: Vec<(String, String)>,
    pub limits: Rlimits,
}

/// The file descriptors one request passes: the program's stdin, stdout, stderr, and the run
/// socket, in this order.
pub(crate) const REQUEST_FDS: usize = 4;
/// The one data byte of a request message.
pub(crate) const REQUEST_BYTE: u8 = b'R';

/// Writes the `err` status line for `e` and returns [`SETUP_FAILED`].
pub(crate) fn fail(out: &mut impl Write, e: &SandboxError) -> i32 {
    let _ = writeln!(
        out,
        "{ERR_PREFIX}{} {}",
        e.code(),
        e.to_string().replace('\n', " ")
    );
    SETUP_FAILED
}

pub(crate) fn setup(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("{what}: {e}"))
}

pub(crate) fn parse_spec(json: &[u8]) -> Result<ExecSpec, SandboxError> {
    // The policy is checked by the init once the program's root holds what it names.
    serde_json::from_slice(json).map_err(|e| setup("bad spec", e))
}
