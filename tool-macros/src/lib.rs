//! The `#[tool]` attribute. Use it through `tool_core::tool`; the runtime documents the keys.
//!
//! Stages: [`attr`] reads the keys, [`model`] reads the function, [`check`] applies the
//! declaration rules, [`expand`] generates code. Errors are collected in a [`ctxt::Ctxt`] and
//! reported together.

use proc_macro::TokenStream;

mod attr;
mod check;
mod ctxt;
mod expand;
mod model;

/// Declare a function as an agent tool: see `tool_core::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::tool(args.into(), item.clone()) {
        Ok(out) => out.into(),
        Err(err) => {
            // Keep the function so one mistake does not cascade into "cannot find function".
            let mut out = item;
            out.extend(err.to_compile_error());
            out.into()
        }
    }
}
