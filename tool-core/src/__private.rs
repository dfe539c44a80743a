//! Used by code `#[tool]` generates. Not public API: anything here may change without notice.

use std::future::Future;

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::context::{ContextModifier, ToolContext};
pub use crate::decl::{Risk, ScriptLang, ToolDecl};
pub use crate::guard::path::WorkspacePath;
pub use crate::outcome::{IntoToolOutcome, ToolOutcome};
pub use crate::registry::{
    ArgumentError, BoxFuture, Handler, PermissionCheck, ToolDef, ToolRegistration,
};
pub use std::sync::Arc;
pub use std::time::Duration;

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

fn generator() -> schemars::SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12().into_generator()
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
    v
}

/// The output schema of a `Json<T>` return.
pub fn output_schema<T: schemars::JsonSchema>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

/// Deserialize validated arguments into the generated argument struct.
pub fn from_args<T: DeserializeOwned>(args: Value) -> Result<T, ArgumentError> {
    serde_json::from_value(args).map_err(|e| ArgumentError::new(format!("invalid arguments: {e}")))
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
    let handle = tokio::task::spawn_blocking(move || f().into_outcome());
    async move {
        match handle.await {
            Ok(outcome) => outcome,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => ToolOutcome::error("the blocking task was cancelled"),
        }
    }
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

/// Wrap a `check_permissions = path` function. The signature is spelled out so a mismatch is
/// reported on the user's path.
pub fn permission_check(f: fn(&Value) -> Result<(), String>) -> PermissionCheck {
    Arc::new(f)
}
