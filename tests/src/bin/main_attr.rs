//! A program whose `main` is `#[tool_core::main] async fn main`: it is its own sandbox helper
//! without calling anything, and runs a bash tool confined from a tokio runtime. Prints the
//! call's result as JSON. Started by `it::any_main`.

use std::sync::Arc;

use tool_core::approval::FixedApprover;
use tool_core::safety::ScannerGate;
use tool_core::{Executor, ExecutorConfig};

#[tool_core::main]
async fn main() {
    let ws = std::env::args()
        .nth(1)
        .expect("the workspace as first argument");
    let registry = Arc::new(tool_examples::registry().expect("the example tools"));
    let config = ExecutorConfig::new(&ws)
        .approver(Arc::new(FixedApprover::allow()))
        .script_gate(Arc::new(
            ScannerGate::with_default_policy().expect("default policy"),
        ));
    let exec = Executor::new(registry, config).expect("the executor starts");
    let session = exec.new_session();
    let call =
        serde_json::json!({"tool": "run_bash", "args": {"command": "echo confined from $0"}});
    let r = exec.execute_text(&session, &call.to_string()).await;
    println!(
        "{}",
        serde_json::json!({
            "status": r.status.as_str(),
            "enforced": r.enforced,
            "output": r.output,
            "message": r.message,
            "tokio": tokio::runtime::Handle::try_current().is_ok(),
        })
    );
}
