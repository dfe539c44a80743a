//! The declaration rules `#[tool]` enforces at compile time. Each `check_*` reports to the `Ctxt`
//! and never stops the others, so one compile shows every mistake.

use quote::ToTokens;
use syn::Type;

use crate::attr::{self, Attrs};
use crate::ctxt::Ctxt;
use crate::model::{Base, Input, Tool};

/// Run every rule.
pub(crate) fn check(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    check_signature(cx, tool);
    check_receiver(cx, tool);
    check_generics(cx, tool);
    check_parameter_patterns(cx, tool);
    check_owned_parameters(cx, attrs, tool);
    check_single_context(cx, tool);
    check_name(cx, attrs, tool);
    check_description(cx, attrs, tool);
    check_argument_docs(cx, tool);
    check_path_args(cx, attrs, tool);
    check_unix_sockets(cx, attrs);
    check_not_paths(cx, attrs, tool);
    check_script_args(cx, attrs, tool);
    check_script_setup(cx, attrs, tool);
    check_path_like_names(cx, attrs, tool);
    check_read_only_effects(cx, attrs, tool);
    check_parameter_attributes(cx, attrs, tool);
    check_state_parameters(cx, tool);
    check_input_schema(cx, attrs, tool);
}

/// A `State<T>` parameter is a resource, not an argument: nothing about it is in the schema.
fn check_state_parameters(cx: &Ctxt, tool: &Tool<'_>) {
    for input in &tool.inputs {
        let Input::State(s) = input else {
            continue;
        };
        for attr in &s.pat.attrs {
            if crate::model::is_tool_param_attr(attr) {
                cx.error_spanned_by(
                    attr,
                    "a `State<T>` parameter is a resource registered on the executor, not an argument: it has no schema, default or deserializer to configure",
                );
            }
        }
    }
}

/// The name a `State<T>` parameter is bound to, when it is a plain name.
fn state_name(s: &crate::model::StateParam<'_>) -> Option<String> {
    match &*s.pat.pat {
        syn::Pat::Ident(p) => Some(crate::model::unraw(&p.ident)),
        _ => None,
    }
}

/// With a hand-written `input_schema`, the schema is the declaration of the arguments: the
/// function takes the whole arguments object as one parameter (a `serde_json::Value` or a
/// `Deserialize` type), and nothing may describe the arguments a second time (per-parameter
/// attributes, `# Arguments` docs) or guard them by parameter (`path_args`, `script_args`).
fn check_input_schema(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    let Some(schema) = &attrs.input_schema else {
        return;
    };
    if let attr::InputSchema::File(lit) = schema {
        check_schema_file(cx, lit);
    }
    for (i, p) in tool.params().enumerate() {
        if i == 1 {
            cx.error_spanned_by(
                p.ident,
                format!(
                    "with `{}`, a tool takes the whole arguments object as one parameter (a `serde_json::Value` or a `Deserialize` struct); {}",
                    attr::INPUT_SCHEMA,
                    param_list(tool)
                ),
            );
        }
        if let Some(a) = p.arg_attrs.first().or(p.schema_attrs.first()) {
            cx.error_spanned_by(
                a,
                format!("`{}` declares the arguments; per-parameter attributes would describe them a second time: put defaults and descriptions into the schema", attr::INPUT_SCHEMA),
            );
        }
        if p.shape.base == Base::WorkspacePath {
            cx.error_spanned_by(
                p.ty,
                format!("a tool with `{}` takes the arguments object, not a `WorkspacePath`: guarded paths need typed parameters", attr::INPUT_SCHEMA),
            );
        }
    }
    let list_of = |key: &str| {
        format!(
        "`{key}` names typed parameters; a tool with `{}` has none: declare its arguments as parameters to guard them",
        attr::INPUT_SCHEMA
    )
    };
    if let Some(first) = attrs.path_args.first() {
        cx.error_spanned_by(first, list_of(attr::PATH_ARGS));
    }
    if let Some(first) = attrs.not_paths.first() {
        cx.error_spanned_by(first, list_of(attr::NOT_PATHS));
    }
    if let Some(s) = &attrs.script_args {
        cx.error_spanned_by(s, list_of(attr::SCRIPT_ARGS));
    }
    if let Some(doc) = tool.docs.args.first() {
        cx.error_spanned_by(
            doc.attr,
            format!("`# Arguments` describes typed parameters; with `{}` the arguments are described in the schema", attr::INPUT_SCHEMA),
        );
    }
}

/// The schema file must exist (relative to the crate's manifest directory) and hold a JSON
/// object with `"type": "object"`.
fn check_schema_file(cx: &Ctxt, lit: &syn::LitStr) {
    let rel = lit.value();
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        cx.error_spanned_by(
            lit,
            "`input_schema = \"..\"` needs Cargo (CARGO_MANIFEST_DIR is not set)",
        );
        return;
    };
    let path = std::path::Path::new(&dir).join(&rel);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            cx.error_spanned_by(lit, format!("cannot read the input schema `{rel}` (relative to the crate's Cargo.toml): {e}"));
            return;
        }
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Err(e) => cx.error_spanned_by(lit, format!("the input schema `{rel}` is not JSON: {e}")),
        Ok(v) if v.get("type").and_then(serde_json::Value::as_str) != Some("object") => {
            cx.error_spanned_by(lit, format!("the input schema `{rel}` must be an object schema with `\"type\": \"object\"` at its root"))
        }
        Ok(_) => {}
    }
}

/// `#[schemars(..)]` keys that would make the schema say something the per-parameter
/// deserializer does not do.
const SCHEMARS_DENIED: &[&str] = &[
    "default",
    "rename",
    "skip",
    "skip_deserializing",
    "flatten",
    "with",
    "schema_with",
    "required",
    "extend",
    "transform",
];

/// The schema and the deserializer must agree: a parameter's default is declared once, with
/// `#[arg(default = ..)]`, and goes into both; attributes only one of them reads are refused.
fn check_parameter_attributes(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    let guarded: Vec<&str> = attrs.path_args.iter().map(|a| a.value.as_str()).collect();
    for p in tool.params() {
        for attr in &p.serde_attrs {
            cx.error_spanned_by(
                attr,
                "`#[serde(..)]` is not supported on `#[tool]` parameters: each parameter is deserialized by its name and type; declare a default with `#[arg(default = ..)]`, or give the parameter a type with its own `Deserialize`",
            );
        }
        for attr in &p.schema_attrs {
            let _ = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string);
                if let Some(key) = key.as_deref().filter(|k| SCHEMARS_DENIED.contains(k)) {
                    let msg = if key == "default" {
                        "`#[schemars(default = ..)]` changes only the schema, not what the handler receives: declare the default with `#[arg(default = ..)]`".to_owned()
                    } else {
                        format!("`#[schemars({key})]` is not supported on `#[tool]` parameters: the schema would no longer say what the handler receives")
                    };
                    cx.error_spanned_by(&meta.path, msg);
                }
                skip_meta_value(&meta)
            });
        }
        let mut seen = false;
        for attr in &p.arg_attrs {
            let parsed = attr.parse_nested_meta(|meta| {
                if !meta.path.is_ident(crate::model::ARG_DEFAULT) {
                    cx.error_spanned_by(
                        &meta.path,
                        "unknown `#[arg(..)]` key; the only key is `default = <expression>`",
                    );
                    return skip_meta_value(&meta);
                }
                let expr: syn::Expr = meta.value()?.parse()?;
                if seen {
                    cx.error_spanned_by(&meta.path, "duplicate `default`");
                }
                seen = true;
                if p.shape.optional {
                    cx.error_spanned_by(
                        &expr,
                        "an `Option` parameter is optional already (absent is `None`); take the inner type to give it a default",
                    );
                } else if guarded.contains(&p.name.as_str()) || p.shape.base == Base::WorkspacePath {
                    cx.error_spanned_by(
                        &expr,
                        "a path argument cannot have a default: the workspace guard checks the path the call names",
                    );
                }
                Ok(())
            });
            if let Err(e) = parsed {
                cx.syn_error(e);
            }
        }
    }
}

/// Consume the value of a nested-meta key (`= expr` or `(..)`) so parsing goes on to the next.
fn skip_meta_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

fn param_list(tool: &Tool<'_>) -> String {
    let names: Vec<String> = tool.params().map(|p| format!("`{}`", p.name)).collect();
    if names.is_empty() {
        "it has none".to_owned()
    } else {
        format!("its parameters are {}", names.join(", "))
    }
}

fn type_text(ty: &Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace("< ", "<")
}

/// The executor calls the function itself; it cannot provide `unsafe`, `extern` ABIs or variadics.
fn check_signature(cx: &Ctxt, tool: &Tool<'_>) {
    let sig = &tool.func.sig;
    if let Some(u) = &sig.unsafety {
        cx.error_spanned_by(u, "`#[tool]` functions cannot be `unsafe`: the executor calls them with model-chosen arguments");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "`#[tool]` functions cannot have an `extern` ABI");
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "`#[tool]` functions cannot be variadic");
    }
}

/// Tools are called without an instance: there is no `self` to pass.
fn check_receiver(cx: &Ctxt, tool: &Tool<'_>) {
    for input in &tool.inputs {
        if let Input::Receiver(r) = input {
            cx.error_spanned_by(
                r,
                "`#[tool]` functions cannot take `self`; make the tool a free function and take shared state as a `State<T>` parameter (registered on the executor with `ExecutorConfig::resource`)",
            );
        }
    }
}

/// The schema is generated once, for concrete types; a generic tool has no single schema.
fn check_generics(cx: &Ctxt, tool: &Tool<'_>) {
    let generics = &tool.func.sig.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            &generics.params,
            "`#[tool]` functions cannot be generic: the argument schema needs concrete types",
        );
    } else if let Some(w) = &generics.where_clause {
        cx.error_spanned_by(w, "`#[tool]` functions cannot have a `where` clause");
    }
    for p in tool.params() {
        if matches!(p.ty, Type::ImplTrait(_)) {
            cx.error_spanned_by(
                p.ty,
                "`impl Trait` parameters are generic; the argument schema needs a concrete type",
            );
        }
    }
}

/// A parameter's name is the argument's property name, so it must be a plain binding.
fn check_parameter_patterns(cx: &Ctxt, tool: &Tool<'_>) {
    for input in &tool.inputs {
        if let Input::Unnamed(pat) = input {
            cx.error_spanned_by(
                &pat.pat,
                "bind each parameter to a plain name: the name becomes the argument's property in the schema",
            );
        }
    }
}

/// Arguments are deserialized from the call, so the function receives owned values only.
fn check_owned_parameters(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    for input in &tool.inputs {
        let Input::Borrowed(ty) = input else {
            continue;
        };
        let target = crate::model::last_ident(&ty.elem);
        if ty.mutability.is_some() && attrs.risk().is_read_only() {
            // Reported by `check_read_only_effects`.
            continue;
        }
        let msg = match (ty.mutability.is_some(), target.as_deref()) {
            (true, Some("ToolContext")) => "the context cannot be borrowed mutably: take `&ToolContext` or `ToolContext`, and change session state by returning a `ContextModifier`".to_owned(),
            (_, Some("str")) => "tool parameters are deserialized from the call and must be owned: use `String` instead of `&str`".to_owned(),
            (_, Some("Path")) => "tool parameters are deserialized from the call and must be owned: use `WorkspacePath` (guarded) or `PathBuf` instead of `&Path`".to_owned(),
            (mutable, _) => format!(
                "tool parameters are deserialized from the call and must be owned: use `{0}` instead of `&{1}{0}`",
                type_text(&ty.elem),
                if mutable { "mut " } else { "" },
            ),
        };
        cx.error_spanned_by(ty, msg);
    }
}

/// The context is one value per call; two parameters for it would be ambiguous.
fn check_single_context(cx: &Ctxt, tool: &Tool<'_>) {
    let mut first: Option<String> = None;
    for input in &tool.inputs {
        let Input::Context(c) = input else {
            continue;
        };
        let name = c.pat.pat.to_token_stream().to_string();
        match &first {
            None => first = Some(name),
            Some(f) => cx.error_spanned_by(
                c.pat,
                format!("only one context parameter is allowed; `{f}` already receives the `ToolContext`"),
            ),
        }
    }
}

/// Model providers reject tool names outside `^[a-zA-Z0-9_-]{1,64}$`.
fn check_name(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    let valid = tool_rules::is_valid_tool_name;
    match &attrs.name {
        Some(name) if !valid(&name.value) => cx.error_spanned_by(
            name,
            format!(
                "invalid tool name `{}`: providers accept only ^[a-zA-Z0-9_-]{{1,64}}$ (letters, digits, `_`, `-`; at most 64)",
                name.value
            ),
        ),
        None if !valid(&tool.fn_name) => cx.error_spanned_by(
            &tool.func.sig.ident,
            format!(
                "the function name `{}` is not a valid tool name (^[a-zA-Z0-9_-]{{1,64}}$); set one with `{}`",
                tool.fn_name,
                "name = \"...\""
            ),
        ),
        _ => {}
    }
}

/// The description is what the model reads to decide when to call the tool.
fn check_description(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    match &attrs.description {
        Some(d) if d.value.trim().is_empty() => {
            cx.error_spanned_by(d, "the `description` is empty; say what the tool does")
        }
        Some(_) => {}
        None if tool.docs.summary.is_empty() => cx.error_spanned_by(
            &tool.func.sig.ident,
            format!(
                "tool `{}` has no description: add a doc comment (`/// What the tool does.`) or `description = \"...\"`",
                tool.fn_name
            ),
        ),
        None => {}
    }
}

/// A documented argument that does not exist is a stale doc the model would be misled by.
fn check_argument_docs(cx: &Ctxt, tool: &Tool<'_>) {
    for doc in &tool.docs.args {
        let is_context = tool.inputs.iter().any(|i| match i {
            Input::Context(c) => c.pat.pat.to_token_stream().to_string() == doc.name,
            Input::State(s) => state_name(s).as_deref() == Some(doc.name.as_str()),
            _ => false,
        });
        if tool.param(&doc.name).is_none() && !is_context {
            cx.error_spanned_by(
                doc.attr,
                format!(
                    "`# Arguments` documents `{}`, which is not a parameter of `{}`; {}",
                    doc.name,
                    tool.fn_name,
                    param_list(tool)
                ),
            );
        }
    }
}

/// The path guard checks strings; each declared path must be a string-like parameter.
fn check_path_args(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    for arg in &attrs.path_args {
        match tool.param(&arg.value) {
            None => cx.error_spanned_by(
                arg,
                format!(
                    "`{}` names `{}`, which is not a parameter of `{}`; {}",
                    attr::PATH_ARGS,
                    arg.value,
                    tool.fn_name,
                    param_list(tool)
                ),
            ),
            Some(p) if !p.shape.is_string_like() => cx.error_spanned_by(
                arg,
                format!(
                    "path argument `{}` has type `{}`; a path argument must be `WorkspacePath`, `PathBuf` or `String` (or an `Option` of one)",
                    arg.value,
                    type_text(p.ty)
                ),
            ),
            Some(_) => {}
        }
    }
}

/// A declared socket is a fixed host path the sandbox binds into the program's root: it must be
/// absolute and plain (no `..`, no `.`), so what the declaration says is what is reached.
fn check_unix_sockets(cx: &Ctxt, attrs: &Attrs) {
    for socket in &attrs.unix_sockets {
        let path = std::path::Path::new(&socket.value);
        let plain = path.is_absolute()
            && path
                .components()
                .skip(1)
                .all(|c| matches!(c, std::path::Component::Normal(_)))
            && path.components().count() > 1;
        if !plain {
            cx.error_spanned_by(
                socket,
                format!(
                    "`{}` takes absolute socket paths without `.` or `..`, e.g. `{}`; `{}` is not one",
                    attr::UNIX_SOCKETS,
                    "/run/postgresql/.s.PGSQL.5432",
                    socket.value
                ),
            );
        }
    }
}

/// An opt-out must name a real parameter and cannot contradict `path_args`.
fn check_not_paths(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    for arg in &attrs.not_paths {
        let param = tool.param(&arg.value);
        if param.is_none() {
            cx.error_spanned_by(
                arg,
                format!(
                    "`{}` names `{}`, which is not a parameter of `{}`; {}",
                    attr::NOT_PATHS,
                    arg.value,
                    tool.fn_name,
                    param_list(tool)
                ),
            );
        } else if param.is_some_and(|p| p.shape.base == Base::WorkspacePath) {
            cx.error_spanned_by(
                arg,
                format!(
                    "`{}` is a `WorkspacePath`, which is always guarded; remove it from `{}`",
                    arg.value,
                    attr::NOT_PATHS
                ),
            );
        } else if attrs.path_args.iter().any(|p| p.value == arg.value) {
            cx.error_spanned_by(
                arg,
                format!(
                    "`{}` is in both `{}` and `{}`; keep one",
                    arg.value,
                    attr::PATH_ARGS,
                    attr::NOT_PATHS
                ),
            );
        }
    }
}

/// Scripts are scanned by a language-specific scanner, so the language must be known.
fn check_script_args(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    for arg in attrs.script_args() {
        match tool.param(&arg.value) {
            None => cx.error_spanned_by(
                arg,
                format!(
                    "`{}` names `{}`, which is not a parameter of `{}`; {}",
                    attr::SCRIPT_ARGS,
                    arg.value,
                    tool.fn_name,
                    param_list(tool)
                ),
            ),
            Some(p) if p.shape.base != Base::String => cx.error_spanned_by(
                arg,
                format!(
                    "script argument `{}` has type `{}`; a script argument must be `String` or `Option<String>`",
                    arg.value,
                    type_text(p.ty)
                ),
            ),
            Some(_) if attrs.path_args.iter().any(|p| p.value == arg.value) => cx
                .error_spanned_by(
                    arg,
                    format!(
                        "`{}` is in both `{}` and `{}`; an argument is either a path or a script",
                        arg.value,
                        attr::PATH_ARGS,
                        attr::SCRIPT_ARGS
                    ),
                ),
            Some(_) => {}
        }
    }
    match (&attrs.script_args, &attrs.script_lang) {
        // An unparseable `script_lang` was reported already.
        (Some(args), None) if !args.value.is_empty() && !attrs.script_lang_given => cx.error_spanned_by(
            args,
            "`script_args` needs `script_lang = \"bash\"` or `script_lang = \"python\"` to choose the safety scanner",
        ),
        (None, Some(lang)) => cx.error_spanned_by(
            lang,
            "`script_lang` without `script_args` has nothing to scan; add `script_args = [\"...\"]`",
        ),
        _ => {}
    }
}

/// The gate reads a script's working directory, timeout and environment only from the
/// parameters the declaration names, so each must be a real, distinct, non-script parameter of a
/// script tool, and the working directory a guarded path.
fn check_script_setup(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    let mut seen: Vec<&str> = Vec::new();
    for (key, arg) in attrs.script_setup() {
        let fail =
            |why: String| cx.error_spanned_by(arg, format!("`{key}` names `{}`, {why}", arg.value));
        if attrs.script_args.is_none() {
            fail(format!(
                "but the tool has no `{}` to set up; add `{0} = [\"...\"]` or remove `{key}`",
                attr::SCRIPT_ARGS
            ));
            continue;
        }
        let Some(p) = tool.param(&arg.value) else {
            fail(format!(
                "which is not a parameter of `{}`; {}",
                tool.fn_name,
                param_list(tool)
            ));
            continue;
        };
        if attrs.script_args().iter().any(|s| s.value == arg.value) {
            fail("which is a script argument; a script does not set up itself".to_owned());
        } else if seen.contains(&arg.value.as_str()) {
            fail("which another of `cwd_arg`, `timeout_arg`, `env_arg` names already".to_owned());
        } else if key == attr::CWD_ARG
            && p.shape.base != Base::WorkspacePath
            && !attrs.path_args.iter().any(|a| a.value == arg.value)
        {
            fail(format!(
                "which is not a path argument; add `{} = [\"{}\"]` (or make it a `WorkspacePath`) so the workspace guard checks it",
                attr::PATH_ARGS,
                arg.value
            ));
        }
        seen.push(&arg.value);
    }
}

/// `true` for names that usually hold a filesystem path.
pub(crate) fn is_path_like(name: &str) -> bool {
    const EXACT: &[&str] = &["path", "file", "dir", "source", "destination", "cwd"];
    const SUFFIXES: &[&str] = &["_path", "_file", "_dir"];
    let lower = name.to_ascii_lowercase();
    EXACT.contains(&lower.as_str()) || SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// A path the guard does not know about is a path the model can point anywhere.
fn check_path_like_names(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    for p in tool.params() {
        let undeclared = matches!(p.shape.base, Base::String | Base::PathBuf)
            && is_path_like(&p.name)
            && !attrs.path_args.iter().any(|a| a.value == p.name)
            && !attrs.not_paths.iter().any(|a| a.value == p.name)
            && !attrs.script_args().iter().any(|a| a.value == p.name);
        if undeclared {
            cx.error_spanned_by(
                p.ident,
                format!(
                    "parameter `{0}` looks like a path but is not declared: add `path_args = [\"{0}\"]` (better: make it a `WorkspacePath`) so the workspace guard checks it, or opt out with `not_paths = [\"{0}\"]`",
                    p.name
                ),
            );
        }
    }
}

/// `safe` and `read_only` tools skip approval, so they must not be able to change anything.
fn check_read_only_effects(cx: &Ctxt, attrs: &Attrs, tool: &Tool<'_>) {
    let risk = attrs.risk();
    if !risk.is_read_only() {
        return;
    }
    if let Some(m) = tool.ret.modifier {
        cx.error_spanned_by(
            m,
            format!(
                "a `{}` tool cannot return a context modifier: it would change session state without approval; declare `risk = \"mutation\"` or return the output alone",
                risk.as_str()
            ),
        );
    }
    for input in &tool.inputs {
        if let Input::Borrowed(ty) = input {
            if ty.mutability.is_some() {
                cx.error_spanned_by(
                    ty,
                    format!(
                        "a `{}` tool cannot take `&mut`: it must not change state; take the parameter by value",
                        risk.as_str()
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_path_like;

    #[test]
    fn path_like_names() {
        for n in [
            "path",
            "file",
            "dir",
            "source",
            "destination",
            "cwd",
            "out_path",
            "log_file",
            "work_dir",
        ] {
            assert!(is_path_like(n), "{n}");
        }
        for n in [
            "content",
            "paths_count",
            "filename_hint",
            "profile",
            "directory_count",
        ] {
            assert!(!is_path_like(n), "{n}");
        }
    }
}
