//! A program with a plain `#[tokio::main]`: `late` calls `dispatch_helper()` in its body (too
//! late: the runtime's threads run), and its executor must refuse to start with the fix;
//! `helper PATH` names a separate helper binary, which never runs this program's runtime, and
//! runs a bash tool confined. Prints JSON. Started by `it::any_main`.

use std::sync::Arc;

use tool_core::approval::FixedApprover;
use tool_core::safety::ScannerGate;
use tool_core::{Executor, ExecutorConfig};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ws = args.get(2).expect("mode and workspace");
    let mut config = ExecutorConfig::new(ws)
        .approver(Arc::new(FixedApprover::allow()))
        .script_gate(Arc::new(
            ScannerGate::with_default_policy().expect("default policy"),
        ));
    match args[1].as_str() {
        "late" => {
            if let Some(code) = tool_core::sandbox::dispatch_helper() {
                std::process::exit(code);
            }
        }
        "helper" => config = config.sandbox_helper(args.get(3).expect("the helper's path")),
        other => panic!("unknown mode {other}"),
    }
    let registry = Arc::new(tool_examples::registry().expect("the example tools"));
    let exec = match Executor::new(registry, config) {
        Ok(exec) => exec,
        Err(e) => {
            println!(
                "{}",
                serde_json::json!({"start": "refused", "message": e.to_string()})
            );
            return;
        }
    };
    let session = exec.new_session();
    let call = serde_json::json!({"tool": "run_bash", "args": {"command": "echo confined"}});
    let r = exec.execute_text(&session, &call.to_string()).await;
    println!(
        "{}",
        serde_json::json!({
            "start": "ok",
            "status": r.status.as_str(),
            "enforced": r.enforced,
            "output": r.output,
            "message": r.message,
        })
    );
}
