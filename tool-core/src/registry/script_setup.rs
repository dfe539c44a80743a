//! The run-time rule for the arguments that set up a script's run (`cwd_arg`, `timeout_arg`,
//! `env_arg`), the same the macro enforces at compile time: each names a property of the input
//! schema, only on a tool with script arguments, and the working directory is a path argument.

use crate::decl::ToolDecl;

/// Why `decl`'s script setup is refused, if it is.
pub(super) fn check(decl: &ToolDecl) -> Result<(), String> {
    for (key, arg) in decl.script_setup.named() {
        if decl.script_args.is_empty() {
            return Err(format!(
                "`{key}` names `{arg}`, but the tool has no script arguments to set up"
            ));
        }
        if decl.script_args.iter().any(|s| s == arg) {
            return Err(format!(
                "`{key}` names `{arg}`, which is a script argument; a script does not set up itself"
            ));
        }
        let exists = decl
            .input_schema
            .get("properties")
            .and_then(|p| p.get(arg))
            .is_some();
        if !exists {
            return Err(format!(
                "`{key}` names `{arg}`, which is not a property of the input schema"
            ));
        }
    }
    if let Some(cwd) = &decl.script_setup.cwd {
        // The working directory is checked by the path guard like any path the model chooses.
        if !decl.path_args.iter().any(|p| p == cwd) {
            return Err(format!(
                "the working directory argument `{cwd}` must also be a path argument, so the \
                 workspace guard checks it"
            ));
        }
    }
    let named: Vec<&str> = decl.script_setup.named().map(|(_, a)| a).collect();
    for (i, a) in named.iter().enumerate() {
        if named[..i].contains(a) {
            return Err(format!(
                "`{a}` is named twice among `cwd_arg`, `timeout_arg` and `env_arg`"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::decl::{ScriptLang, ScriptSetup};
    use crate::registry::ToolDef;

    fn shell(setup: ScriptSetup, path_args: &[&str]) -> Result<ToolDef, String> {
        ToolDef::builder("shell")
            .description("Runs a script")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "cwd": {"type": "string"},
                    "secs": {"type": "integer"},
                    "env": {"type": "object"}
                },
                "required": ["command"]
            }))
            .script_args(["command"], ScriptLang::Bash)
            .path_args(path_args.iter().copied())
            .script_setup(setup)
            .handler(|_ctx, _args| async { "ran" })
            .build()
            .map_err(|e| e.to_string())
    }

    fn setup(cwd: Option<&str>, timeout: Option<&str>, env: Option<&str>) -> ScriptSetup {
        ScriptSetup {
            cwd: cwd.map(str::to_owned),
            timeout: timeout.map(str::to_owned),
            env: env.map(str::to_owned),
        }
    }

    #[test]
    fn declared_setup_arguments_must_exist_and_the_cwd_be_guarded() {
        let full = shell(setup(Some("cwd"), Some("secs"), Some("env")), &["cwd"]);
        let tool = full.expect("a valid declaration");
        assert_eq!(tool.decl().script_setup.env.as_deref(), Some("env"));
        let missing = shell(setup(None, Some("timeout_secs"), None), &[]).expect_err("missing");
        assert!(
            missing.contains("`timeout_arg` names `timeout_secs`"),
            "{missing}"
        );
        let unguarded = shell(setup(Some("cwd"), None, None), &[]).expect_err("unguarded");
        assert!(
            unguarded.contains("must also be a path argument"),
            "{unguarded}"
        );
        let itself = shell(setup(None, None, Some("command")), &[]).expect_err("the script");
        assert!(itself.contains("is a script argument"), "{itself}");
        let twice = shell(setup(None, Some("env"), Some("env")), &[]).expect_err("twice");
        assert!(twice.contains("named twice"), "{twice}");
    }

    #[test]
    fn a_setup_without_script_arguments_is_refused() {
        let err = ToolDef::builder("plain")
            .description("No scripts")
            .input_schema(json!({"type": "object", "properties": {"cwd": {"type": "string"}}}))
            .path_args(["cwd"])
            .script_setup(setup(Some("cwd"), None, None))
            .handler(|_ctx, _args| async { "ran" })
            .build()
            .expect_err("nothing to set up");
        assert!(err.to_string().contains("no script arguments"), "{err}");
    }
}
