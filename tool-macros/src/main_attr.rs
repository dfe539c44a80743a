//! `#[tool_core::main]`: a `main` whose first act is the sandbox helper's dispatch, before any
//! runtime or thread starts; an `async fn main` then runs on a multi-threaded tokio runtime.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::ItemFn;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(
            attr.span(),
            "`#[tool_core::main]` takes no arguments",
        ));
    }
    let func: ItemFn = syn::parse2(item)?;
    let sig = &func.sig;
    if sig.ident != "main" {
        return Err(syn::Error::new(
            sig.ident.span(),
            "`#[tool_core::main]` goes on the program's `fn main`",
        ));
    }
    if !sig.inputs.is_empty() || !sig.generics.params.is_empty() {
        let span = if sig.generics.params.is_empty() {
            sig.inputs.span()
        } else {
            sig.generics.params.span()
        };
        return Err(syn::Error::new(
            span,
            "`#[tool_core::main]` takes a `main` without parameters or generics",
        ));
    }
    let attrs = &func.attrs;
    let vis = &func.vis;
    let output = &sig.output;
    let body = &func.block;
    let run = if sig.asyncness.is_some() {
        quote! { ::tool_core::sandbox::block_on_main(async move #body) }
    } else {
        quote! { ::tool_core::sandbox::enter_main(); #body }
    };
    Ok(quote! {
        #(#attrs)*
        #vis fn main() #output {
            #run
        }
    })
}
