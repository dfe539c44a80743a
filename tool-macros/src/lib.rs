//! The `#[tool]` attribute. Use it through `tool_core::tool`, which documents it: every key,
//! `#[arg(..)]`, the parameter forms and the return types.
//!
//! Stages: `attr` reads the keys, `model` reads the function, `check` applies the declaration
//! rules, `expand` generates code. Errors are collected in a `ctxt::Ctxt` and reported together.

use proc_macro::TokenStream;

mod attr;
mod check;
mod ctxt;
mod expand;
mod main_attr;
mod model;
mod stated;
mod typed;

// Documented where it is used from, `tool_core::tool` (tool-core's `src/tool.md`), whose
// examples compile against the runtime.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::tool(args.into(), item.clone()) {
        Ok(out) => out.into(),
        Err(err) => {
            // Keep the function so one mistake does not cascade into "cannot find function".
            let mut out = expand::original(item);
            out.extend(err.to_compile_error());
            out.into()
        }
    }
}

/// Marks the program's `main` so that kernel confinement works whatever it is: its first act is
/// `tool_core::sandbox::dispatch_helper()` (the program is then its own sandbox helper), before
/// any runtime or thread starts. On an `async fn main` it replaces `#[tokio::main]`: the body
/// runs on a multi-threaded tokio runtime built after the dispatch.
///
/// ```ignore
/// #[tool_core::main]
/// async fn main() {
///     // build the registry and the executor, serve, ...
/// }
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match main_attr::expand(args.into(), item.clone()) {
        Ok(out) => out.into(),
        // The function as written goes on after the error, so the error is the only one
        // (no "`main` function not found" after it).
        Err(err) => {
            let mut out = err.to_compile_error();
            out.extend(item);
            out.into()
        }
    }
}
