//! Used by code `#[tool]` generates. Not public API: anything here may change without notice.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::context::{ContextModifier, ToolContext};
pub use crate::decl::{InputSchema, Risk, ScriptLang, ScriptSetup, ToolDecl};
pub use crate::guard::path::WorkspacePath;
pub use crate::outcome::{IntoToolOutcome, ToolOutcome};
pub use crate::registry::registration::ToolRegistration;
pub use crate::registry::typed::{TypedCall, TypedRun};
pub use crate::registry::{ArgumentError, BoxFuture, Handler, PermissionCheck, ToolDef};
pub use crate::resource::{ResourceType, State};
pub use crate::sandbox::call::SyncRunner;
use crate::schema::assembled::generator;
pub use crate::schema::assembled::{
    forget_derived_schemas, ArgsSchema, DerivedProperty, NoSchema, SchemaOf,
};
pub use std::boxed::Box;
pub use std::string::String;
pub use std::sync::Arc;
pub use std::time::Duration;
pub use std::vec::Vec;

/// The argument-struct type that stands for a `WorkspacePath` parameter: a JSON string in the
/// schema; the handler adapter swaps it for the guarded path from the context.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(transparent)]
pub struct PathArg(#[allow(dead_code)] String);

impl schemars::JsonSchema for PathArg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PathArg".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "minLength": 1})
    }
}

/// The input schema of an argument struct: Draft 2020-12, root object, no root title.
pub fn input_schema<T: schemars::JsonSchema>() -> Value {
    let schema = generator().into_root_schema_for::<T>();
    let mut v = schema.to_value();
    if let Value::Object(m) = &mut v {
        m.remove("title");
        m.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    crate::schema::integers::state_integer_bounds(&mut v);
    v
}

/// A JSON object of a schema `#[tool]` stated at compile time, its entries in order: the map is
/// made with its final size.
pub fn schema_object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    let mut map = serde_json::Map::with_capacity(N);
    for (key, value) in entries {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// A JSON array of a schema `#[tool]` stated at compile time.
pub fn schema_array<const N: usize>(items: [Value; N]) -> Value {
    Value::Array(Vec::from(items))
}

/// An input schema stated at compile time as JSON text, as earlier macro versions wrote it.
/// Text that is not JSON cannot pass: the schema becomes a string, which the registry refuses.
pub fn stated_schema(text: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| Value::String(format!("a stated input schema is not JSON: {e}")))
}

/// An input schema `#[tool]` stated whole, built by `make` on first use; the registry takes it
/// on the macro's word at start-up (see [`InputSchema`]).
pub fn stated_input(make: fn() -> Value) -> InputSchema {
    InputSchema::stated(make)
}

/// An input schema of user-typed parameters (and no declared default) that `assemble` puts
/// together: planned now, built on first use, when the registry's checks accept the parts
/// schemars made for its user types; else built now, for the registry to check whole.
pub fn assembled_input(assemble: fn(&mut ArgsSchema)) -> InputSchema {
    match crate::schema::assembled::Assembled::plan(assemble, crate::registry::parts_hold) {
        Ok(parts) => InputSchema::assembled(parts),
        Err(value) => InputSchema::from(value),
    }
}

/// Whether `A` and `B` are one type: a stated schema holds only for the types it was stated
/// for, not for a user type of the same name.
pub fn same_type<A: ?Sized + 'static, B: ?Sized + 'static>() -> bool {
    std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
}

/// Each `#[tool]` linked in with typed parameters: its name, the input schema it declares and
/// the input schema schemars derives for it. The two must be equal (a differential test).
pub fn declared_and_derived_schemas() -> Vec<(String, Value, Value)> {
    inventory::iter::<ToolRegistration>
        .into_iter()
        .filter_map(|reg| {
            let derived = reg.derived_schema?;
            let def = (reg.build)();
            let decl = def.decl();
            Some((
                decl.name.clone(),
                decl.input_schema.value().clone(),
                derived(),
            ))
        })
        .collect()
}

/// Each `#[tool]` linked in whose input schema `#[tool]` stated whole (the registry does not
/// check it at start-up, see `InputSchema`): its name, and why the checks the registry makes of
/// any other schema refuse it, or the built-in checker might not compile it, if so (a test
/// requires neither).
pub fn stated_schemas_checked_in_full() -> Vec<(String, Result<(), String>)> {
    inventory::iter::<ToolRegistration>
        .into_iter()
        .filter_map(|reg| {
            let def = (reg.build)();
            let decl = def.decl();
            decl.input_schema
                .is_stated()
                .then(|| (decl.name.clone(), checked_in_full(decl)))
        })
        .collect()
}

/// What the registry checks of a whole schema, for one whose checks start-up leaves to
/// `#[tool]` (stated whole, or put together from parts): the checks, and that the built-in
/// checker surely compiles it, as its checker is compiled on first use.
fn checked_in_full(decl: &ToolDecl) -> Result<(), String> {
    crate::registry::check_in_full(decl)?;
    crate::schema::check::compiles_surely(decl.input_schema.value())
        .then_some(())
        .ok_or_else(|| "the built-in checker may not compile it".to_owned())
}

/// A schema put together on first use, as a test sees it: why the registry's checks of a whole
/// schema refuse it, if they do, or the built-in checker might not compile it; its canonical text
/// as the dump writes it from the parts; and as the dump writes its value.
pub struct AssembledChecked {
    /// The tool.
    pub name: String,
    /// The registry's checks of the whole schema, and the built-in checker's compile.
    pub checked: Result<(), String>,
    /// The dump's text, from the parts.
    pub from_parts: String,
    /// The dump's text, from the value.
    pub from_value: String,
}

/// Each `#[tool]` linked in whose input schema of user types is put together on first use (the
/// registry checks only the user types' parts at start-up, see `InputSchema`), checked as any
/// other schema, and its canonical text both ways (a test requires no refusal and one text).
pub fn assembled_schemas_checked_in_full() -> Vec<AssembledChecked> {
    use crate::schema::canonical::Pretty;
    inventory::iter::<ToolRegistration>
        .into_iter()
        .filter_map(|reg| {
            let def = (reg.build)();
            let decl = def.decl();
            let parts = decl.input_schema.parts()?;
            // The dump writes a tool's input schema three levels deep.
            let mut from_parts = Pretty::at_depth(3, 1024);
            let written = parts.write_canonical(&mut from_parts);
            let mut from_value = Pretty::at_depth(3, 1024);
            from_value.value(decl.input_schema.value());
            let checked = checked_in_full(decl).and_then(|()| {
                written
                    .then_some(())
                    .ok_or_else(|| "the parts were not written".to_owned())
            });
            Some(AssembledChecked {
                name: decl.name.clone(),
                checked,
                from_parts: from_parts.into_text(),
                from_value: from_value.into_text(),
            })
        })
        .collect()
}

/// Each `#[tool]` linked in whose input schema's canonical text was written at compile time:
/// its name, the input schema it declares and that text, which must be the schema's canonical
/// bytes as the dump writes them in place (a test compares them).
pub fn declared_canonical_inputs() -> Vec<(String, Value, &'static str)> {
    inventory::iter::<ToolRegistration>
        .into_iter()
        .filter_map(|reg| {
            let text = (reg.canonical_input?)()?;
            let def = (reg.build)();
            let decl = def.decl();
            Some((decl.name.clone(), decl.input_schema.value().clone(), text))
        })
        .collect()
}

/// The output schema of a `Json<T>` return.
pub fn output_schema<T: schemars::JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

/// A hand-written input schema from a file's text (`#[tool(input_schema = "file.json")]`).
/// `#[tool]` checked the file at compile time; text that is not JSON still cannot pass: the
/// schema becomes a string, which the registry refuses, naming the file.
pub fn schema_text(text: &str, file: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| Value::String(format!("the input schema `{file}` is not JSON: {e}")))
}

/// A hand-written input schema from a function (`#[tool(input_schema = path::to::f)]`).
pub fn schema_fn(f: fn() -> Value) -> Value {
    f()
}

/// The whole arguments object as the one parameter of a tool with a hand-written schema
/// (already validated against that schema by the executor).
pub fn whole_args<T: DeserializeOwned>(mut args: Value) -> Result<T, ArgumentError> {
    crate::schema::integers::integral_numbers_as_integers(&mut args);
    serde_json::from_value(args).map_err(|e| ArgumentError::new(format!("invalid arguments: {e}")))
}

/// The arguments object of a call, after refusing any key that is not a parameter.
///
/// Generated adapters take the arguments apart one parameter at a time with [`arg`] instead of
/// deriving `Deserialize` for the argument struct: deserializers are then instantiated once per
/// parameter type, shared by every tool of a crate, rather than once per tool.
pub fn args_object(mut args: Value, params: &[&str]) -> Result<Args, ArgumentError> {
    // The schema's `integer` accepted `1.0`; the parameter's integer type must too.
    crate::schema::integers::integral_numbers_as_integers(&mut args);
    let Value::Object(map) = args else {
        return Err(ArgumentError::new(format!(
            "invalid arguments: expected an object, found {}",
            json_kind(&args)
        )));
    };
    if let Some(unknown) = map.keys().find(|k| !params.contains(&k.as_str())) {
        return Err(ArgumentError::new(format!(
            "invalid arguments: unknown field `{unknown}`, expected one of {}",
            params
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(Args(map.into_iter().collect()))
}

/// The arguments of one call, taken apart by parameter name. A tool has a few parameters: a
/// list searched by name costs less than hashing each name into a map.
#[derive(Debug)]
pub struct Args(Vec<(String, Value)>);

impl Args {
    fn take(&mut self, name: &str) -> Option<Value> {
        let i = self.0.iter().position(|(k, _)| k == name)?;
        Some(self.0.swap_remove(i).1)
    }

    fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }
}

/// Take a parameter declared with `#[arg(default = ..)]`: its default when the call leaves it out.
pub fn arg_or<T: DeserializeOwned>(
    args: &mut Args,
    name: &'static str,
    default: impl FnOnce() -> T,
) -> Result<T, ArgumentError> {
    if args.contains(name) {
        arg(args, name)
    } else {
        Ok(default())
    }
}

/// A parameter's default as the schema states it; `None` if it does not serialize to JSON.
pub fn default_json<T: serde::Serialize>(value: T) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// The input schema with each declared default: the property states it and is not required.
pub fn with_defaults(mut schema: Value, defaults: &[(&str, Option<Value>)]) -> Value {
    for (name, value) in defaults {
        if let Some(Value::Object(prop)) =
            schema.get_mut("properties").and_then(|p| p.get_mut(*name))
        {
            if let Some(value) = value {
                prop.insert("default".to_owned(), value.clone());
            }
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|r| r != name);
        }
    }
    if schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        if let Value::Object(m) = &mut schema {
            m.remove("required");
        }
    }
    schema
}

/// Take one parameter out of the arguments object. A missing key deserializes as absent: `None`
/// for an `Option`, a `missing field` error for anything else (as a derived `Deserialize` does).
// Kept on several lines: the ui case of a parameter without `Deserialize` shows this line.
#[rustfmt::skip]
pub fn arg<T: DeserializeOwned>(
    args: &mut Args,
    name: &'static str,
) -> Result<T, ArgumentError> {
    match args.take(name) {
        Some(value) => T::deserialize(value)
            .map_err(|e| ArgumentError::new(format!("invalid arguments: `{name}`: {e}"))),
        None => T::deserialize(crate::registry::typed::Missing(name))
            .map_err(|e| ArgumentError::new(format!("invalid arguments: {e}"))),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The guarded path for a required `WorkspacePath` parameter. Missing means the guard did not run:
/// refuse (fail closed).
pub fn path(ctx: &ToolContext, name: &str) -> Result<WorkspacePath, ArgumentError> {
    ctx.path_arg(name).cloned().ok_or_else(|| {
        ArgumentError::new(format!(
            "path argument `{name}` was not checked by the workspace guard"
        ))
    })
}

/// The guarded path for an optional `WorkspacePath` parameter, present when the argument was.
pub fn opt_path<P>(
    ctx: &ToolContext,
    name: &str,
    raw: &Option<P>,
) -> Result<Option<WorkspacePath>, ArgumentError> {
    match raw {
        None => Ok(None),
        Some(_) => path(ctx, name).map(Some),
    }
}

/// Run a sync handler on the blocking pool. A panic is re-raised in the awaiting task so the
/// executor reports it as `panicked`.
pub fn run_blocking<F, R>(f: F) -> impl Future<Output = ToolOutcome> + Send + 'static
where
    F: FnOnce() -> R + Send + 'static,
    R: IntoToolOutcome + Send + 'static,
{
    blocking(Box::new(move || f().into_outcome()))
}

/// Where a sync handler of this call runs: taken from the context before the handler takes it.
pub fn sync_runner(ctx: &ToolContext) -> SyncRunner {
    ctx.sync_runner()
}

/// Run a sync handler for generated code: on a confined worker of the call's capability class
/// (see [`crate::sandbox`]), or on tokio's blocking pool where there is none. The handler comes
/// boxed, so the machinery is instantiated once here rather than once per sync tool.
pub fn blocking_on(
    runner: SyncRunner,
    f: Box<dyn FnOnce() -> ToolOutcome + Send + 'static>,
) -> BoxFuture {
    crate::sandbox::sync::run(runner, f)
}

/// [`run_blocking`] boxed, unconfined: tokio's blocking pool. Kept for code generated by earlier
/// macro versions; generated code now uses [`blocking_on`].
pub fn blocking(f: Box<dyn FnOnce() -> ToolOutcome + Send + 'static>) -> BoxFuture {
    let handle = tokio::task::spawn_blocking(f);
    Box::pin(async move {
        match handle.await {
            Ok(outcome) => outcome,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => ToolOutcome::error("the blocking task was cancelled"),
        }
    })
}

/// Convert a handler's return value. Generated code names the return type explicitly so a type
/// that does not convert is reported on the user's signature.
pub fn into_outcome<R: IntoToolOutcome>(value: R) -> ToolOutcome {
    value.into_outcome()
}

/// Box an outcome future.
pub fn boxed<F>(f: F) -> BoxFuture
where
    F: Future<Output = ToolOutcome> + Send + 'static,
{
    Box::pin(f)
}

/// An owned string, so generated code needs no `std` paths.
pub fn string(s: &str) -> String {
    s.to_owned()
}

/// Owned strings for `path_args` / `script_args`.
pub fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The guarded path for a required `PathBuf` path argument.
pub fn path_buf(ctx: &ToolContext, name: &str) -> Result<std::path::PathBuf, ArgumentError> {
    path(ctx, name).map(WorkspacePath::into_path_buf)
}

/// The guarded path for an optional `PathBuf` path argument.
pub fn opt_path_buf<P>(
    ctx: &ToolContext,
    name: &str,
    raw: &Option<P>,
) -> Result<Option<std::path::PathBuf>, ArgumentError> {
    opt_path(ctx, name, raw).map(|p| p.map(WorkspacePath::into_path_buf))
}

/// The guarded path for a required `String` path argument. A guarded path that is not UTF-8
/// refuses the call rather than being passed on lossily.
pub fn path_string(ctx: &ToolContext, name: &str) -> Result<String, ArgumentError> {
    path(ctx, name)?
        .into_path_buf()
        .into_os_string()
        .into_string()
        .map_err(|_| ArgumentError::new(format!("path argument `{name}` is not valid UTF-8")))
}

/// The guarded path for an optional `String` path argument.
pub fn opt_path_string<P>(
    ctx: &ToolContext,
    name: &str,
    raw: &Option<P>,
) -> Result<Option<String>, ArgumentError> {
    match raw {
        None => Ok(None),
        Some(_) => path_string(ctx, name).map(Some),
    }
}

/// The definition of a `#[tool]`: its declaration was checked at compile time.
pub fn tool_def(
    decl: ToolDecl,
    handler: Handler,
    check_permissions: Option<PermissionCheck>,
) -> ToolDef {
    ToolDef::from_macro(decl, handler, check_permissions)
}

/// The definition of an async `#[tool]`: its future may run on a confined runtime
/// (`ExecutorConfig::sandbox_async`).
pub fn async_tool_def(
    decl: ToolDecl,
    handler: Handler,
    check_permissions: Option<PermissionCheck>,
) -> ToolDef {
    ToolDef::from_macro(decl, handler, check_permissions).async_handler()
}

/// A `#[tool]` definition with its typed entry: generated only where reading the arguments into
/// the parameter types checks exactly what the input schema says (see
/// `tool_core::registry::typed`).
pub fn typed(def: ToolDef, entry: fn(&str) -> Option<TypedCall>) -> ToolDef {
    def.with_typed(entry)
}

pub use crate::registry::typed::typed_args;

/// The resource of a `State<T>` parameter. The executor checked at start-up that it is
/// registered; a context built without the executor's resources refuses the call.
pub fn state<T: Clone + Send + Sync + 'static>(
    ctx: &ToolContext,
) -> Result<State<T>, ArgumentError> {
    ctx.resource::<T>().ok_or_else(|| {
        ArgumentError::new(format!(
            "the resource `{}` of a `State` parameter is not registered",
            std::any::type_name::<T>()
        ))
    })
}

/// The resource type of a `State<T>` parameter, recorded in the registry entry.
pub fn resource_type<T: ?Sized + 'static>() -> ResourceType {
    ResourceType::of::<T>()
}

/// A `#[tool]` definition with the resources its `State<T>` parameters take.
pub fn requires(def: ToolDef, resources: &[ResourceType]) -> ToolDef {
    def.with_resources(resources.to_vec())
}

/// Wrap a `check_permissions = path` function. The signature is spelled out so a mismatch is
/// reported on the user's path.
pub fn permission_check(f: fn(&Value) -> Result<(), String>) -> PermissionCheck {
    Arc::new(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Args {
        args_object(v, &["a", "b"]).expect("an object of known keys")
    }

    #[test]
    fn absent_and_null_options_are_none_and_absent_values_are_missing() {
        let mut m = object(json!({"b": null}));
        assert_eq!(arg::<Option<u8>>(&mut m, "a").expect("absent"), None);
        assert_eq!(arg::<Option<u8>>(&mut m, "b").expect("null"), None);
        let err = arg::<u8>(&mut object(json!({})), "a").expect_err("required");
        assert_eq!(err.message, "invalid arguments: missing field `a`");
        // Only an `Option` accepts an absent value, as with a derived `Deserialize`.
        let err = arg::<()>(&mut object(json!({})), "a").expect_err("unit is not optional");
        assert!(err.message.contains("missing field `a`"), "{}", err.message);
    }

    #[test]
    fn the_exported_module_is_named_after_the_crate_version() {
        let expected = concat!(
            "tool_core::__private_",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR"),
            "_",
            env!("CARGO_PKG_VERSION_PATCH"),
        );
        // `tool-macros` generates paths into the module named after its own version.
        assert_eq!(
            crate::__private_0_1_0::PATH,
            expected,
            "rename `__private_0_1_0` in lib.rs after the new version"
        );
    }

    #[test]
    fn a_wrong_type_names_the_parameter() {
        let err = arg::<u8>(&mut object(json!({"a": 300})), "a").expect_err("out of range");
        assert!(
            err.message.starts_with("invalid arguments: `a`: "),
            "{}",
            err.message
        );
    }

    #[test]
    fn unknown_keys_and_non_objects_are_refused() {
        let err = args_object(json!({"a": 1, "c": 2}), &["a", "b"]).expect_err("unknown");
        assert_eq!(
            err.message,
            "invalid arguments: unknown field `c`, expected one of `a`, `b`"
        );
        let err = args_object(json!([1]), &["a"]).expect_err("not an object");
        assert_eq!(
            err.message,
            "invalid arguments: expected an object, found an array"
        );
    }
}
