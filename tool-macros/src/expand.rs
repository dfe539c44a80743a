//! Code generation: the argument struct, the declaration, the handler adapter and the registry
//! entry, all inside `const _: () = { .. };`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Item, ItemFn};

use crate::attr::{self, Attrs, Risk, ScriptLang};
use crate::check;
use crate::ctxt::Ctxt;
use crate::model::{Base, Input, Param, Tool};

/// The runtime's support module: `tool-core` names it after its own version as this crate does,
/// so a `tool-macros` used with a `tool-core` of another version fails to compile instead of
/// generating code against a runtime it was not written for.
const PRIVATE: &str = concat!(
    "__private_",
    env!("CARGO_PKG_VERSION_MAJOR"),
    "_",
    env!("CARGO_PKG_VERSION_MINOR"),
    "_",
    env!("CARGO_PKG_VERSION_PATCH"),
);

/// Expand `#[tool(args)] item`. On `Err`, the caller emits [`original`] next to the errors.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let attrs = attr::parse(&cx, args);
    let func = match syn::parse2::<Item>(item) {
        Ok(Item::Fn(func)) => Some(func),
        Ok(other) => {
            cx.error_spanned_by(
                item_head(&other),
                "`#[tool]` goes on a free function (`fn` or `async fn`); this item is not one",
            );
            None
        }
        Err(e) => {
            cx.syn_error(e);
            None
        }
    };
    let Some(func) = func else {
        cx.check()?;
        unreachable!("an error was recorded for every item that is not a function");
    };
    let tool = Tool::from_fn(&func);
    check::check(&cx, &attrs, &tool);
    cx.check()?;
    Ok(generate(&attrs, &tool, &func))
}

/// The item as the user wrote it, minus the parameter attributes only `#[tool]` understands, so
/// a failed expansion adds no unrelated errors.
pub(crate) fn original(item: TokenStream) -> TokenStream {
    match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(func)) => crate::model::strip_param_attrs(&func).to_token_stream(),
        _ => item,
    }
}

/// The first tokens of an item, enough to point at it without underlining its whole body.
fn item_head(item: &Item) -> TokenStream {
    match item {
        Item::Struct(s) => {
            let (token, ident) = (&s.struct_token, &s.ident);
            quote!(#token #ident)
        }
        Item::Enum(e) => {
            let (token, ident) = (&e.enum_token, &e.ident);
            quote!(#token #ident)
        }
        Item::Impl(i) => {
            let (token, ty) = (&i.impl_token, &i.self_ty);
            quote!(#token #ty)
        }
        _ => item.to_token_stream(),
    }
}

fn generate(attrs: &Attrs, tool: &Tool<'_>, func: &ItemFn) -> TokenStream {
    let krate = match &attrs.krate {
        Some(path) => path.to_token_stream(),
        None => quote!(::tool_core),
    };
    let private = format_ident!("{}", PRIVATE);
    let pv = quote!(#krate::#private);
    let schemars_crate = quote!(#pv::schemars).to_string();

    let guarded = guarded_paths(attrs, tool);
    let is_guarded = |p: &Param<'_>| guarded.contains(&p.name);

    let fields = tool.params().map(|p| {
        let ident = p.ident;
        let docs = tool
            .docs
            .args
            .iter()
            .filter(|d| d.name == p.name && !d.text.is_empty())
            .map(|d| {
                let text = &d.text;
                quote!(#[doc = #text])
            });
        let ty = if is_guarded(p) {
            // The raw string is only read by the guard; the adapter passes the guarded path.
            if p.shape.optional {
                quote!(#[allow(dead_code)] #ident: ::core::option::Option<#pv::PathArg>)
            } else {
                quote!(#[allow(dead_code)] #ident: #pv::PathArg)
            }
        } else {
            let ty = p.ty;
            quote!(#ident: #ty)
        };
        let schema_attrs = &p.schema_attrs;
        quote!(#(#docs)* #(#schema_attrs)* #ty)
    });

    let param_names: Vec<&String> = tool.params().map(|p| &p.name).collect();
    let extract = tool.params().map(|p| {
        let ident = p.ident;
        let name = &p.name;
        if is_guarded(p) {
            quote!(#ident: #pv::arg(&mut __map, #name)?)
        } else if p.default().is_some() {
            let (ty, default_fn) = (p.ty, default_fn(p));
            quote!(#ident: #pv::arg_or::<#ty>(&mut __map, #name, #default_fn)?)
        } else {
            // Spanned on the parameter's type: a type without `Deserialize` is reported there.
            let ty = p.ty;
            let arg = quote_spanned!(ty.span()=> #pv::arg::<#ty>(&mut __map, #name));
            quote!(#ident: #arg?)
        }
    });
    // A declared default, once, as a function both the adapter and the schema call. Its body is
    // the user's expression, so a type error is reported there, once.
    let default_fns = tool.params().filter_map(|p| {
        let default = p.default()?;
        let (ty, default_fn) = (p.ty, default_fn(p));
        Some(quote!(fn #default_fn() -> #ty { #default }))
    });
    let schema_defaults: Vec<TokenStream> = tool
        .params()
        .filter_map(|p| {
            p.default()?;
            let (ty, name, default_fn) = (p.ty, &p.name, default_fn(p));
            Some(quote!((#name, #pv::default_json::<#ty>(#default_fn()))))
        })
        .collect();

    // Locals get internal names: a parameter named like the function must not shadow it.
    let local = |p: &Param<'_>| format_ident!("__arg_{}", p.name);
    let bindings = tool.params().map(|p| {
        let ident = p.ident;
        let binding = local(p);
        let name = &p.name;
        let value = if !is_guarded(p) {
            quote!(__args.#ident)
        } else {
            match (p.shape.base, p.shape.optional) {
                (Base::WorkspacePath, false) => quote!(#pv::path(&__ctx, #name)?),
                (Base::WorkspacePath, true) => {
                    quote!(#pv::opt_path(&__ctx, #name, &__args.#ident)?)
                }
                (Base::PathBuf, false) => quote!(#pv::path_buf(&__ctx, #name)?),
                (Base::PathBuf, true) => quote!(#pv::opt_path_buf(&__ctx, #name, &__args.#ident)?),
                (Base::String, false) => quote!(#pv::path_string(&__ctx, #name)?),
                (Base::String, true) => {
                    quote!(#pv::opt_path_string(&__ctx, #name, &__args.#ident)?)
                }
                (Base::Other, _) => unreachable!("checked: path arguments are string-like"),
            }
        };
        quote!(let #binding = #value;)
    });

    // `State<T>` parameters: taken from the context's resources (registered on the executor,
    // checked at its start) before the handler's closure takes the context.
    let states: Vec<&syn::Type> = tool
        .inputs
        .iter()
        .filter_map(|i| match i {
            Input::State(s) => Some(s.inner),
            _ => None,
        })
        .collect();
    let state_local = |i: usize| format_ident!("__state_{}", i);
    // The type is inferred from the call, so a `T` that cannot be a resource is reported once,
    // on the user's signature.
    let state_bindings: Vec<TokenStream> = (0..states.len())
        .map(|i| {
            let binding = state_local(i);
            quote!(let #binding = #pv::state(&__ctx)?;)
        })
        .collect();
    let mut next_state = 0usize;
    let call_args = tool.inputs.iter().filter_map(|i| match i {
        Input::Arg(p) => Some(local(p).to_token_stream()),
        Input::State(_) => {
            let binding = state_local(next_state);
            next_state += 1;
            Some(binding.to_token_stream())
        }
        Input::Context(c) if c.by_ref => Some(quote!(&__ctx)),
        Input::Context(_) => Some(quote!(__ctx)),
        _ => None,
    });
    // `__run`'s parameters: each argument by its local name, of the function's own type.
    let run_params: Vec<TokenStream> = tool
        .params()
        .map(|p| {
            let (binding, ty) = (local(p), p.ty);
            quote!(#binding: #ty)
        })
        .collect();
    let run_args: Vec<syn::Ident> = tool.params().map(local).collect();
    let fn_ident = &func.sig.ident;
    let call = quote!(#fn_ident(#(#call_args),*));
    // The return type is named in the turbofish (with its own span) so a type that does not
    // convert into an outcome is reported on the user's return type, once.
    let convert = match tool.ret.ty {
        None => quote!(#pv::into_outcome::<()>),
        Some(syn::Type::ImplTrait(_)) => quote!(#pv::into_outcome),
        Some(ty) => quote!(#pv::into_outcome::<#ty>),
    };
    let run = if tool.is_async {
        quote!(#pv::boxed(async move { #convert(#call.await) }))
    } else {
        quote!(#pv::blocking_on(__runner, #pv::Box::new(move || #convert(#call))))
    };
    // Async handlers are marked so the executor can run them on a confined runtime.
    let def_fn = if tool.is_async {
        format_ident!("async_tool_def")
    } else {
        format_ident!("tool_def")
    };
    // Taken before the handler's closure takes the context.
    let runner = if tool.is_async {
        quote!()
    } else {
        quote!(let __runner = #pv::sync_runner(&__ctx);)
    };
    let name = attrs
        .name
        .as_ref()
        .map_or_else(|| tool.fn_name.clone(), |n| n.value.clone());
    let description = attrs
        .description
        .as_ref()
        .map_or_else(|| tool.docs.summary.clone(), |d| d.value.trim().to_owned());
    let risk = format_ident!(
        "{}",
        match attrs.risk() {
            Risk::Safe => "Safe",
            Risk::ReadOnly => "ReadOnly",
            Risk::Mutation => "Mutation",
            Risk::Destructive => "Destructive",
            Risk::Dangerous => "Dangerous",
        }
    );
    let output_schema = match tool.ret.json {
        Some(ty) => {
            let schema = quote_spanned!(ty.span()=> #pv::output_schema::<#ty>());
            quote!(::core::option::Option::Some(#schema))
        }
        None => quote!(::core::option::Option::None),
    };
    let concurrency_safe = attrs.concurrency_safe;
    let idempotent = attrs.idempotent;
    let open_world = attrs.open_world;
    let unix_sockets: Vec<&String> = attrs.unix_sockets.iter().map(|s| &s.value).collect();
    let script_args = attrs.script_args().iter().map(|s| &s.value);
    let script_names: Vec<String> = attrs
        .script_args()
        .iter()
        .map(|s| s.value.clone())
        .collect();
    let script_lang = match attrs.script_lang.as_ref().map(|l| l.value) {
        Some(ScriptLang::Bash) => quote!(::core::option::Option::Some(#pv::ScriptLang::Bash)),
        Some(ScriptLang::Python) => quote!(::core::option::Option::Some(#pv::ScriptLang::Python)),
        None => quote!(::core::option::Option::None),
    };
    let setup_arg = |arg: &Option<attr::Spanned<String>>| match arg {
        Some(a) => {
            let name = &a.value;
            quote!(::core::option::Option::Some(#pv::string(#name)))
        }
        None => quote!(::core::option::Option::None),
    };
    let (cwd_arg, timeout_arg, env_arg) = (
        setup_arg(&attrs.cwd_arg),
        setup_arg(&attrs.timeout_arg),
        setup_arg(&attrs.env_arg),
    );
    let timeout = match attrs.timeout_ms {
        Some(ms) => quote!(::core::option::Option::Some(#pv::Duration::from_millis(#ms))),
        None => quote!(::core::option::Option::None),
    };
    let check_permissions = match &attrs.check_permissions {
        Some(path) => {
            let wrap = quote_spanned!(path.span()=> #pv::permission_check(#path));
            quote!(::core::option::Option::Some(#wrap))
        }
        None => quote!(::core::option::Option::None),
    };
    let fn_name = &tool.fn_name;

    // A hand-written schema: no argument struct; the one parameter (if any) takes the whole
    // arguments object, which the executor has validated against that schema.
    let derived_fn = derived_schema_fn(&pv, &schema_defaults);
    let (canonical_fn, canonical_input) = match &attrs.input_schema {
        None => crate::stated::canonical_input(&pv, tool, &guarded, !schema_defaults.is_empty()),
        Some(_) => (quote!(), quote!(::core::option::Option::None)),
    };
    let (args_struct, take_args, input_schema, derived_schema) = match &attrs.input_schema {
        None => (
            quote! {
                // Only the schema is derived: the adapter takes the arguments apart per parameter.
                #[derive(#pv::schemars::JsonSchema)]
                #[schemars(crate = #schemars_crate, deny_unknown_fields)]
                struct __Args {
                    #(#fields,)*
                }

                #(#default_fns)*

                #derived_fn
            },
            quote! {
                let mut __map = #pv::args_object(__args, &[#(#param_names),*])?;
                let __args = __Args { #(#extract,)* };
                #(#bindings)*
            },
            input_schema(&pv, tool, &guarded, &schema_defaults, &script_names),
            quote!(::core::option::Option::Some(__derived_schema)),
        ),
        Some(schema) => {
            let take = match tool.params().next() {
                Some(p) => {
                    let (binding, ty) = (local(p), p.ty);
                    let arg = quote_spanned!(ty.span()=> #pv::whole_args::<#ty>(__args));
                    quote!(let #binding = #arg?;)
                }
                None => quote!(let _ = __args;),
            };
            let schema = match schema {
                attr::InputSchema::File(lit) => quote! {
                    #pv::schema_text(
                        ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/", #lit)),
                        #lit,
                    )
                },
                attr::InputSchema::Fn(path) => {
                    quote_spanned!(path.span()=> #pv::schema_fn(#path))
                }
            };
            let schema = quote!(#pv::InputSchema::from(#schema));
            (quote!(), take, schema, quote!(::core::option::Option::None))
        }
    };

    let def = quote! {
        #pv::#def_fn(
            #pv::ToolDecl {
                name: #pv::string(#name),
                description: #pv::string(#description),
                input_schema: #input_schema,
                output_schema: #output_schema,
                risk: #pv::Risk::#risk,
                concurrency_safe: #concurrency_safe,
                idempotent: #idempotent,
                open_world: #open_world,
                path_args: #pv::strings(&[#(#guarded),*]),
                script_args: #pv::strings(&[#(#script_args),*]),
                script_lang: #script_lang,
                script_setup: #pv::ScriptSetup {
                    cwd: #cwd_arg,
                    timeout: #timeout_arg,
                    env: #env_arg,
                },
                timeout: #timeout,
                unix_sockets: #pv::strings(&[#(#unix_sockets),*]),
                source: #pv::string(::core::concat!(::core::module_path!(), "::", #fn_name)),
            },
            __handler,
            #check_permissions,
        )
    };
    // The typed entry, where the parameter types check exactly what the stated schema says;
    // given to the definition only if the types the schema was stated for are the parameters'.
    let stated = attrs
        .input_schema
        .is_none()
        .then(|| crate::stated::stated(tool, &guarded))
        .flatten()
        .filter(|st| crate::stated::typed_exact(tool, &guarded, st));
    let (typed_items, def) = match stated {
        Some(st) => {
            let items = crate::typed::entry(
                tool,
                &crate::typed::Adapter {
                    pv: &pv,
                    guarded: &guarded,
                    run_args: &run_args,
                },
            );
            let same = st
                .checks
                .iter()
                .map(|(ty, canonical)| quote!(#pv::same_type::<#ty, #canonical>()));
            let def = quote! {{
                let __def = #def;
                if true #(&& #same)* {
                    #pv::typed(__def, __typed)
                } else {
                    __def
                }
            }};
            (items, def)
        }
        None => (quote!(), def),
    };
    let def = if states.is_empty() {
        def
    } else {
        let types = states
            .iter()
            .map(|inner| quote!(#pv::resource_type::<#inner>()));
        quote!(#pv::requires(#def, &[#(#types),*]))
    };

    let func = crate::model::strip_param_attrs(func);
    quote! {
        #func

        #[doc(hidden)]
        const _: () = {
            #args_struct
            #canonical_fn

            #typed_items

            // The handler's start from its parameters: one body for the adapter and the typed
            // entry, so anything wrong in it is reported once.
            #[allow(unused_variables, clippy::too_many_arguments)]
            fn __run(__ctx: #pv::ToolContext, #(#run_params),*)
                -> ::core::result::Result<#pv::BoxFuture, #pv::ArgumentError>
            {
                #(#state_bindings)*
                #runner
                ::core::result::Result::Ok(#run)
            }

            fn __build() -> #pv::ToolDef {
                let __handler: #pv::Handler = #pv::Arc::new(
                    |__ctx: #pv::ToolContext, __args: #pv::serde_json::Value|
                        -> ::core::result::Result<#pv::BoxFuture, #pv::ArgumentError>
                    {
                        #take_args
                        __run(__ctx, #(#run_args),*)
                    },
                );
                #def
            }

            #pv::inventory::submit! {
                #pv::ToolRegistration {
                    build: __build,
                    module_path: ::core::module_path!(),
                    derived_schema: #derived_schema,
                    canonical_input: #canonical_input,
                }
            }
        };
    }
}

/// The input schema of a tool with typed parameters: stated at compile time where every
/// parameter's type allows it ([`crate::stated`]); assembled per parameter where some are of
/// other types (schemars only for those); else derived by schemars at run time. Either way the
/// declared defaults are added. The schemars route is `__derived_schema`, which the
/// registration also carries so a test can compare the two.
fn input_schema(
    pv: &TokenStream,
    tool: &Tool<'_>,
    guarded: &[String],
    defaults: &[TokenStream],
    script_args: &[String],
) -> TokenStream {
    let derived = quote!(#pv::InputSchema::from(__derived_schema()));
    let Some(stated) = crate::stated::stated(tool, guarded) else {
        return derived;
    };
    let same = stated
        .checks
        .iter()
        .map(|(ty, canonical)| quote!(#pv::same_type::<#ty, #canonical>()));
    let root = stated.root();
    // A schema stated whole, without declared defaults, is final: it is built on first use.
    // The registry then trusts what this macro checked of it (an object root, path and script
    // arguments of string types, the keywords written here, no `$ref`).
    if let (Some(root), true) = (&root, defaults.is_empty()) {
        let value = crate::stated::build(pv, root);
        return quote! {{
            fn __stated_input() -> #pv::serde_json::Value {
                #value
            }
            if true #(&& #same)* {
                #pv::stated_input(__stated_input)
            } else {
                #derived
            }
        }};
    }
    // Put together from parts, without declared defaults: on first use, when the registry
    // accepts what schemars made of the user types (a script argument of a user type leaves
    // its string type to the registry's check of the whole schema).
    let script_derived = stated.parts.iter().any(|(name, part)| {
        matches!(part, crate::stated::Part::Derived(..)) && script_args.contains(name)
    });
    if root.is_none() && defaults.is_empty() && !script_derived {
        if let Some(steps) = assembly_steps(pv, &stated.parts, true) {
            return quote! {{
                #[allow(unused_imports)]
                use #pv::{DerivedProperty as _, NoSchema as _};
                fn __assemble(__schema: &mut #pv::ArgsSchema) {
                    #(#steps)*
                }
                if true #(&& #same)* {
                    #pv::assembled_input(__assemble)
                } else {
                    #derived
                }
            }};
        }
    }
    let value = match root {
        Some(root) => crate::stated::build(pv, &root),
        None => assembled(pv, &stated.parts),
    };
    let value = if defaults.is_empty() {
        value
    } else {
        quote!(#pv::with_defaults(#value, &[#(#defaults),*]))
    };
    quote! {
        #pv::InputSchema::from(if true #(&& #same)* {
            #value
        } else {
            __derived_schema()
        })
    }
}

/// The input schema put together per parameter (`tool_core::__private::ArgsSchema`), in the
/// parameters' order: a stated node as built here, schemars for the others. A type without
/// `JsonSchema` reaches `NoSchema` and adds no error of its own: the argument struct's derive
/// reports it.
fn assembled(pv: &TokenStream, parts: &[(String, crate::stated::Part)]) -> TokenStream {
    let n = parts.len();
    let steps = assembly_steps(pv, parts, false).unwrap_or_default();
    quote! {{
        #[allow(unused_imports)]
        use #pv::{DerivedProperty as _, NoSchema as _};
        let mut __schema = #pv::ArgsSchema::new(#n);
        #(#steps)*
        __schema.finish()
    }}
}

/// The steps that put an input schema together on `__schema` (an `ArgsSchema`, or a `&mut`
/// to one when `planned`), a parameter each. Planned, a stated node comes with its canonical
/// text for the dump and is built only when the schema is (`None` when a node has no such
/// text).
fn assembly_steps(
    pv: &TokenStream,
    parts: &[(String, crate::stated::Part)],
    planned: bool,
) -> Option<Vec<TokenStream>> {
    let schema = if planned {
        quote!(__schema)
    } else {
        quote!(&mut __schema)
    };
    parts
        .iter()
        .map(|(name, part)| match part {
            crate::stated::Part::Stated(node, required) => {
                let built = crate::stated::build(pv, node);
                if !planned {
                    return Some(quote!(__schema.stated(#name, #required, #built);));
                }
                let text = crate::stated::canonical_property(node)?;
                Some(quote!(__schema.stated_part(#name, #required, #text, || #built);))
            }
            crate::stated::Part::Derived(ty, description) => {
                let description = description.as_deref().unwrap_or_default();
                Some(quote! {
                    (&#pv::SchemaOf::<#ty>::new()).property(#schema, #name, #description);
                })
            }
        })
        .collect()
}

/// `__derived_schema`: the input schema by schemars alone, declared defaults added.
fn derived_schema_fn(pv: &TokenStream, defaults: &[TokenStream]) -> TokenStream {
    quote! {
        fn __derived_schema() -> #pv::serde_json::Value {
            #pv::with_defaults(#pv::input_schema::<__Args>(), &[#(#defaults),*])
        }
    }
}

/// The function that makes a parameter's declared default.
fn default_fn(p: &Param<'_>) -> syn::Ident {
    format_ident!("__default_{}", p.name)
}

/// The declared `path_args`, then every `WorkspacePath` parameter not listed (its type already
/// says it is a guarded path).
fn guarded_paths(attrs: &Attrs, tool: &Tool<'_>) -> Vec<String> {
    let mut out: Vec<String> = attrs.path_args.iter().map(|a| a.value.clone()).collect();
    for p in tool.params() {
        if p.shape.base == Base::WorkspacePath && !out.contains(&p.name) {
            out.push(p.name.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(args: TokenStream, item: TokenStream) -> String {
        tool(args, item).expect("valid tool").to_string()
    }

    #[test]
    fn renamed_crate_is_the_only_runtime_path() {
        let out = expand(
            quote!(crate = renamed, risk = "safe"),
            quote! {
                /// Add.
                fn add(a: i64, b: i64) -> i64 { a + b }
            },
        );
        assert!(!out.contains("tool_core"), "{out}");
        assert!(out.contains(&format!("renamed :: {PRIVATE}")), "{out}");
    }

    #[test]
    fn default_crate_is_absolute() {
        let out = expand(
            quote!(),
            quote!(
                /// Noop.
                fn noop() {}
            ),
        );
        assert!(
            out.contains(&format!(
                ":: tool_core :: {PRIVATE} :: inventory :: submit !"
            )),
            "{out}"
        );
        assert!(out.contains("const _ : () ="), "{out}");
    }

    #[test]
    fn workspace_path_parameters_are_guarded_without_being_listed() {
        let out = expand(
            quote!(risk = "read_only"),
            quote! {
                /// List.
                fn list(path: WorkspacePath, depth: Option<u8>) {}
            },
        );
        assert!(out.contains("strings (& [\"path\"])"), "{out}");
        assert!(out.contains("path (& __ctx , \"path\") ?"), "{out}");
    }

    #[test]
    fn known_parameter_types_get_a_stated_schema_checked_by_type() {
        let out = expand(
            quote!(risk = "safe"),
            quote! {
                /// Add.
                fn add(a: i64, b: Option<u8>) -> i64 { a }
            },
        );
        assert!(out.contains("schema_object"), "{out}");
        assert!(
            out.contains("same_type :: < i64 , :: core :: primitive :: i64 > ()"),
            "{out}"
        );
        let out = expand(
            quote!(risk = "safe"),
            quote! {
                /// Add.
                fn add(a: i64, b: Point) -> i64 { a }
            },
        );
        // Put together on first use: planned from the steps, the stated node with its text.
        assert!(out.contains("assembled_input (__assemble)"), "{out}");
        assert!(out.contains("stated_part (\"a\" , true ,"), "{out}");
        assert!(
            out.contains("SchemaOf :: < Point > :: new ()) . property (__schema , \"b\" , \"\")"),
            "{out}"
        );
        assert!(out.contains("__derived_schema ()"), "{out}");
        // With a declared default, put together at start-up.
        let out = expand(
            quote!(risk = "safe"),
            quote! {
                /// Add.
                fn add(#[arg(default = 1)] a: i64, b: Point) -> i64 { a }
            },
        );
        assert!(out.contains("ArgsSchema :: new (2usize)"), "{out}");
        assert!(
            out.contains(
                "SchemaOf :: < Point > :: new ()) . property (& mut __schema , \"b\" , \"\")"
            ),
            "{out}"
        );
        assert!(!out.contains("assembled_input"), "{out}");
    }

    #[test]
    fn errors_keep_every_message() {
        let err = tool(
            quote!(risk = "nope"),
            quote!(
                fn f<T>(self, path: String) {}
            ),
        )
        .expect_err("invalid");
        let msgs: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs.len(), 5, "{msgs:?}");
    }
}
