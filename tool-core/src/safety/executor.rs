//! A code executor guarded by the scanner: every block is scanned in its own language first.

use std::sync::Arc;

use futures::future::BoxFuture;

use tool_safety::{SafetyDecision, SafetyReport, SafetyScanRequest, Scanner, ScriptLang};

use crate::reason::ReasonCode;

/// One block of code to run, tagged with its language (`bash`, `sh`, `python`, `py`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// Language tag as written (e.g. the fence of a Markdown code block).
    pub language: String,
    /// The code.
    pub code: String,
}

impl CodeBlock {
    /// A block of `code` in `language`.
    pub fn new(language: impl Into<String>, code: impl Into<String>) -> Self {
        CodeBlock {
            language: language.into(),
            code: code.into(),
        }
    }

    /// The scanner language for this block's tag, if supported.
    pub fn script_lang(&self) -> Option<ScriptLang> {
        match self.language.trim().to_ascii_lowercase().as_str() {
            "bash" | "sh" | "shell" | "zsh" | "console" => Some(ScriptLang::Bash),
            "python" | "py" | "python3" => Some(ScriptLang::Python),
            _ => None,
        }
    }
}

/// What running code produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeOutput {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Exit status, when the process exited normally.
    pub exit_code: Option<i32>,
}

/// Why code did not run or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeExecError {
    /// The safety scan kept the code from running.
    #[error("blocked by the safety scan ({reason}): {}", report.rule_ids().join(", "))]
    Blocked {
        /// `safety_denied` or `review_required`.
        reason: ReasonCode,
        /// The aggregated report over all blocks.
        report: Box<SafetyReport>,
    },
    /// The executor ran the code and it failed to execute.
    #[error("execution failed: {0}")]
    Failed(String),
}

/// Runs code blocks (a sandbox, a local interpreter, a remote kernel).
pub trait CodeExecutor: Send + Sync {
    /// Run `blocks` in order and return their combined output.
    fn execute<'a>(
        &'a self,
        blocks: &'a [CodeBlock],
    ) -> BoxFuture<'a, Result<CodeOutput, CodeExecError>>;
}

/// Decides on code the scan flagged for review. Absent, review blocks.
pub trait ReviewApprover: Send + Sync {
    /// `true` to run the blocks despite the findings in `report`.
    fn approve<'a>(
        &'a self,
        blocks: &'a [CodeBlock],
        report: &'a SafetyReport,
    ) -> BoxFuture<'a, bool>;
}

/// Wraps a [`CodeExecutor`]: scans every block in its own language, aggregates the reports, and
/// never calls the inner executor when blocked.
///
/// `deny` always blocks (`safety_denied`). `needs_human_review` blocks (`review_required`) when the
/// policy sets `block_on_review`, when no approver is configured, or when the approver refuses.
/// A block in an unsupported language is a `SCAN-ERROR` deny.
pub struct GuardedCodeExecutor<E> {
    inner: E,
    scanner: Arc<Scanner>,
    approver: Option<Arc<dyn ReviewApprover>>,
    tool_name: String,
}

impl<E: CodeExecutor> GuardedCodeExecutor<E> {
    /// Guard `inner` with `scanner`; review blocks until an approver is set.
    pub fn new(inner: E, scanner: Arc<Scanner>) -> Self {
        GuardedCodeExecutor {
            inner,
            scanner,
            approver: None,
            tool_name: "code_executor".to_owned(),
        }
    }

    /// Ask `approver` about reviewed code instead of blocking it.
    pub fn with_approver(mut self, approver: Arc<dyn ReviewApprover>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The tool name written into reports and audit fields.
    pub fn with_tool_name(mut self, name: impl Into<String>) -> Self {
        self.tool_name = name.into();
        self
    }

    /// The wrapped executor.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Scan every block and aggregate (strictest decision wins).
    pub fn scan_blocks(&self, blocks: &[CodeBlock]) -> SafetyReport {
        let mut total: Option<SafetyReport> = None;
        for b in blocks {
            let report = match b.script_lang() {
                Some(lang) => self.scanner.scan(&SafetyScanRequest::new(
                    self.tool_name.clone(),
                    lang,
                    b.code.clone(),
                )),
                None => self.scanner.scan_unsupported(&self.tool_name, &b.language),
            };
            match total.as_mut() {
                Some(t) => t.merge(report),
                None => total = Some(report),
            }
        }
        total.unwrap_or_else(|| {
            self.scanner.scan(&SafetyScanRequest::new(
                self.tool_name.clone(),
                ScriptLang::Bash,
                "",
            ))
        })
    }
}

impl<E: CodeExecutor> CodeExecutor for GuardedCodeExecutor<E> {
    fn execute<'a>(
        &'a self,
        blocks: &'a [CodeBlock],
    ) -> BoxFuture<'a, Result<CodeOutput, CodeExecError>> {
        Box::pin(async move {
            let report = self.scan_blocks(blocks);
            match report.decision {
                SafetyDecision::Allow => {}
                SafetyDecision::Deny => {
                    return Err(CodeExecError::Blocked {
                        reason: ReasonCode::SafetyDenied,
                        report: Box::new(report),
                    })
                }
                SafetyDecision::NeedsHumanReview => {
                    let approved = match (&self.approver, self.scanner.policy().block_on_review) {
                        (Some(a), false) => a.approve(blocks, &report).await,
                        _ => false,
                    };
                    if !approved {
                        return Err(CodeExecError::Blocked {
                            reason: ReasonCode::ReviewRequired,
                            report: Box::new(report),
                        });
                    }
                }
            }
            self.inner.execute(blocks).await
        })
    }
}
