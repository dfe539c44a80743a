//! The helper binary embedded in a program: [`dispatch_helper`].

use std::sync::atomic::{AtomicBool, Ordering};

use super::kernel;

static EMBEDDED: AtomicBool = AtomicBool::new(false);

/// Runs the sandbox helper if this process was started as one, and returns its exit code; `None`
/// otherwise, and from then on executors in this process use the program itself as the helper.
///
/// Call it first thing in `main` and exit with the code it returns:
///
/// ```no_run
/// // First thing in `main`:
/// if let Some(code) = tool_core::sandbox::dispatch_helper() {
///     std::process::exit(code);
/// }
/// // ... the program
/// ```
///
/// [`crate::cli::Cli::run`] does this itself.
pub fn dispatch_helper() -> Option<i32> {
    let code = kernel::dispatch();
    if code.is_none() {
        EMBEDDED.store(true, Ordering::Relaxed);
    }
    code
}

/// Whether [`dispatch_helper`] ran in this process (so the program is its own helper).
pub fn helper_embedded() -> bool {
    EMBEDDED.load(Ordering::Relaxed)
}
