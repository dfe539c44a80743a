//! The argument schema stated at compile time. For parameters of the common types whose schemars
//! schema is fixed (`String`, `bool`, the sized integers, `f32`/`f64`, `PathBuf`, guarded paths,
//! and `Option<_>`/`Vec<_>` of the scalars), the macro states the finished input schema as code
//! that builds the `serde_json::Value` directly, so start-up neither runs schemars nor parses
//! JSON text. It is the schema schemars derives for the argument struct, with the bounds
//! `tool_core::schema::integers` adds, key for key and in the same order; a differential test
//! compares the two for every combination handled.
//!
//! A parameter of another type (a user type) is a [`Part::Derived`]: schemars makes that
//! parameter's node at run time, the others stay stated. A `#[schemars(..)]` attribute or a doc
//! that schemars would split into a title leaves the whole schema to schemars. The type names
//! are only syntax: the expansion compares each stated parameter's type with the type the name
//! stands for here, and when one is another (a user type called `String`) the whole schema
//! takes the schemars route.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use serde_json::{json, Map, Value};

use crate::model::{last_ident, Param, Tool};

/// The stated schema of a tool's arguments, and the type equalities it rests on.
pub(crate) struct Stated {
    /// Each parameter's part of the schema, in order.
    pub(crate) parts: Vec<(String, Part)>,
    /// Per parameter whose type is named by syntax: the parameter's type and the type its
    /// name stands for. The stated schema holds only if each pair is one type.
    pub(crate) checks: Vec<(syn::Type, TokenStream)>,
}

/// One parameter's part of the input schema.
pub(crate) enum Part {
    /// A node stated here, and whether the parameter is required.
    Stated(Value, bool),
    /// A parameter of another type: schemars makes its node at run time, as the derive of the
    /// argument struct would (its type and description).
    Derived(syn::Type, Option<String>),
}

impl Stated {
    /// The whole input schema when every part is stated (before declared defaults, which are
    /// values of run time); `None` when a part is left to schemars.
    pub(crate) fn root(&self) -> Option<Value> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (name, part) in &self.parts {
            let Part::Stated(node, is_required) = part else {
                return None;
            };
            properties.insert(name.clone(), node.clone());
            if *is_required {
                required.push(Value::from(name.clone()));
            }
        }
        // The order schemars leaves the root in: the struct's keys, `properties` and `required`
        // as fields are added, then `title` and `$schema`; `tool_core` removes `title` (a
        // swap-remove under `preserve_order`, which moves `$schema` into its place) and adds an
        // empty `properties` when there is none.
        let mut root = Map::new();
        root.insert("type".to_owned(), "object".into());
        root.insert("additionalProperties".to_owned(), false.into());
        let empty = properties.is_empty();
        if !empty {
            root.insert("properties".to_owned(), properties.into());
        }
        if !required.is_empty() {
            root.insert("required".to_owned(), required.into());
        }
        root.insert(
            "$schema".to_owned(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
        if empty {
            root.insert("properties".to_owned(), Map::new().into());
        }
        Some(Value::Object(root))
    }
}

/// The stated schema of `tool`'s arguments, or `None` when schemars has to make all of it (a
/// `#[schemars(..)]` attribute, a doc that schemars would split into a title). Parameters of
/// other types than the common ones are [`Part::Derived`].
/// `guarded` parameters have the macro's own path-argument type in the argument struct.
pub(crate) fn stated(tool: &Tool<'_>, guarded: &[String]) -> Option<Stated> {
    let mut parts = Vec::new();
    let mut checks = Vec::new();
    for p in tool.params() {
        if !p.schema_attrs.is_empty() {
            return None;
        }
        let description = description(tool, p)?;
        let (mut node, optional) = if guarded.contains(&p.name) {
            let arg = json!({"type": "string", "minLength": 1});
            if p.shape.optional {
                (allow_null(arg), true)
            } else {
                (arg, false)
            }
        } else if let Some(known) = known(p.ty) {
            checks.push((p.ty.clone(), known.canonical));
            (known.schema, known.optional)
        } else {
            parts.push((p.name.clone(), Part::Derived(p.ty.clone(), description)));
            continue;
        };
        if let Some(description) = description {
            node.as_object_mut()?
                .insert("description".to_owned(), description.into());
        }
        state_integer_bounds(&mut node);
        parts.push((p.name.clone(), Part::Stated(node, !optional)));
    }
    Some(Stated { parts, checks })
}

/// Whether serde's read of each parameter into its type checks exactly what the stated schema
/// says of it, so the typed entry ([`crate::typed`]) may stand in for validation: every part
/// stated, no declared default, at most twelve parameters, and each parameter a guarded path (a non-empty string, which the
/// entry checks) or a stated type other than a float (an integer too large for 64 bits reads as
/// a float, which the call parser refuses). The type equalities of [`Stated::checks`] still
/// have to hold at run time.
pub(crate) fn typed_exact(tool: &Tool<'_>, guarded: &[String], stated: &Stated) -> bool {
    // `tool_core` reads tuples of up to twelve parameters.
    stated.root().is_some()
        && tool.params().count() <= 12
        && tool.params().all(|p| {
            p.default().is_none()
                && (guarded.contains(&p.name) || (known(p.ty).is_some() && !holds_float(p.ty)))
        })
}

/// `f32`/`f64`, alone or as the one type argument (`Option<f64>`, `Vec<f32>`).
fn holds_float(ty: &syn::Type) -> bool {
    let float = |t: &syn::Type| matches!(last_ident(t).as_deref(), Some("f32" | "f64"));
    float(ty) || type_args(ty).is_some_and(|args| args.into_iter().any(float))
}

/// Code that builds `value` at run time through `tool_core::__private` (`pv`): each map made
/// with its final size, keys in `value`'s order.
pub(crate) fn build(pv: &TokenStream, value: &Value) -> TokenStream {
    match value {
        Value::Null => quote!(#pv::serde_json::Value::Null),
        Value::Bool(b) => quote!(#pv::serde_json::Value::Bool(#b)),
        Value::Number(n) => {
            let n = if let Some(u) = n.as_u64() {
                Literal::u64_suffixed(u)
            } else if let Some(i) = n.as_i64() {
                Literal::i64_suffixed(i)
            } else {
                // Not stated today; the bits keep the value exact.
                let bits = Literal::u64_suffixed(n.as_f64().unwrap_or(f64::NAN).to_bits());
                return quote!(#pv::serde_json::Value::from(::core::primitive::f64::from_bits(#bits)));
            };
            quote!(#pv::serde_json::Value::from(#n))
        }
        Value::String(s) => quote!(#pv::serde_json::Value::String(#pv::string(#s))),
        Value::Array(items) => {
            let items = items.iter().map(|v| build(pv, v));
            quote!(#pv::schema_array([#(#items),*]))
        }
        Value::Object(map) => {
            let entries = map.iter().map(|(k, v)| {
                let v = build(pv, v);
                quote!((#k, #v))
            });
            quote!(#pv::schema_object([#(#entries),*]))
        }
    }
}

/// The registration's `canonical_input`: an item `fn __canonical_input()` and the expression
/// naming it, or no item and `None`. The function gives the canonical text of the stated input
/// schema, as the dump writes it in place (see [`canonical`]), when the stated route is the one taken (each type named by
/// syntax is the type meant) and the schema is whole: no part is left to schemars and no
/// default is declared (both are values of run time). The canonical dump copies the text
/// instead of walking the built `Value`.
pub(crate) fn canonical_input(
    pv: &TokenStream,
    tool: &Tool<'_>,
    guarded: &[String],
    has_defaults: bool,
) -> (TokenStream, TokenStream) {
    let none = (quote!(), quote!(::core::option::Option::None));
    if has_defaults {
        return none;
    }
    let Some(stated) = stated(tool, guarded) else {
        return none;
    };
    let Some(text) = stated.root().as_ref().and_then(canonical) else {
        return none;
    };
    let same = stated
        .checks
        .iter()
        .map(|(ty, canonical)| quote!(#pv::same_type::<#ty, #canonical>()));
    (
        quote! {
            fn __canonical_input() -> ::core::option::Option<&'static str> {
                if true #(&& #same)* {
                    ::core::option::Option::Some(#text)
                } else {
                    ::core::option::Option::None
                }
            }
        },
        quote!(::core::option::Option::Some(__canonical_input)),
    )
}

/// How deep the canonical dump writes an input schema: in the root object, its `tools` list
/// and the tool's object (`tool_core`'s dump copies the text only at this depth).
const DUMP_DEPTH: usize = 3;

/// `value` as the canonical dump writes a tool's input schema: keys sorted (by bytes) at every
/// level, serde_json's pretty form (two-space indent) indented to [`DUMP_DEPTH`] (JSON text has
/// no newline but between tokens), no trailing newline.
pub(crate) fn canonical(value: &Value) -> Option<String> {
    canonical_at(value, DUMP_DEPTH)
}

/// A node of a tool's input schema's `properties` as the canonical dump writes it in place:
/// two levels below the schema (its object, then `properties`).
pub(crate) fn canonical_property(node: &Value) -> Option<String> {
    canonical_at(node, DUMP_DEPTH + 2)
}

/// `value` written canonically `depth` levels deep in the dump.
fn canonical_at(value: &Value, depth: usize) -> Option<String> {
    let text = serde_json::to_string_pretty(&sorted(value)).ok()?;
    Some(text.replace('\n', &format!("\n{}", "  ".repeat(depth))))
}

/// `value` with each object's entries inserted in key order (the order a map keeps, with
/// `preserve_order` or without).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The description schemars gives the field: the one `# Arguments` text of the parameter.
/// `Some(None)`: no description; `None`: schemars would make something else of it (several
/// doc lines joined, or a `#` heading taken as a title).
fn description(tool: &Tool<'_>, p: &Param<'_>) -> Option<Option<String>> {
    let mut texts = tool
        .docs
        .args
        .iter()
        .filter(|d| d.name == p.name && !d.text.is_empty())
        .map(|d| d.text.as_str());
    let first = texts.next();
    if texts.next().is_some() {
        return None;
    }
    match first {
        None => Some(None),
        Some(text) if text.trim_ascii().starts_with('#') => None,
        Some(text) => Some(Some(text.trim_ascii().to_owned())),
    }
}

/// A parameter type named by syntax.
struct Known {
    schema: Value,
    /// The type the name stands for, by absolute path.
    canonical: TokenStream,
    /// `Option<_>`: not required.
    optional: bool,
}

fn known(ty: &syn::Type) -> Option<Known> {
    match (last_ident(ty).as_deref(), type_args(ty)?.as_slice()) {
        (Some("Option"), [inner]) => {
            let (schema, inner) = scalar(inner)?;
            Some(Known {
                schema: allow_null(schema),
                canonical: quote!(::core::option::Option<#inner>),
                optional: true,
            })
        }
        (Some("Vec"), [inner]) => {
            let (items, inner) = scalar(inner)?;
            Some(Known {
                schema: json!({"type": "array", "items": items}),
                canonical: quote!(::std::vec::Vec<#inner>),
                optional: false,
            })
        }
        (_, []) => {
            let (schema, canonical) = scalar(ty)?;
            Some(Known {
                schema,
                canonical,
                optional: false,
            })
        }
        _ => None,
    }
}

/// schemars' schema of a scalar type, and the type's absolute path.
fn scalar(ty: &syn::Type) -> Option<(Value, TokenStream)> {
    if !type_args(ty)?.is_empty() {
        return None;
    }
    let name = last_ident(ty)?;
    let number = |format: &str| json!({"type": "number", "format": format});
    let int = |format: &str| json!({"type": "integer", "format": format});
    let ranged = |format: &str, min: i64, max: i64| json!({"type": "integer", "format": format, "minimum": min, "maximum": max});
    let unsigned = |format: &str| json!({"type": "integer", "format": format, "minimum": 0});
    let schema = match name.as_str() {
        "String" => json!({"type": "string"}),
        "PathBuf" => json!({"type": "string"}),
        "bool" => json!({"type": "boolean"}),
        "f32" => number("float"),
        "f64" => number("double"),
        "i8" => ranged("int8", i8::MIN.into(), i8::MAX.into()),
        "i16" => ranged("int16", i16::MIN.into(), i16::MAX.into()),
        "i32" => int("int32"),
        "i64" => int("int64"),
        "isize" => int("int"),
        "u8" => ranged("uint8", 0, u8::MAX.into()),
        "u16" => ranged("uint16", 0, u16::MAX.into()),
        "u32" => unsigned("uint32"),
        "u64" => unsigned("uint64"),
        "usize" => unsigned("uint"),
        _ => return None,
    };
    let canonical = match name.as_str() {
        "String" => quote!(::std::string::String),
        "PathBuf" => quote!(::std::path::PathBuf),
        primitive => {
            let ident = syn::Ident::new(primitive, proc_macro2::Span::call_site());
            quote!(::core::primitive::#ident)
        }
    };
    Some((schema, canonical))
}

/// The generic arguments of a type path's last segment; `None` for anything but types (a
/// lifetime, a const) or a type that is not a plain path.
fn type_args(ty: &syn::Type) -> Option<Vec<&syn::Type>> {
    let path = match ty {
        syn::Type::Path(p) if p.qself.is_none() => &p.path,
        syn::Type::Group(g) => return type_args(&g.elem),
        syn::Type::Paren(p) => return type_args(&p.elem),
        _ => return None,
    };
    match &path.segments.last()?.arguments {
        syn::PathArguments::None => Some(Vec::new()),
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .map(|g| match g {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        syn::PathArguments::Parenthesized(_) => None,
    }
}

/// schemars' `Option<T>` of a scalar schema: `null` joins the type.
fn allow_null(mut schema: Value) -> Value {
    if let Some(Value::String(t)) = schema.get("type") {
        let t = t.clone();
        schema["type"] = json!([t, "null"]);
    }
    schema
}

/// `tool_core::schema::integers::state_integer_bounds` for the nodes stated here: a sized
/// integer gets its type's `minimum` and `maximum` where schemars left them out.
fn state_integer_bounds(value: &mut Value) {
    match value {
        Value::Object(node) => {
            let integer = match node.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
                _ => false,
            };
            let bounds = node
                .get("format")
                .and_then(Value::as_str)
                .and_then(format_bounds);
            if let (true, Some((lo, hi))) = (integer, bounds) {
                node.entry("minimum").or_insert(lo);
                node.entry("maximum").or_insert(hi);
            }
            node.values_mut().for_each(state_integer_bounds);
        }
        Value::Array(items) => items.iter_mut().for_each(state_integer_bounds),
        _ => {}
    }
}

fn format_bounds(format: &str) -> Option<(Value, Value)> {
    tool_rules::integer_format_bounds(format).map(|(lo, hi)| (lo.into(), hi.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stated_of(f: syn::ItemFn, guarded: &[&str]) -> Option<Stated> {
        let tool = Tool::from_fn(&f);
        let guarded: Vec<String> = guarded.iter().map(|s| (*s).to_owned()).collect();
        stated(&tool, &guarded)
    }

    #[test]
    fn scalars_options_and_vectors_are_stated_with_their_bounds() {
        let s = stated_of(
            syn::parse_quote! {
                /// T.
                ///
                /// # Arguments
                /// * `a` - the a
                fn t(a: u32, b: Option<i8>, c: Vec<std::string::String>, p: Option<String>) {}
            },
            &["p"],
        )
        .expect("stated");
        assert_eq!(
            serde_json::to_string(&s.root().expect("all stated")).expect("JSON"),
            concat!(
                r#"{"type":"object","additionalProperties":false,"properties":{"#,
                r#""a":{"type":"integer","format":"uint32","minimum":0,"description":"the a","maximum":4294967295},"#,
                r#""b":{"type":["integer","null"],"format":"int8","minimum":-128,"maximum":127},"#,
                r#""c":{"type":"array","items":{"type":"string"}},"#,
                r#""p":{"type":["string","null"],"minLength":1}},"#,
                r#""required":["a","c"],"$schema":"https://json-schema.org/draft/2020-12/schema"}"#
            )
        );
        let checked: Vec<String> = s.checks.iter().map(|(_, c)| c.to_string()).collect();
        assert_eq!(
            checked,
            [
                ":: core :: primitive :: u32",
                ":: core :: option :: Option < :: core :: primitive :: i8 >",
                ":: std :: vec :: Vec < :: std :: string :: String >",
            ]
        );
    }

    #[test]
    fn user_types_are_left_to_schemars_in_their_place() {
        let s = stated_of(
            syn::parse_quote! {
                /// T.
                ///
                /// # Arguments
                /// * `b` - the b
                fn t(a: u8, b: Point, c: Option<Vec<String>>) {}
            },
            &[],
        )
        .expect("assembled");
        assert!(s.root().is_none());
        let parts: Vec<String> = s
            .parts
            .iter()
            .map(|(name, part)| match part {
                Part::Stated(node, required) => format!("{name} stated {node} {required}"),
                Part::Derived(ty, description) => {
                    format!("{name} derived {} {description:?}", quote!(#ty))
                }
            })
            .collect();
        assert_eq!(
            parts,
            [
                r#"a stated {"type":"integer","format":"uint8","minimum":0,"maximum":255} true"#,
                r#"b derived Point Some("the b")"#,
                "c derived Option < Vec < String > > None",
            ]
        );
        let checked: Vec<String> = s.checks.iter().map(|(_, c)| c.to_string()).collect();
        assert_eq!(checked, [":: core :: primitive :: u8"]);
    }

    #[test]
    fn attributes_and_titles_are_left_to_schemars() {
        let cases: [syn::ItemFn; 3] = [
            syn::parse_quote!(
                fn t(#[schemars(range(max = 3))] a: u8) {}
            ),
            syn::parse_quote! {
                /// T.
                ///
                /// # Arguments
                /// * `a` - # Heading
                fn t(a: u8) {}
            },
            syn::parse_quote! {
                /// T.
                ///
                /// # Arguments
                /// * `a` - # Heading
                fn t(a: Point) {}
            },
        ];
        for f in cases {
            assert!(stated_of(f, &[]).is_none());
        }
    }

    #[test]
    fn no_parameters_still_have_properties() {
        let s = stated_of(
            syn::parse_quote!(
                fn t() {}
            ),
            &[],
        )
        .expect("stated");
        assert_eq!(
            serde_json::to_string(&s.root().expect("all stated")).expect("JSON"),
            r#"{"type":"object","additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{}}"#
        );
    }
}
