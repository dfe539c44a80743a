//! The audit never holds a secret: secret-shaped tokens in script effect targets (paths, URLs,
//! environment names) are masked, and a call id that is not of a known id shape is recorded as a
//! hash, for the token shapes of the common providers.

use std::sync::Arc;

use serde_json::json;
use tool_core::audit::{audit_call_id, JsonlAuditSink};
use tool_core::executor::{Executor, ExecutorConfig};
use tool_core::safety::{SafetyPolicy, Scanner, ScannerGate};
use tool_core::{CallOptions, Registry};

use crate::exec_support::call;

/// One token of each common provider's shape (made up, of the real length and alphabet).
const SECRETS: &[&str] = &[
    "sk-Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9gHi1jKl3mNo5p",
    "sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9gHi1jKl3mNo5pQr7s",
    "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9Zx8Yw7Vu6",
    "ghp_Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9g",
    "gho_Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9g",
    "github_pat_11ABCDEFG0Ab3dEf5hIj7l_Mn9pQr1tUv3xYz5aBc7dEf9gHi1jKl3mNo5p",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-1234567890123-Ab3dEf5hIj7lMn9pQr1tUv3x",
    "xoxp-123456789012-1234567890123-Ab3dEf5hIj7lMn9pQr1tUv3x",
    "AIzaSyAb3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dE",
    "sk_live_51Ab3dEf5hIj7lMn9pQr1tUv3xYz",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.Ab3dEf5hIj7lMn9pQr1tUv3xYz5aBc7dEf9",
];

/// A secret that is only one because of the key in front of it (no provider prefix).
const CONTEXT_SECRET: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";

fn executor(ws: &std::path::Path, log: &std::path::Path) -> Executor {
    let gate = ScannerGate::new(Arc::new(
        Scanner::new(SafetyPolicy::default()).expect("valid policy"),
    ));
    // No approver: every script is scanned (and its effects audited), none runs.
    let config = ExecutorConfig::new(ws)
        .script_gate(Arc::new(gate))
        .audit(Arc::new(JsonlAuditSink::open(log).expect("open")))
        .error_budget(0);
    let registry: Arc<Registry> = Arc::new(tool_examples::registry().expect("valid registry"));
    Executor::new(registry, config).expect("executor")
}

fn scripts(secret: &str) -> Vec<(&'static str, String)> {
    vec![
        ("run_bash", format!("cat /tmp/{secret}/x")),
        ("run_bash", format!("rm -rf /tmp/{secret}/")),
        ("run_bash", format!("cat /tmp/{secret}")),
        (
            "run_bash",
            format!("curl -s 'https://example.com/v1?token={secret}'"),
        ),
        (
            "run_bash",
            format!("curl -s https://me:{secret}@example.com/x"),
        ),
        (
            "run_bash",
            format!("curl -s https://example.com/{secret}/y"),
        ),
        ("run_bash", format!("echo ${{{secret}}}")),
        (
            "run_python",
            format!("import os\nos.remove('/tmp/{secret}')\n"),
        ),
        (
            "run_python",
            format!("open('/tmp/x/{secret}.json').read()\n"),
        ),
        (
            "run_python",
            format!("import os\nprint(os.environ['GITHUB_TOKEN={secret}'])\n"),
        ),
    ]
}

fn script_call(tool: &str, script: &str) -> tool_core::call::ToolCall {
    let key = if tool == "run_bash" {
        "command"
    } else {
        "code"
    };
    call(tool, json!({ key: script }))
}

#[tokio::test]
async fn effect_targets_never_hold_a_provider_token() {
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let exec = executor(ws.path(), &log);
    let session = exec.new_session();
    let mut calls = 0;
    for secret in SECRETS {
        for (tool, script) in scripts(secret) {
            exec.execute(&session, script_call(tool, &script), CallOptions::default())
                .await;
            calls += 1;
        }
    }
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(text.lines().count(), calls);
    let mut targets = 0;
    for (line, secret) in text.lines().zip(SECRETS.iter().flat_map(|s| [*s; 10])) {
        assert!(!line.contains(secret), "{secret} reached the audit: {line}");
        // The token's tail alone (after its provider prefix) never survives either.
        assert!(!line.contains(&secret[secret.len() - 12..]), "{line}");
        let event: serde_json::Value = serde_json::from_str(line).expect("json");
        targets += event["safety"]["effects"].as_array().map_or(0, |e| {
            e.iter()
                .filter(|e| {
                    e["target"]
                        .as_str()
                        .is_some_and(|t| t.contains("<redacted>"))
                })
                .count()
        });
    }
    // The effects were recorded, masked: the test looks at what it means to.
    assert!(
        targets >= SECRETS.len() * 5,
        "only {targets} masked targets"
    );
}

#[tokio::test]
async fn values_of_secret_named_keys_are_masked_in_targets() {
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let exec = executor(ws.path(), &log);
    let session = exec.new_session();
    for script in [
        format!("curl -s 'https://example.com/v1?x=1&api_key={CONTEXT_SECRET}'"),
        format!("cat /tmp/token={CONTEXT_SECRET}/x"),
        format!("curl -s 'https://example.com/?access_token={CONTEXT_SECRET}&a=b'"),
        format!("cat '/tmp/-----BEGIN RSA PRIVATE KEY-----{CONTEXT_SECRET}'"),
    ] {
        exec.execute(
            &session,
            script_call("run_bash", &script),
            CallOptions::default(),
        )
        .await;
    }
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(text.lines().count(), 4);
    assert!(!text.contains(CONTEXT_SECRET), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
}

#[tokio::test]
async fn call_ids_not_of_a_known_shape_are_recorded_as_hashes() {
    let ws = tempfile::tempdir().expect("tempdir");
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let exec = executor(ws.path(), &log);
    let session = exec.new_session();
    let kept = [
        "call_abc123DEF456ghi789JKL0",
        "toolu_01A09q90qw90lq917835lq9",
        "42",
        "123e4567-e89b-12d3-a456-426614174000",
    ];
    let script = |id: &str| script_call("run_bash", "ls").with_id(id);
    for id in SECRETS.iter().copied().chain(kept) {
        exec.execute(&session, script(id), CallOptions::default())
            .await;
    }
    // An id given by the caller instead of the provider goes the same way.
    let options = CallOptions {
        call_id: Some(format!("call_{}", SECRETS[6])),
        ..CallOptions::default()
    };
    exec.execute(&session, script_call("run_bash", "ls"), options)
        .await;
    let text = std::fs::read_to_string(&log).expect("log");
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["call_id"].as_str().expect("call_id").to_owned()
        })
        .collect();
    assert_eq!(ids.len(), SECRETS.len() + kept.len() + 1);
    for (id, secret) in ids.iter().zip(SECRETS) {
        assert!(!text.contains(secret), "{secret} reached the audit");
        assert_eq!(*id, audit_call_id(secret));
        assert!(id.starts_with("sha256:") && id.len() == 71, "{id}");
    }
    assert_eq!(&ids[SECRETS.len()..SECRETS.len() + kept.len()], kept);
    assert!(ids[ids.len() - 1].starts_with("sha256:"));
}
