//! The typed entry of a tool whose parameter types check exactly what its stated schema says
//! ([`crate::stated::typed_exact`]): `__typed`, which reads a call's arguments text into the
//! parameters' types (guarded paths as strings), hands the path arguments
//! to the executor's workspace guard and keeps the rest for the handler's run. The executor uses
//! it where no other step needs the JSON arguments (`tool_core::executor`'s typed path).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};

use crate::model::{Base, Tool};

/// What the handler adapter already made, reused by the typed entry.
pub(crate) struct Adapter<'a> {
    /// `tool_core::__private` as the expansion names it.
    pub(crate) pv: &'a TokenStream,
    /// The guarded path arguments.
    pub(crate) guarded: &'a [String],
    /// The `__arg_<name>` locals `__run(__ctx, ..)` takes, which starts the handler.
    pub(crate) run_args: &'a [syn::Ident],
}

/// `fn __typed`.
pub(crate) fn entry(tool: &Tool<'_>, a: &Adapter<'_>) -> TokenStream {
    let pv = a.pv;
    let local = |name: &str| format_ident!("__arg_{}", name);
    let is_guarded = |name: &String| a.guarded.contains(name);

    // Each parameter's type as the function names it, a guarded path as the string the guard
    // reads; the tuple is read by name (`tool_core`'s `typed_args`), so nothing is derived in
    // the user's scope.
    let types = tool.params().map(|p| {
        if !is_guarded(&p.name) {
            p.ty.to_token_stream()
        } else if p.shape.optional {
            quote!(::core::option::Option<#pv::String>)
        } else {
            quote!(#pv::String)
        }
    });
    let names = tool.params().map(|p| &p.name);
    let bindings = tool.params().map(|p| local(&p.name));
    // A path argument goes to the guard as written; the schema's `minLength: 1` is checked
    // here (an empty one takes the general path, which refuses it). An optional one leaves
    // only whether it was given.
    let guard = tool.params().filter(|p| is_guarded(&p.name)).map(|p| {
        let (name, binding) = (&p.name, local(&p.name));
        if p.shape.optional {
            quote! {
                let #binding = match #binding {
                    ::core::option::Option::Some(__path) => {
                        if __path.is_empty() {
                            return ::core::option::Option::None;
                        }
                        __paths.push((#name, __path));
                        ::core::option::Option::Some(())
                    }
                    ::core::option::Option::None => ::core::option::Option::None,
                };
            }
        } else {
            quote! {
                if #binding.is_empty() {
                    return ::core::option::Option::None;
                }
                __paths.push((#name, #binding));
            }
        }
    });
    let guarded_count = tool.params().filter(|p| is_guarded(&p.name)).count();
    // In the run, each path argument is the guard's checked path, as the adapter takes it.
    let paths = tool.params().filter(|p| is_guarded(&p.name)).map(|p| {
        let (name, binding) = (&p.name, local(&p.name));
        let value = match (p.shape.base, p.shape.optional) {
            (Base::WorkspacePath, false) => quote!(#pv::path(&__ctx, #name)?),
            (Base::WorkspacePath, true) => quote!(#pv::opt_path(&__ctx, #name, &#binding)?),
            (Base::PathBuf, false) => quote!(#pv::path_buf(&__ctx, #name)?),
            (Base::PathBuf, true) => quote!(#pv::opt_path_buf(&__ctx, #name, &#binding)?),
            (Base::String, false) => quote!(#pv::path_string(&__ctx, #name)?),
            (Base::String, true) => quote!(#pv::opt_path_string(&__ctx, #name, &#binding)?),
            (Base::Other, _) => unreachable!("checked: path arguments are string-like"),
        };
        quote!(let #binding = #value;)
    });
    let run_args = a.run_args;
    quote! {
        fn __typed(__raw: &str) -> ::core::option::Option<#pv::TypedCall> {
            let (#(#bindings,)*) = #pv::typed_args::<(#(#types,)*)>(__raw, &[#(#names),*])?;
            #[allow(unused_mut)]
            let mut __paths = #pv::Vec::with_capacity(#guarded_count);
            #(#guard)*
            ::core::option::Option::Some(#pv::TypedCall::new(
                __paths,
                #pv::Box::new(
                    move |__ctx: #pv::ToolContext|
                        -> ::core::result::Result<#pv::BoxFuture, #pv::ArgumentError>
                    {
                        #(#paths)*
                        __run(__ctx, #(#run_args),*)
                    },
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        crate::expand::tool(args, item)
            .expect("valid tool")
            .to_string()
    }

    #[test]
    fn types_that_check_their_schema_get_a_typed_entry() {
        let out = expand(
            quote!(risk = "read_only", path_args = ["dir"]),
            quote! {
                /// List.
                fn list(dir: Option<String>, path: WorkspacePath, depth: u8, tags: Vec<String>) {}
            },
        );
        assert!(out.contains("fn __typed"), "{out}");
        assert!(
            out.contains("typed_args :: < (:: core :: option :: Option < :: tool_core"),
            "{out}"
        );
        assert!(out.contains("typed (__def , __typed)"), "{out}");
        // The stated types are checked at run time before the entry is given.
        assert!(
            out.contains("same_type :: < u8 , :: core :: primitive :: u8 > ()"),
            "{out}"
        );
        // Guarded paths are read as strings and handed to the guard.
        assert!(
            out.contains("__paths . push ((\"path\" , __arg_path))"),
            "{out}"
        );
        // One body starts the handler from either side.
        assert_eq!(out.matches("fn __run").count(), 1, "{out}");
        assert_eq!(out.matches("__run (__ctx").count(), 3, "{out}");
    }

    #[test]
    fn anything_serde_does_not_check_alike_keeps_the_general_path() {
        let cases = [
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(x: f64) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(x: Option<f32>) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(x: Vec<f64>) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(p: Point) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(x: Option<Vec<String>>) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(#[arg(default = 3)] n: u8) {}
                ),
            ),
            (
                quote!(risk = "safe"),
                quote!(
                    fn f(#[schemars(range(max = 3))] n: u8) {}
                ),
            ),
            (
                quote!(risk = "safe", input_schema = crate::schema),
                quote!(
                    fn f(v: serde_json::Value) {}
                ),
            ),
        ];
        for (args, item) in cases {
            let item = quote!(#[doc = "F."] #item);
            let out = expand(args, item);
            assert!(!out.contains("__typed"), "{out}");
            assert_eq!(out.matches("__run (__ctx").count(), 2, "{out}");
        }
    }
}
