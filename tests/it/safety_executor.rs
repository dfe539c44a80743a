//! The guarded code executor never calls its inner executor when the scan blocks.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tool_core::safety::{
    CodeBlock, CodeExecError, CodeExecutor, CodeOutput, GuardedCodeExecutor, ReviewApprover,
    SafetyPolicy, SafetyReport, Scanner,
};
use tool_core::ReasonCode;

type Fut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Default, Clone)]
struct Counting(Arc<AtomicUsize>);

impl CodeExecutor for Counting {
    fn execute<'a>(&'a self, _: &'a [CodeBlock]) -> Fut<'a, Result<CodeOutput, CodeExecError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Ok(CodeOutput {
                stdout: "ran".into(),
                ..CodeOutput::default()
            })
        })
    }
}

struct Answer(bool, Arc<AtomicUsize>);

impl ReviewApprover for Answer {
    fn approve<'a>(&'a self, _: &'a [CodeBlock], _: &'a SafetyReport) -> Fut<'a, bool> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let yes = self.0;
        Box::pin(async move { yes })
    }
}

fn guarded(policy: SafetyPolicy) -> (GuardedCodeExecutor<Counting>, Arc<AtomicUsize>) {
    let inner = Counting::default();
    let calls = inner.0.clone();
    (
        GuardedCodeExecutor::new(inner, Arc::new(Scanner::new(policy).expect("scanner"))),
        calls,
    )
}

fn reason(r: Result<CodeOutput, CodeExecError>) -> ReasonCode {
    match r {
        Err(CodeExecError::Blocked { reason, .. }) => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

#[tokio::test]
async fn deny_in_any_block_never_reaches_the_inner_executor() {
    let (g, calls) = guarded(SafetyPolicy::default());
    let blocks = [
        CodeBlock::new("python", "print('hi')"),
        CodeBlock::new("bash", "rm -rf /"),
    ];
    assert_eq!(reason(g.execute(&blocks).await), ReasonCode::SafetyDenied);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn each_block_is_scanned_in_its_own_language() {
    let (g, calls) = guarded(SafetyPolicy::default());
    // Valid bash, invalid Python: scanned as Python it is a syntax error.
    let blocks = [CodeBlock::new("py", "echo hi")];
    assert_eq!(reason(g.execute(&blocks).await), ReasonCode::SafetyDenied);
    let r = g.scan_blocks(&[
        CodeBlock::new("sh", "ls"),
        CodeBlock::new("python", "import os\nos.system(cmd)\n"),
    ]);
    assert_eq!(r.rule_ids(), vec!["PY-OS-EXEC"]);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unsupported_language_is_denied() {
    let (g, calls) = guarded(SafetyPolicy::default());
    assert_eq!(
        reason(g.execute(&[CodeBlock::new("ruby", "puts 1")]).await),
        ReasonCode::SafetyDenied
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn review_blocks_without_approver_and_when_policy_says_so() {
    let review = [CodeBlock::new("bash", "sudo apt-get update")];
    let (g, calls) = guarded(SafetyPolicy::default());
    assert_eq!(reason(g.execute(&review).await), ReasonCode::ReviewRequired);

    let asked = Arc::new(AtomicUsize::new(0));
    let g = g.with_approver(Arc::new(Answer(false, asked.clone())));
    assert_eq!(reason(g.execute(&review).await), ReasonCode::ReviewRequired);
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    let policy = SafetyPolicy {
        block_on_review: true,
        ..SafetyPolicy::default()
    };
    let (g, calls2) = guarded(policy);
    let g = g.with_approver(Arc::new(Answer(true, asked.clone())));
    assert_eq!(reason(g.execute(&review).await), ReasonCode::ReviewRequired);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "block_on_review never asks"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst) + calls2.load(Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn allowed_or_approved_code_runs() {
    let (g, calls) = guarded(SafetyPolicy::default());
    let out = g
        .execute(&[CodeBlock::new("bash", "cargo test")])
        .await
        .expect("allowed");
    assert_eq!(out.stdout, "ran");
    let g = g.with_approver(Arc::new(Answer(true, Arc::new(AtomicUsize::new(0)))));
    g.execute(&[CodeBlock::new("bash", "sudo apt-get update")])
        .await
        .expect("approved");
    // A deny is never sent to the approver.
    assert_eq!(
        reason(g.execute(&[CodeBlock::new("bash", "curl x | sh")]).await),
        ReasonCode::SafetyDenied
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
