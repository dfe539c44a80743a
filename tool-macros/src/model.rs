//! The function seen as a tool: its parameters, context parameter, return kind and docs. Every part
//! keeps its original syntax so errors can point at it.

use syn::{Attribute, FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, Type};

/// A `#[tool]` function.
pub(crate) struct Tool<'a> {
    pub(crate) func: &'a ItemFn,
    /// The function name without `r#`.
    pub(crate) fn_name: String,
    pub(crate) is_async: bool,
    pub(crate) inputs: Vec<Input<'a>>,
    pub(crate) ret: Return<'a>,
    pub(crate) docs: Docs<'a>,
}

/// One function parameter, as far as the tool is concerned.
pub(crate) enum Input<'a> {
    /// `self`, `&self`, ...
    Receiver(&'a syn::Receiver),
    /// A parameter that comes from the call's arguments.
    Arg(Param<'a>),
    /// `&ToolContext` or `ToolContext`.
    Context(ContextParam<'a>),
    /// `State<T>`: a resource registered on the executor, not an argument.
    State(StateParam<'a>),
    /// A borrowed parameter (arguments are deserialized, so they must be owned).
    Borrowed(&'a syn::TypeReference),
    /// A parameter whose pattern is not a plain name.
    Unnamed(&'a syn::PatType),
}

/// A parameter that becomes a property of the argument schema.
pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    /// The property name (the identifier without `r#`).
    pub(crate) name: String,
    pub(crate) ty: &'a Type,
    pub(crate) shape: Shape,
    /// `#[schemars(..)]` attributes (validation such as `range`, `length`), moved to the field.
    pub(crate) schema_attrs: Vec<&'a Attribute>,
    /// `#[arg(..)]` attributes: the parameter's own keys (`default = ..`).
    pub(crate) arg_attrs: Vec<&'a Attribute>,
    /// `#[serde(..)]` attributes: refused (the adapter deserializes each parameter by name).
    pub(crate) serde_attrs: Vec<&'a Attribute>,
}

/// The key of `#[arg(..)]` that declares a parameter's default.
pub(crate) const ARG_DEFAULT: &str = "default";

impl Param<'_> {
    /// The expression of `#[arg(default = ..)]`, if the attribute declares one and parses.
    /// Errors are reported by `check`.
    pub(crate) fn default(&self) -> Option<syn::Expr> {
        let mut out = None;
        for attr in &self.arg_attrs {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(ARG_DEFAULT) {
                    out = Some(meta.value()?.parse::<syn::Expr>()?);
                }
                Ok(())
            });
        }
        out
    }
}

/// A `State<T>` parameter.
pub(crate) struct StateParam<'a> {
    pub(crate) pat: &'a syn::PatType,
    /// `T`.
    pub(crate) inner: &'a Type,
}

/// The context parameter.
pub(crate) struct ContextParam<'a> {
    pub(crate) pat: &'a syn::PatType,
    pub(crate) by_ref: bool,
}

/// What a parameter type looks like, by its last path segment (type aliases are not seen).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) base: Base,
    /// Wrapped in `Option<..>`.
    pub(crate) optional: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    String,
    PathBuf,
    WorkspacePath,
    Other,
}

impl Shape {
    /// String, PathBuf, WorkspacePath or an `Option` of those: something a path guard can check.
    pub(crate) fn is_string_like(self) -> bool {
        self.base != Base::Other
    }
}

/// The return type, and what it implies.
pub(crate) struct Return<'a> {
    /// `None` for `()`.
    pub(crate) ty: Option<&'a Type>,
    /// `T` of a `Json<T>` return (also inside `Result`).
    pub(crate) json: Option<&'a Type>,
    /// The part of the return type that carries a context modifier, if any.
    pub(crate) modifier: Option<&'a Type>,
}

/// The doc comment: the summary and the `# Arguments` section.
pub(crate) struct Docs<'a> {
    pub(crate) summary: String,
    pub(crate) args: Vec<ArgDoc<'a>>,
}

/// One `* \`name\` - text` line of `# Arguments`.
pub(crate) struct ArgDoc<'a> {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) attr: &'a Attribute,
}

impl<'a> Tool<'a> {
    pub(crate) fn from_fn(func: &'a ItemFn) -> Self {
        let inputs = func.sig.inputs.iter().map(input).collect();
        let ret = match &func.sig.output {
            syn::ReturnType::Default => Return {
                ty: None,
                json: None,
                modifier: None,
            },
            syn::ReturnType::Type(_, ty) => return_kind(ty),
        };
        Tool {
            func,
            fn_name: unraw(&func.sig.ident),
            is_async: func.sig.asyncness.is_some(),
            inputs,
            ret,
            docs: docs(&func.attrs),
        }
    }

    pub(crate) fn params(&self) -> impl Iterator<Item = &Param<'a>> {
        self.inputs.iter().filter_map(|i| match i {
            Input::Arg(p) => Some(p),
            _ => None,
        })
    }

    pub(crate) fn param(&self, name: &str) -> Option<&Param<'a>> {
        self.params().find(|p| p.name == name)
    }
}

pub(crate) fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

fn input(arg: &FnArg) -> Input<'_> {
    let pat = match arg {
        FnArg::Receiver(r) => return Input::Receiver(r),
        FnArg::Typed(pat) => pat,
    };
    // `State<T>` (one type argument) is a resource, whatever the pattern (`State(db): State<Db>`).
    if last_ident(&pat.ty).as_deref() == Some("State") {
        if let [inner] = type_args(&pat.ty).as_slice() {
            return Input::State(StateParam { pat, inner });
        }
    }
    if let Type::Reference(r) = &*pat.ty {
        if r.mutability.is_none() && last_ident(&r.elem).as_deref() == Some("ToolContext") {
            return Input::Context(ContextParam { pat, by_ref: true });
        }
        return Input::Borrowed(r);
    }
    if last_ident(&pat.ty).as_deref() == Some("ToolContext") {
        return Input::Context(ContextParam { pat, by_ref: false });
    }
    let ident = match &*pat.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => &p.ident,
        _ => return Input::Unnamed(pat),
    };
    Input::Arg(Param {
        ident,
        name: unraw(ident),
        ty: &pat.ty,
        shape: shape(&pat.ty),
        schema_attrs: pat.attrs.iter().filter(|a| is_schema_attr(a)).collect(),
        arg_attrs: pat
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("arg"))
            .collect(),
        serde_attrs: pat
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("serde"))
            .collect(),
    })
}

/// `#[schemars(..)]` on a parameter: the attribute is ours to move, rustc does not know it.
pub(crate) fn is_schema_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("schemars")
}

/// `#[schemars(..)]`, `#[arg(..)]` or `#[serde(..)]` on a parameter: `#[tool]` reads (or refuses)
/// them, and removes them from the function rustc sees.
pub(crate) fn is_tool_param_attr(attr: &Attribute) -> bool {
    is_schema_attr(attr) || attr.path().is_ident("arg") || attr.path().is_ident("serde")
}

/// The function as the user wrote it, minus the parameter attributes `#[tool]` consumes.
pub(crate) fn strip_param_attrs(func: &ItemFn) -> ItemFn {
    let mut func = func.clone();
    for arg in &mut func.sig.inputs {
        if let FnArg::Typed(pat) = arg {
            pat.attrs.retain(|a| !is_tool_param_attr(a));
        }
    }
    func
}

/// The last path segment of a type path, e.g. `Option` for `std::option::Option<T>`.
pub(crate) fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

/// The generic type arguments of the last path segment.
fn type_args(ty: &Type) -> Vec<&Type> {
    let seg = match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => return type_args(&g.elem),
        Type::Paren(p) => return type_args(&p.elem),
        _ => None,
    };
    match seg.map(|s| &s.arguments) {
        Some(PathArguments::AngleBracketed(a)) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn shape(ty: &Type) -> Shape {
    let base = |ty: &Type| match last_ident(ty).as_deref() {
        Some("String") if type_args(ty).is_empty() => Base::String,
        Some("PathBuf") => Base::PathBuf,
        Some("WorkspacePath") => Base::WorkspacePath,
        _ => Base::Other,
    };
    match (last_ident(ty).as_deref(), type_args(ty).as_slice()) {
        (Some("Option"), [inner]) => Shape {
            base: base(inner),
            optional: true,
        },
        _ => Shape {
            base: base(ty),
            optional: false,
        },
    }
}

fn return_kind(ty: &Type) -> Return<'_> {
    // `Result<T, E>` (or a one-argument alias such as `io::Result<T>`) is looked through.
    let ok = match (last_ident(ty).as_deref(), type_args(ty).as_slice()) {
        (Some("Result"), [ok, ..]) => *ok,
        _ => ty,
    };
    let json = match (last_ident(ok).as_deref(), type_args(ok).as_slice()) {
        (Some("Json"), [inner]) => Some(*inner),
        // `Vec<String>` is structured output as `Json<Vec<String>>` is.
        (Some("Vec"), [inner]) if last_ident(inner).as_deref() == Some("String") => Some(ok),
        _ => None,
    };
    let modifier = match ok {
        Type::Tuple(t) => t
            .elems
            .iter()
            .any(|e| last_ident(e).as_deref() == Some("ContextModifier"))
            .then_some(ok),
        _ if last_ident(ok).as_deref() == Some("Modified") => Some(ok),
        _ => None,
    };
    Return {
        ty: Some(ty),
        json,
        modifier,
    }
}

/// The text of each literal `#[doc = ".."]`, with the one space rustdoc strips removed.
fn doc_lines(attrs: &[Attribute]) -> Vec<(String, &Attribute)> {
    let mut out = Vec::new();
    for attr in attrs {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        {
            for line in s.value().split('\n') {
                let line = line.strip_prefix(' ').unwrap_or(line);
                out.push((line.trim_end().to_owned(), attr));
            }
        }
    }
    out
}

fn heading(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?;
    Some(rest.trim_start_matches('#').trim())
}

/// Split the doc comment: the summary is everything before the first heading; the `# Arguments`
/// section lists property descriptions.
fn docs(attrs: &[Attribute]) -> Docs<'_> {
    let lines = doc_lines(attrs);
    let mut summary: Vec<&str> = Vec::new();
    let mut args: Vec<ArgDoc<'_>> = Vec::new();
    let mut section: Option<bool> = None; // None: summary; Some(true): in `# Arguments`
    for (line, attr) in &lines {
        if let Some(h) = heading(line) {
            section = Some(h.eq_ignore_ascii_case("arguments"));
            continue;
        }
        match section {
            None => summary.push(line),
            Some(true) => {
                if let Some(item) = arg_item(line) {
                    args.push(ArgDoc {
                        name: item.0,
                        text: item.1,
                        attr,
                    });
                } else if let Some(last) = args.last_mut() {
                    // A continuation line of the previous item.
                    let more = line.trim();
                    if !more.is_empty() {
                        if !last.text.is_empty() {
                            last.text.push(' ');
                        }
                        last.text.push_str(more);
                    }
                }
            }
            Some(false) => {}
        }
    }
    Docs {
        summary: summary.join("\n").trim().to_owned(),
        args,
    }
}

/// `* \`name\` - text`, `- name: text` and the like.
fn arg_item(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix('*')
        .or_else(|| rest.strip_prefix('-'))
        .or_else(|| rest.strip_prefix('+'))?
        .trim_start();
    let (name, rest) = if let Some(r) = rest.strip_prefix('`') {
        let end = r.find('`')?;
        (&r[..end], &r[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        rest.split_at(end)
    };
    if name.is_empty() {
        return None;
    }
    let text = rest
        .trim_start()
        .trim_start_matches(['-', ':', '\u{2013}', '\u{2014}'])
        .trim();
    Some((name.to_owned(), text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_of(f: &ItemFn) -> Tool<'_> {
        Tool::from_fn(f)
    }

    #[test]
    fn docs_split_into_summary_and_arguments() {
        let f: ItemFn = syn::parse_quote! {
            /// Read a manifest.
            ///
            /// Second paragraph.
            ///
            /// # Arguments
            /// * `manifest_path` - the manifest,
            ///   relative to the workspace
            /// - max_bytes: read at most this many bytes
            ///
            /// # Errors
            /// * `ignored` - not an argument section
            fn inspect(manifest_path: String, max_bytes: Option<u32>) {}
        };
        let t = tool_of(&f);
        assert_eq!(t.docs.summary, "Read a manifest.\n\nSecond paragraph.");
        let args: Vec<(&str, &str)> = t
            .docs
            .args
            .iter()
            .map(|a| (a.name.as_str(), a.text.as_str()))
            .collect();
        assert_eq!(
            args,
            [
                ("manifest_path", "the manifest, relative to the workspace"),
                ("max_bytes", "read at most this many bytes"),
            ]
        );
    }

    #[test]
    fn shapes_and_context_are_recognized() {
        let f: ItemFn = syn::parse_quote! {
            async fn t(
                ctx: &ToolContext, a: String, b: Option<PathBuf>, c: tool_core::WorkspacePath,
                d: Option<u32>, e: &str, (f, g): (u8, u8), self_ctx: ToolContext,
            ) {}
        };
        let t = tool_of(&f);
        assert!(t.is_async);
        let kinds: Vec<&str> = t
            .inputs
            .iter()
            .map(|i| match i {
                Input::Receiver(_) => "receiver",
                Input::Arg(_) => "arg",
                Input::Context(c) if c.by_ref => "ctx_ref",
                Input::Context(_) => "ctx",
                Input::Borrowed(_) => "borrowed",
                Input::Unnamed(_) => "unnamed",
                Input::State(_) => "state",
            })
            .collect();
        assert_eq!(
            kinds,
            ["ctx_ref", "arg", "arg", "arg", "arg", "borrowed", "unnamed", "ctx"]
        );
        let shapes: Vec<(Base, bool)> = t
            .params()
            .map(|p| (p.shape.base, p.shape.optional))
            .collect();
        assert_eq!(
            shapes,
            [
                (Base::String, false),
                (Base::PathBuf, true),
                (Base::WorkspacePath, false),
                (Base::Other, true),
            ]
        );
    }

    #[test]
    fn returns_are_classified() {
        let json: ItemFn = syn::parse_quote!(
            fn f() -> Result<Json<Out>, String> {}
        );
        assert!(tool_of(&json).ret.json.is_some());
        let modified: ItemFn = syn::parse_quote!(
            fn f() -> std::io::Result<Modified<String>> {}
        );
        assert!(tool_of(&modified).ret.modifier.is_some());
        let tuple: ItemFn = syn::parse_quote!(
            fn f() -> (String, ContextModifier) {}
        );
        assert!(tool_of(&tuple).ret.modifier.is_some());
        let plain: ItemFn = syn::parse_quote!(
            fn f() -> String {}
        );
        let plain = tool_of(&plain);
        assert!(plain.ret.json.is_none() && plain.ret.modifier.is_none());
    }
}
