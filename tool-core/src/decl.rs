//! What a tool declares about itself: risk, paths, scripts, concurrency, timeout.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much harm a tool can do; drives approval and the derived `read_only` / `destructive` hints.
///
/// The default is [`Risk::Mutation`]: a tool that does not say what it is must be treated as one that
/// writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// No side effects and no access to local data (e.g. a pure computation).
    Safe,
    /// Reads local state, never changes it.
    ReadOnly,
    /// Changes state in a way that can be undone or is limited in scope.
    #[default]
    Mutation,
    /// Destroys data or state (deletion, overwrite without backup).
    Destructive,
    /// Can do anything (runs code or shell commands).
    Dangerous,
}

impl Risk {
    /// Every risk level, from least to most harmful.
    pub const ALL: [Risk; 5] = [
        Risk::Safe,
        Risk::ReadOnly,
        Risk::Mutation,
        Risk::Destructive,
        Risk::Dangerous,
    ];

    /// The stable name used in declarations, dumps and audit events.
    pub fn as_str(self) -> &'static str {
        tool_rules::Risk::from(self).as_str()
    }

    /// `true` for `safe` and `read_only`: the tool never changes state.
    pub fn is_read_only(self) -> bool {
        tool_rules::Risk::from(self).is_read_only()
    }

    /// `true` for `destructive` and `dangerous`: every call needs a fresh approval.
    pub fn is_destructive(self) -> bool {
        tool_rules::Risk::from(self).is_destructive()
    }
}

impl From<Risk> for tool_rules::Risk {
    fn from(r: Risk) -> Self {
        match r {
            Risk::Safe => tool_rules::Risk::Safe,
            Risk::ReadOnly => tool_rules::Risk::ReadOnly,
            Risk::Mutation => tool_rules::Risk::Mutation,
            Risk::Destructive => tool_rules::Risk::Destructive,
            Risk::Dangerous => tool_rules::Risk::Dangerous,
        }
    }
}

impl From<tool_rules::Risk> for Risk {
    fn from(r: tool_rules::Risk) -> Self {
        match r {
            tool_rules::Risk::Safe => Risk::Safe,
            tool_rules::Risk::ReadOnly => Risk::ReadOnly,
            tool_rules::Risk::Mutation => Risk::Mutation,
            tool_rules::Risk::Destructive => Risk::Destructive,
            tool_rules::Risk::Dangerous => Risk::Dangerous,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A risk name that is not one of [`Risk::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown risk `{0}`; expected one of: safe, read_only, mutation, destructive, dangerous")]
pub struct UnknownRisk(pub String);

impl FromStr for Risk {
    type Err = UnknownRisk;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        tool_rules::Risk::from_name(s)
            .map(Risk::from)
            .ok_or_else(|| UnknownRisk(s.to_owned()))
    }
}

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
    /// JSON Schema (Draft 2020-12) of the arguments; the root is an object.
    pub input_schema: Value,
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
    /// Longest time a call may run.
    pub timeout: Option<Duration>,
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
    fn risk_agrees_with_the_shared_rules() {
        for (r, shared) in Risk::ALL.into_iter().zip(tool_rules::Risk::ALL) {
            assert_eq!(tool_rules::Risk::from(r), shared);
            assert_eq!(Risk::from(shared), r);
            assert_eq!(
                serde_json::to_value(r).ok(),
                Some(Value::from(shared.as_str()))
            );
        }
        assert_eq!(Risk::from(tool_rules::Risk::default()), Risk::default());
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
