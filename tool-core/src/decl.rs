//! What a tool declares about itself: risk, paths, scripts, concurrency, timeout.

use std::time::Duration;

use serde_json::Value;

mod input_schema;
pub use input_schema::InputSchema;

/// How much harm a tool can do; drives approval and the derived `read_only` / `destructive` hints
/// (the one definition, shared with the macro through `tool-rules`).
pub use tool_rules::{Risk, UnknownRisk};

/// The language of a script argument, which selects the safety scanner (shared with the macro
/// and the scanner through `tool-rules`).
pub use tool_rules::{ScriptLang, UnknownScriptLang};

/// Everything a tool declares: the contract the executor enforces before the handler runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    /// Unique name, `^[a-zA-Z0-9_-]{1,64}$`.
    pub name: String,
    /// What the tool does, shown to the model.
    pub description: String,
    /// JSON Schema (Draft 2020-12) of the arguments; the root is an object. Reads as a
    /// `serde_json::Value`; one that `#[tool]` states whole is built on first use (see
    /// [`InputSchema`]).
    pub input_schema: InputSchema,
    /// JSON Schema of a structured output (`Json<T>` returns), if any.
    pub output_schema: Option<Value>,
    /// How much harm the tool can do.
    pub risk: Risk,
    /// May run at the same time as other concurrency-safe calls.
    pub concurrency_safe: bool,
    /// Calling twice with the same arguments has the same effect as once.
    pub idempotent: bool,
    /// Talks to the world outside the workspace (network, external services).
    pub open_world: bool,
    /// Arguments that are paths inside the workspace, guarded before the call.
    pub path_args: Vec<String>,
    /// Arguments holding scripts, scanned before the call.
    pub script_args: Vec<String>,
    /// Language of the script arguments.
    pub script_lang: Option<ScriptLang>,
    /// The arguments that set up a script's run (working directory, timeout, environment), by
    /// name; the script gate scans what they hold with the script. Empty for other tools.
    pub script_setup: ScriptSetup,
    /// Longest time a call may run.
    pub timeout: Option<Duration>,
    /// Pathname UNIX sockets on the host the tool may connect to (absolute paths): the only
    /// ones its programs can reach, and what lets its handler create UNIX sockets at all (see
    /// [`crate::sandbox`]). Empty: none.
    pub unix_sockets: Vec<String>,
    /// Where the tool was defined (`module::path` or a label), for error messages.
    pub source: String,
}

impl ToolDecl {
    /// `true` when the risk says the tool never changes state.
    pub fn read_only(&self) -> bool {
        self.risk.is_read_only()
    }

    /// `true` when the risk says every call needs a fresh approval.
    pub fn destructive(&self) -> bool {
        self.risk.is_destructive()
    }

    /// `true` when calling twice has the effect of calling once: declared `idempotent`, or
    /// read-only (a call that changes nothing is idempotent by definition). What every export
    /// states (the canonical dump's `idempotent`, MCP's `idempotentHint`).
    pub fn is_idempotent(&self) -> bool {
        self.idempotent || self.read_only()
    }
}

/// The arguments of a script tool that set up its run, named by its declaration
/// (`#[tool(cwd_arg = "cwd", timeout_arg = "timeout_secs", env_arg = "env")]`). The script gate
/// judges the script in that working directory, against that timeout and with the names of that
/// environment; an argument not named here is never read as one of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptSetup {
    /// The argument holding the working directory (a path, relative to the workspace).
    pub cwd: Option<String>,
    /// The argument holding the timeout, in whole seconds.
    pub timeout: Option<String>,
    /// The argument holding the environment, an object of variable names to values (the scan
    /// reads only the names).
    pub env: Option<String>,
}

impl ScriptSetup {
    /// `true` when no argument is named.
    pub fn is_empty(&self) -> bool {
        self.cwd.is_none() && self.timeout.is_none() && self.env.is_none()
    }

    /// Each named argument with the declaration key that named it (`cwd_arg`, `timeout_arg`,
    /// `env_arg`), in that order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("cwd_arg", &self.cwd),
            ("timeout_arg", &self.timeout),
            ("env_arg", &self.env),
        ]
        .into_iter()
        .filter_map(|(key, arg)| Some((key, arg.as_deref()?)))
    }
}

/// `true` when `name` is accepted by every model provider: `^[a-zA-Z0-9_-]{1,64}$`.
pub use tool_rules::is_valid_tool_name;

/// Parse a timeout such as `30s`, `500ms`, `2m` or `1h` (the rule of `#[tool(timeout = ..)]`).
pub fn parse_timeout(text: &str) -> Option<Duration> {
    tool_rules::parse_timeout_ms(text).map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risk_round_trips_and_rejects_unknown() {
        for r in Risk::ALL {
            assert_eq!(r.as_str().parse::<Risk>(), Ok(r));
        }
        assert!("readonly".parse::<Risk>().is_err());
        assert_eq!(Risk::default(), Risk::Mutation);
    }

    #[test]
    fn risk_serializes_as_its_declaration_name() {
        for r in Risk::ALL {
            assert_eq!(serde_json::to_value(r).ok(), Some(Value::from(r.as_str())));
            assert_eq!(
                serde_json::from_value::<Risk>(Value::from(r.as_str())).ok(),
                Some(r)
            );
        }
        assert!(serde_json::from_value::<Risk>(Value::from("readonly")).is_err());
    }

    #[test]
    fn names_follow_provider_rule() {
        assert!(is_valid_tool_name("read_file"));
        assert!(is_valid_tool_name("a-b_9"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("read file"));
        assert!(!is_valid_tool_name("x.y"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
    }

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_timeout("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_timeout("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_timeout("0s"), None);
        assert_eq!(parse_timeout("s"), None);
        assert_eq!(parse_timeout("10 parsecs"), None);
    }
}
