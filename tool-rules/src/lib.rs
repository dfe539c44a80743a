//! The declaration rules the `#[tool]` macro checks at compile time and the runtime checks again
//! for dynamic tools, written once: risk names, timeouts, tool names and script languages; and
//! [`redact`], what counts as a secret, for the scanner's evidence and the audit log alike.
//!
//! This crate has no dependencies, so the proc-macro crate can use it without pulling in the
//! runtime. The optional `serde` feature (the runtime's) gives [`Risk`] its snake_case serde form.
#![warn(missing_docs)]

pub mod redact;

use std::fmt;
use std::str::FromStr;

/// How much harm a tool can do, by name.
///
/// The default is [`Risk::Mutation`]: a tool that does not say what it is must be treated as one
/// that writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Risk {
    /// No side effects and no access to local data.
    Safe,
    /// Reads local state, never changes it.
    ReadOnly,
    /// Changes state in a way that can be undone or is limited in scope.
    #[default]
    Mutation,
    /// Destroys data or state.
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

    /// The stable names of [`Risk::ALL`], in the same order, for "expected one of" messages.
    pub const NAMES: [&'static str; 5] =
        ["safe", "read_only", "mutation", "destructive", "dangerous"];

    /// The stable name used in declarations, dumps and audit events.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::ReadOnly => "read_only",
            Risk::Mutation => "mutation",
            Risk::Destructive => "destructive",
            Risk::Dangerous => "dangerous",
        }
    }

    /// The risk called `name`, if any.
    pub fn from_name(name: &str) -> Option<Risk> {
        Risk::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// `true` for `safe` and `read_only`: the tool never changes state.
    pub fn is_read_only(self) -> bool {
        matches!(self, Risk::Safe | Risk::ReadOnly)
    }

    /// `true` for `destructive` and `dangerous`: every call needs a fresh approval.
    pub fn is_destructive(self) -> bool {
        matches!(self, Risk::Destructive | Risk::Dangerous)
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A risk name that is not one of [`Risk::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRisk(pub String);

impl fmt::Display for UnknownRisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown risk `{}`; expected one of: {}",
            self.0,
            Risk::NAMES.join(", ")
        )
    }
}

impl std::error::Error for UnknownRisk {}

impl FromStr for Risk {
    type Err = UnknownRisk;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Risk::from_name(s).ok_or_else(|| UnknownRisk(s.to_owned()))
    }
}

/// The language of a script argument, which selects the safety scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptLang {
    /// A bash (POSIX shell) command or script.
    Bash,
    /// Python 3 source.
    Python,
}

impl ScriptLang {
    /// Every script language.
    pub const ALL: [ScriptLang; 2] = [ScriptLang::Bash, ScriptLang::Python];

    /// The stable name used in declarations, dumps and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ScriptLang::Bash => "bash",
            ScriptLang::Python => "python",
        }
    }

    /// The language called `name`, if any.
    pub fn from_name(name: &str) -> Option<ScriptLang> {
        ScriptLang::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for ScriptLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A script language name that is not `bash` or `python`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScriptLang(pub String);

impl fmt::Display for UnknownScriptLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown script language `{}`; expected one of: bash, python",
            self.0
        )
    }
}

impl std::error::Error for UnknownScriptLang {}

impl FromStr for ScriptLang {
    type Err = UnknownScriptLang;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ScriptLang::from_name(s).ok_or_else(|| UnknownScriptLang(s.to_owned()))
    }
}

/// The bounds (minimum, maximum) of the integer `format`s schemars writes for Rust's sized
/// integer types (`int8` … `uint64`): what the schema of such a parameter states, so that the
/// validator refuses what the handler's type could not hold.
pub fn integer_format_bounds(format: &str) -> Option<(i64, u64)> {
    let signed = |lo: i64, hi: i64| Some((lo, hi.unsigned_abs()));
    match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" => signed(i64::MIN, i64::MAX),
        "uint8" => Some((0, u8::MAX.into())),
        "uint16" => Some((0, u16::MAX.into())),
        "uint32" => Some((0, u32::MAX.into())),
        "uint64" => Some((0, u64::MAX)),
        _ => None,
    }
}

/// The longest tool name model providers accept.
pub const TOOL_NAME_MAX_LEN: usize = 64;

/// The tool-name rule as providers document it.
pub const TOOL_NAME_PATTERN: &str = "^[a-zA-Z0-9_-]{1,64}$";

/// `true` when `name` is accepted by every model provider: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= TOOL_NAME_MAX_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parse a timeout such as `30s`, `500ms`, `2m` or `1h` into milliseconds: digits, then `ms`,
/// `s`, `m` or `h`. Zero, a missing number or unit, and overflow are rejected.
pub fn parse_timeout_ms(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        _ => None,
    }?;
    (ms != 0).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risk_names_round_trip() {
        for (r, n) in Risk::ALL.into_iter().zip(Risk::NAMES) {
            assert_eq!(r.as_str(), n);
            assert_eq!(Risk::from_name(n), Some(r));
        }
        assert_eq!(Risk::from_name("readonly"), None);
        assert_eq!(Risk::default(), Risk::Mutation);
    }

    #[test]
    fn script_langs_round_trip() {
        for l in ScriptLang::ALL {
            assert_eq!(l.as_str().parse::<ScriptLang>(), Ok(l));
        }
        assert_eq!(
            "ruby".parse::<ScriptLang>(),
            Err(UnknownScriptLang("ruby".to_owned()))
        );
    }

    #[test]
    fn names_follow_provider_rule() {
        assert!(is_valid_tool_name("read_file"));
        assert!(is_valid_tool_name("a-b_9"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("read file"));
        assert!(!is_valid_tool_name("x.y"));
        assert!(!is_valid_tool_name("é"));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
    }

    #[test]
    fn timeouts_parse() {
        assert_eq!(parse_timeout_ms("30s"), Some(30_000));
        assert_eq!(parse_timeout_ms("250ms"), Some(250));
        assert_eq!(parse_timeout_ms(" 250ms "), Some(250));
        assert_eq!(parse_timeout_ms("2m"), Some(120_000));
        assert_eq!(parse_timeout_ms("1h"), Some(3_600_000));
        assert_eq!(parse_timeout_ms("0s"), None);
        assert_eq!(parse_timeout_ms("s"), None);
        assert_eq!(parse_timeout_ms("30"), None);
        assert_eq!(parse_timeout_ms("10 parsecs"), None);
        assert_eq!(parse_timeout_ms("99999999999999999999h"), None);
        assert_eq!(parse_timeout_ms(&format!("{}h", u64::MAX / 1000)), None);
    }
}
