//! Static safety scan of bash and Python scripts before they run.
//!
//! The scanner never executes anything: it parses the script (bash with tree-sitter-bash, Python
//! with ruff_python_parser), walks the syntax tree and reports [`SafetyFinding`]s, aggregated into
//! a [`SafetyReport`] whose decision is the strictest finding (`deny` > `needs_human_review` >
//! `allow`).
//!
//! Fail-closed choices, on purpose:
//! - a script with a syntax error (any `ERROR` or `MISSING` node in bash, any error ruff reports
//!   in Python) is denied (`BASH-SYNTAX`, `PY-SYNTAX`): a partial tree hides what would run;
//! - a scanner failure (parser gave up, a rule panicked, nesting too deep, unsupported language)
//!   is a `SCAN-ERROR` deny;
//! - a policy override may loosen a rule, but never to `allow` for a rule whose default risk is
//!   `critical` (refused when the scanner is built; findings of custom critical rules are capped at
//!   `needs_human_review`), and never for `SCAN-ERROR`, `SCAN-INPUT` or the syntax rules.
//!
//! This is not a sandbox: encodings, aliases, reflection and multi-stage downloads can evade a
//! static scan. Run untrusted code in an isolated process with least privilege as well.
//!
//! The crate stands alone: it knows nothing of the executor. `tool-core` plugs it in behind its
//! `ScriptGate` seam (feature `safety`) and re-exports this API as `tool_core::safety`.
//!
//! Layout, bottom up: `decision` (the allow / review / deny scale), `effects` (what a script
//! touches), `report` (the types every module shares), `describe` (effects in words) and
//! `redact`; `catalog` (built-in
//! rules), `paths`, `policy`, `sink`, `rule`; the two language scanners `bash/` and `python/`,
//! which never import each other (a nested script goes back through the sink to the scanner);
//! `audit` and `scanner` on top.
#![warn(missing_docs)]

mod audit;
mod bash;
mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
mod decision;
mod describe;
mod effects;
mod id;
mod judge;
mod paths;
mod policy;
mod python;
mod redact;
mod report;
mod rule;
mod scanner;
mod sink;

pub use audit::script_sha256;
pub use catalog::{builtin_rules, RuleInfo};
pub use decision::SafetyDecision;
pub use describe::SUMMARY_MAX_EFFECTS;
pub use effects::{
    every_process, human_bytes, payload_runs_code, DataSource, Direction, Effect, EffectKind,
    EffectTarget, ALLOCATION_REVIEW_BYTES, EVERY_PROCESS, QUIET_HOST_INFO,
};
pub use policy::{Allowlist, PolicyError, RuleAction, SafetyPolicy};
pub use redact::{redact, EVIDENCE_MAX_CHARS};
pub use report::{
    RiskCategory, RiskLevel, SafetyFinding, SafetyReport, SafetyScanRequest, ScriptLang,
};
pub use rule::{SafetyRule, ScanContext};
pub use scanner::Scanner;
pub use sink::{CallView, CommandView};
