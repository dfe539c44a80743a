//! The `#[tool(..)]` keys: parsed into [`Attrs`], each value keeping its tokens for spans.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Lit, LitStr, Meta, Token};

use crate::ctxt::Ctxt;

pub(crate) const NAME: &str = "name";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const RISK: &str = "risk";
pub(crate) const PATH_ARGS: &str = "path_args";
pub(crate) const NOT_PATHS: &str = "not_paths";
pub(crate) const SCRIPT_ARGS: &str = "script_args";
pub(crate) const SCRIPT_LANG: &str = "script_lang";
pub(crate) const CWD_ARG: &str = "cwd_arg";
pub(crate) const TIMEOUT_ARG: &str = "timeout_arg";
pub(crate) const ENV_ARG: &str = "env_arg";
pub(crate) const CONCURRENCY_SAFE: &str = "concurrency_safe";
pub(crate) const IDEMPOTENT: &str = "idempotent";
pub(crate) const OPEN_WORLD: &str = "open_world";
pub(crate) const TIMEOUT: &str = "timeout";
pub(crate) const UNIX_SOCKETS: &str = "unix_sockets";
pub(crate) const CRATE: &str = "crate";
pub(crate) const CHECK_PERMISSIONS: &str = "check_permissions";
pub(crate) const INPUT_SCHEMA: &str = "input_schema";

/// Every key, in the order error messages list them.
const KEYS: &[&str] = &[
    NAME,
    DESCRIPTION,
    RISK,
    PATH_ARGS,
    NOT_PATHS,
    SCRIPT_ARGS,
    SCRIPT_LANG,
    CWD_ARG,
    TIMEOUT_ARG,
    ENV_ARG,
    CONCURRENCY_SAFE,
    IDEMPOTENT,
    OPEN_WORLD,
    TIMEOUT,
    UNIX_SOCKETS,
    CHECK_PERMISSIONS,
    INPUT_SCHEMA,
    CRATE,
];

/// How each key is written, for error messages.
fn usage(key: &str) -> &'static str {
    match key {
        NAME => "name = \"read_file\"",
        DESCRIPTION => "description = \"what the tool does\"",
        RISK => "risk = \"read_only\"",
        PATH_ARGS => "path_args = [\"path\"]",
        NOT_PATHS => "not_paths = [\"file\"]",
        SCRIPT_ARGS => "script_args = [\"command\"]",
        SCRIPT_LANG => "script_lang = \"bash\"",
        CWD_ARG => "cwd_arg = \"cwd\"",
        TIMEOUT_ARG => "timeout_arg = \"timeout_secs\"",
        ENV_ARG => "env_arg = \"env\"",
        CONCURRENCY_SAFE => "concurrency_safe",
        IDEMPOTENT => "idempotent",
        OPEN_WORLD => "open_world",
        TIMEOUT => "timeout = \"30s\"",
        UNIX_SOCKETS => "unix_sockets = [\"/run/postgresql/.s.PGSQL.5432\"]",
        CHECK_PERMISSIONS => "check_permissions = path::to::check",
        INPUT_SCHEMA => "input_schema = \"schemas/tool.json\" (a file in the crate) or input_schema = path::to::schema_fn",
        CRATE => "crate = path::to::tool_core",
        _ => "",
    }
}

/// Risk levels and script languages: the rules shared with the runtime.
pub(crate) use tool_rules::{Risk, ScriptLang};

/// A parsed value and the tokens it came from.
#[derive(Debug, Clone)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) tokens: TokenStream,
}

impl<T> ToTokens for Spanned<T> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.tokens.to_tokens(tokens);
    }
}

/// A hand-written input schema (`input_schema = ..`).
#[derive(Debug, Clone)]
pub(crate) enum InputSchema {
    /// A JSON file, relative to the crate's manifest directory.
    File(LitStr),
    /// A `fn() -> serde_json::Value`.
    Fn(syn::Path),
}

/// Everything `#[tool(..)]` says. Absent keys keep their fail-closed defaults.
#[derive(Debug, Default)]
pub(crate) struct Attrs {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) risk: Option<Spanned<Risk>>,
    pub(crate) path_args: Vec<Spanned<String>>,
    pub(crate) not_paths: Vec<Spanned<String>>,
    pub(crate) script_args: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) script_lang: Option<Spanned<ScriptLang>>,
    /// `script_lang` was written, even if its value was rejected.
    pub(crate) script_lang_given: bool,
    /// The parameters that set up a script's run: `cwd_arg`, `timeout_arg`, `env_arg`.
    pub(crate) cwd_arg: Option<Spanned<String>>,
    pub(crate) timeout_arg: Option<Spanned<String>>,
    pub(crate) env_arg: Option<Spanned<String>>,
    pub(crate) concurrency_safe: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) unix_sockets: Vec<Spanned<String>>,
    pub(crate) check_permissions: Option<syn::Path>,
    pub(crate) input_schema: Option<InputSchema>,
    pub(crate) krate: Option<syn::Path>,
}

impl Attrs {
    pub(crate) fn risk(&self) -> Risk {
        self.risk.as_ref().map(|r| r.value).unwrap_or_default()
    }

    pub(crate) fn script_args(&self) -> &[Spanned<String>] {
        self.script_args.as_ref().map_or(&[], |s| &s.value)
    }

    /// The script setup keys that were given, each with its key name.
    pub(crate) fn script_setup(&self) -> impl Iterator<Item = (&'static str, &Spanned<String>)> {
        [
            (CWD_ARG, &self.cwd_arg),
            (TIMEOUT_ARG, &self.timeout_arg),
            (ENV_ARG, &self.env_arg),
        ]
        .into_iter()
        .filter_map(|(key, arg)| Some((key, arg.as_ref()?)))
    }
}

/// Parse the attribute arguments, reporting every bad key and value to `cx`.
pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> Attrs {
    let mut attrs = Attrs::default();
    let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
        Ok(m) => m,
        Err(e) => {
            cx.syn_error(e);
            return attrs;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for meta in &metas {
        let Some(key) = meta.path().get_ident().map(ToString::to_string) else {
            cx.error_spanned_by(
                meta.path(),
                format!("expected a `#[tool]` key, one of: {}", KEYS.join(", ")),
            );
            continue;
        };
        if !KEYS.contains(&key.as_str()) {
            let hint = match closest_key(&key) {
                Some(k) => format!("did you mean `{k}`? "),
                None => String::new(),
            };
            cx.error_spanned_by(
                meta.path(),
                format!(
                    "unknown `#[tool]` key `{key}`; {hint}expected one of: {}",
                    KEYS.join(", ")
                ),
            );
            continue;
        }
        if seen.contains(&key) {
            cx.error_spanned_by(
                meta.path(),
                format!("duplicate `#[tool]` key `{key}`; give each key once"),
            );
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            NAME => attrs.name = string(cx, meta, &key),
            DESCRIPTION => attrs.description = string(cx, meta, &key),
            RISK => attrs.risk = string(cx, meta, &key).and_then(|s| risk(cx, s)),
            PATH_ARGS => attrs.path_args = string_list(cx, meta, &key).unwrap_or_default(),
            NOT_PATHS => attrs.not_paths = string_list(cx, meta, &key).unwrap_or_default(),
            SCRIPT_ARGS => {
                attrs.script_args = string_list(cx, meta, &key).map(|value| Spanned {
                    value,
                    tokens: meta.to_token_stream(),
                })
            }
            SCRIPT_LANG => {
                attrs.script_lang_given = true;
                attrs.script_lang = string(cx, meta, &key).and_then(|s| script_lang(cx, s))
            }
            CWD_ARG => attrs.cwd_arg = string(cx, meta, &key),
            TIMEOUT_ARG => attrs.timeout_arg = string(cx, meta, &key),
            ENV_ARG => attrs.env_arg = string(cx, meta, &key),
            CONCURRENCY_SAFE => attrs.concurrency_safe = flag(cx, meta, &key),
            IDEMPOTENT => attrs.idempotent = flag(cx, meta, &key),
            OPEN_WORLD => attrs.open_world = flag(cx, meta, &key),
            TIMEOUT => attrs.timeout_ms = string(cx, meta, &key).and_then(|s| timeout(cx, s)),
            UNIX_SOCKETS => attrs.unix_sockets = string_list(cx, meta, &key).unwrap_or_default(),
            CHECK_PERMISSIONS => attrs.check_permissions = path(cx, meta, &key),
            INPUT_SCHEMA => attrs.input_schema = input_schema(cx, meta, &key),
            CRATE => attrs.krate = path(cx, meta, &key),
            _ => unreachable!("every key in KEYS is handled"),
        }
    }
    attrs
}

fn input_schema(cx: &Ctxt, meta: &Meta, key: &str) -> Option<InputSchema> {
    match value(cx, meta, key)? {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(InputSchema::File(s.clone())),
        Expr::Path(p) if p.qself.is_none() => Some(InputSchema::Fn(p.path.clone())),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` takes a file or a function: `{}`", usage(key)),
            );
            None
        }
    }
}

/// The key a typo most likely meant: at most two edits away.
fn closest_key(key: &str) -> Option<&'static str> {
    KEYS.iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()]
}

/// The value expression of `key = value`, or an error saying how the key is written.
fn value<'m>(cx: &Ctxt, meta: &'m Meta, key: &str) -> Option<&'m Expr> {
    match meta {
        Meta::NameValue(nv) => Some(&nv.value),
        _ => {
            cx.error_spanned_by(meta, format!("`{key}` needs a value: `{}`", usage(key)));
            None
        }
    }
}

fn lit_str(cx: &Ctxt, expr: &Expr, key: &str) -> Option<LitStr> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => {
            cx.error_spanned_by(
                expr,
                format!("`{key}` takes a string literal: `{}`", usage(key)),
            );
            None
        }
    }
}

fn string(cx: &Ctxt, meta: &Meta, key: &str) -> Option<Spanned<String>> {
    let lit = lit_str(cx, value(cx, meta, key)?, key)?;
    Some(Spanned {
        value: lit.value(),
        tokens: lit.to_token_stream(),
    })
}

fn string_list(cx: &Ctxt, meta: &Meta, key: &str) -> Option<Vec<Spanned<String>>> {
    let expr = value(cx, meta, key)?;
    let Expr::Array(array) = expr else {
        cx.error_spanned_by(
            expr,
            format!("`{key}` takes a list of string literals: `{}`", usage(key)),
        );
        return None;
    };
    let mut out: Vec<Spanned<String>> = Vec::new();
    for elem in &array.elems {
        let Some(lit) = lit_str(cx, elem, key) else {
            continue;
        };
        if out.iter().any(|s| s.value == lit.value()) {
            cx.error_spanned_by(
                &lit,
                format!("`{}` is listed twice in `{key}`", lit.value()),
            );
            continue;
        }
        out.push(Spanned {
            value: lit.value(),
            tokens: lit.to_token_stream(),
        });
    }
    Some(out)
}

fn flag(cx: &Ctxt, meta: &Meta, key: &str) -> bool {
    match meta {
        Meta::Path(_) => true,
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Bool(b), ..
            }) => b.value,
            other => {
                cx.error_spanned_by(
                    other,
                    format!("`{key}` is a flag: write `{key}` or `{key} = true`"),
                );
                false
            }
        },
        Meta::List(_) => {
            cx.error_spanned_by(
                meta,
                format!("`{key}` is a flag: write `{key}` or `{key} = true`"),
            );
            false
        }
    }
}

fn path(cx: &Ctxt, meta: &Meta, key: &str) -> Option<syn::Path> {
    match value(cx, meta, key)? {
        Expr::Path(p) if p.qself.is_none() => Some(p.path.clone()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => match s.parse::<syn::Path>() {
            Ok(p) => Some(p),
            Err(_) => {
                cx.error_spanned_by(s, format!("`{key}` takes a path: `{}`", usage(key)));
                None
            }
        },
        other => {
            cx.error_spanned_by(other, format!("`{key}` takes a path: `{}`", usage(key)));
            None
        }
    }
}

fn risk(cx: &Ctxt, s: Spanned<String>) -> Option<Spanned<Risk>> {
    match Risk::from_name(&s.value) {
        Some(r) => Some(Spanned {
            value: r,
            tokens: s.tokens,
        }),
        None => {
            cx.error_spanned_by(
                &s,
                format!(
                    "unknown risk `{}`; expected one of: {}",
                    s.value,
                    Risk::NAMES.join(", ")
                ),
            );
            None
        }
    }
}

fn script_lang(cx: &Ctxt, s: Spanned<String>) -> Option<Spanned<ScriptLang>> {
    let Some(value) = ScriptLang::from_name(&s.value) else {
        let valid: Vec<&str> = ScriptLang::ALL.iter().map(|l| l.as_str()).collect();
        cx.error_spanned_by(
            &s,
            format!(
                "unknown `script_lang` `{}`; expected one of: {}",
                s.value,
                valid.join(", ")
            ),
        );
        return None;
    };
    Some(Spanned {
        value,
        tokens: s.tokens,
    })
}

fn timeout(cx: &Ctxt, s: Spanned<String>) -> Option<u64> {
    let ms = parse_timeout_ms(&s.value);
    if ms.is_none() {
        cx.error_spanned_by(
            &s,
            format!(
                "cannot parse timeout `{}`; write a nonzero number followed by ms, s, m or h, e.g. `timeout = \"30s\"`",
                s.value
            ),
        );
    }
    ms
}

/// The timeout rule shared with the runtime, in milliseconds.
pub(crate) use tool_rules::parse_timeout_ms;

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse_ok(tokens: TokenStream) -> Attrs {
        let cx = Ctxt::new();
        let attrs = parse(&cx, tokens);
        cx.check().expect("valid attribute");
        attrs
    }

    fn errors(tokens: TokenStream) -> Vec<String> {
        let cx = Ctxt::new();
        let _ = parse(&cx, tokens);
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(closest_key("concurency_safe"), Some(CONCURRENCY_SAFE));
        assert_eq!(closest_key("rsik"), Some(RISK));
        assert_eq!(closest_key("colour"), None);
    }

    #[test]
    fn absent_keys_are_fail_closed() {
        let a = parse_ok(quote!());
        assert_eq!(a.risk(), Risk::Mutation);
        assert!(!a.concurrency_safe && !a.idempotent && !a.open_world);
    }

    #[test]
    fn every_key_parses() {
        let a = parse_ok(quote!(
            name = "x",
            description = "d",
            risk = "dangerous",
            path_args = ["cwd"],
            not_paths = ["file"],
            script_args = ["command"],
            script_lang = "bash",
            cwd_arg = "cwd",
            timeout_arg = "secs",
            env_arg = "env",
            concurrency_safe,
            idempotent = true,
            open_world = false,
            timeout = "2m",
            check_permissions = my::check,
            crate = renamed
        ));
        assert_eq!(a.risk(), Risk::Dangerous);
        assert_eq!(a.timeout_ms, Some(120_000));
        assert!(a.concurrency_safe && a.idempotent && !a.open_world);
        assert_eq!(a.script_args()[0].value, "command");
        let setup: Vec<(&str, &str)> = a
            .script_setup()
            .map(|(k, v)| (k, v.value.as_str()))
            .collect();
        assert_eq!(
            setup,
            [(CWD_ARG, "cwd"), (TIMEOUT_ARG, "secs"), (ENV_ARG, "env")]
        );
        assert!(a.krate.is_some() && a.check_permissions.is_some());
    }

    #[test]
    fn all_key_errors_are_reported_together() {
        let errs = errors(quote!(
            rsik = "safe",
            risk = "readonly",
            risk = "safe",
            timeout = "3 days"
        ));
        assert_eq!(errs.len(), 4, "{errs:?}");
        assert!(errs[0].starts_with("unknown `#[tool]` key `rsik`; did you mean `risk`?"));
        assert!(errs[1].contains("read_only"));
        assert!(errs[2].starts_with("duplicate"));
        assert!(errs[3].starts_with("cannot parse timeout"));
    }
}
