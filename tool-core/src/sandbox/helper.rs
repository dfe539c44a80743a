//! The helper binary embedded in a program: [`dispatch_helper`], and the `main` entry points
//! that call it before any runtime starts ([`enter_main`], [`block_on_main`],
//! `#[tool_core::main]`).

use std::future::Future;
use std::sync::OnceLock;

use super::kernel;

/// Whether the program is its own helper, and why not when it cannot be.
#[derive(Debug, Clone)]
enum Embedded {
    /// [`dispatch_helper`] ran before any other thread: the program is its helper.
    Usable,
    /// [`dispatch_helper`] ran after the program started threads (a tokio runtime): a helper
    /// started from it would start them too before the dispatch, and could not confine.
    AfterThreads(usize),
}

static EMBEDDED: OnceLock<Embedded> = OnceLock::new();

/// The fix for a program whose helper cannot run, for refusals.
pub(crate) const MAIN_FIX: &str = "mark `main` with `#[tool_core::main]` (instead of \
     `#[tokio::main]`, which starts the runtime's threads before `main`'s body), or call \
     `tool_core::sandbox::dispatch_helper()` first thing in a sync `main`, or build \
     `tool-sandbox-exec` (`cargo install tool-sandbox`) and put it beside the program or pass \
     its path with `ExecutorConfig::sandbox_helper`";

/// Runs the sandbox helper if this process was started as one, and returns its exit code; `None`
/// otherwise, and from then on executors in this process use the program itself as the helper.
///
/// Call it first thing in a sync `main`, before any thread starts, and exit with the code it
/// returns (or mark `main` with `#[tool_core::main]`, which does this, for sync and async
/// `main` alike):
///
/// ```no_run
/// // First thing in `main`:
/// if let Some(code) = tool_core::sandbox::dispatch_helper() {
///     std::process::exit(code);
/// }
/// // ... the program
/// ```
///
/// Called after threads started (in the body of a `#[tokio::main]`), it cannot make the program
/// its helper: the helper must be single-threaded to confine. It then records why, and
/// executors whose tools run scripts use a `tool-sandbox-exec` beside the executable, or, with
/// none there, refuse to start ([`ExecutorError::SandboxUnavailable`]) with the fix, instead of
/// failing at the first call. A helper started that way refuses with a
/// status line rather than crash.
///
/// `tool_core::cli::Cli::run` (feature `cli`) does this itself.
///
/// [`ExecutorError::SandboxUnavailable`]: crate::executor::ExecutorError::SandboxUnavailable
pub fn dispatch_helper() -> Option<i32> {
    let code = kernel::dispatch();
    if code.is_none() {
        let state = match thread_count() {
            n if n > 1 => Embedded::AfterThreads(n),
            _ => Embedded::Usable,
        };
        // The first call decides: a later call (the CLI's, after the application's) changes
        // nothing the first one saw.
        let _ = EMBEDDED.set(state);
    }
    code
}

/// Whether [`dispatch_helper`] ran in this process early enough for the program to be its own
/// helper.
pub fn helper_embedded() -> bool {
    matches!(EMBEDDED.get(), Some(Embedded::Usable))
}

/// Why the program cannot be its own helper although [`dispatch_helper`] ran, with the fix.
pub(crate) fn embedding_failed() -> Option<String> {
    match EMBEDDED.get() {
        Some(Embedded::AfterThreads(n)) => Some(format!(
            "`tool_core::sandbox::dispatch_helper()` ran after this program had started {n} \
             threads, so it cannot be its own sandbox helper (a helper must confine from a single \
             thread). Fix: {MAIN_FIX}"
        )),
        _ => None,
    }
}

/// What `doctor` says of the helper.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // read by `doctor` only
pub(crate) fn helper_status() -> String {
    match EMBEDDED.get() {
        Some(Embedded::Usable) => "this program (embedded)".to_owned(),
        Some(Embedded::AfterThreads(_)) => {
            match kernel::Launcher::locate(None, kernel::KernelMode::Required) {
                Ok(_) => "`tool-sandbox-exec` beside the executable (this program dispatched too \
                          late to be its own)"
                    .to_owned(),
                Err(_) => format!("not usable: {}", embedding_failed().unwrap_or_default()),
            }
        }
        None => "not embedded: looked for `tool-sandbox-exec` next to the executable".to_owned(),
    }
}

/// The first act of a sync `main`: runs the sandbox helper and exits if this process was
/// started as one ([`dispatch_helper`]); returns otherwise. What `#[tool_core::main]` puts in
/// front of a sync `main`'s body.
pub fn enter_main() {
    if let Some(code) = dispatch_helper() {
        std::process::exit(code);
    }
}

/// Runs an async `main`'s body: [`enter_main`] first, then `body` on a multi-threaded tokio
/// runtime (all drivers enabled, as `#[tokio::main]` builds it). What `#[tool_core::main]` makes
/// of an `async fn main`.
///
/// # Panics
///
/// If the runtime cannot be built (as `#[tokio::main]` does).
pub fn block_on_main<F: Future>(body: F) -> F::Output {
    enter_main();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("failed to build the tokio runtime")
        .block_on(body)
}

/// The threads of this process (1 where they cannot be counted).
fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count().max(1))
}
