//! Pinning: `tools.schema.json` + `tools.schema.sha256` hold exactly the registry's canonical dump
//! and its hash; any edit to the files, or any change to a tool, refuses (library, start-up check
//! and CLI exit codes).

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use tool_core::pin::{self, PinError, HASH_FILE, SCHEMA_FILE};
use tool_core::{Registry, Risk, ToolDef};

fn tool(name: &str, max: u64, risk: Risk) -> ToolDef {
    ToolDef::builder(name)
        .description(format!("The {name} tool."))
        .input_schema(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": max}
            },
            "required": ["path"],
            "additionalProperties": false
        }))
        .risk(risk)
        .path_args(["path"])
        .handler(|_, _| async { "ok" })
        .build()
        .expect("valid tool")
}

fn registry(tools: Vec<ToolDef>) -> Registry {
    tools
        .into_iter()
        .fold(Registry::builder(), |b, t| b.tool(t))
        .build()
        .expect("registry")
}

fn base() -> Registry {
    registry(vec![
        tool("list_dir", 1024, Risk::ReadOnly),
        tool("read_file", 65536, Risk::ReadOnly),
    ])
}

fn pinned_dir(reg: &Registry) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    pin::write(reg, dir.path()).expect("pin written");
    dir
}

fn run(reg: &Registry, cmd: &str, dir: &Path) -> ExitCode {
    tool_core::cli::run_with(reg, ["prog", cmd, "--dir", dir.to_str().expect("utf8")])
}

#[test]
fn write_puts_the_exact_dump_and_its_hash_on_disk() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let schema = std::fs::read(dir.path().join(SCHEMA_FILE)).expect("schema file");
    assert_eq!(schema, reg.canonical_dump());
    let hash = std::fs::read_to_string(dir.path().join(HASH_FILE)).expect("hash file");
    assert_eq!(hash.len(), 65);
    assert!(hash.ends_with('\n'));
    assert_eq!(hash.trim_end(), reg.fingerprint());
    assert_eq!(hash.trim_end(), pin::sha256_hex(&schema));
    assert!(pin::verify(&reg, dir.path()).is_ok());
    assert!(reg.verify_pin(dir.path()).is_ok());
}

#[test]
fn a_one_byte_edit_to_the_schema_file_refuses() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let path = dir.path().join(SCHEMA_FILE);
    let mut bytes = std::fs::read(&path).expect("schema file");
    // Flip the digit of `"maximum": 65536` to 75536: still valid JSON, one byte different.
    let at = bytes
        .windows(5)
        .position(|w| w == b"65536")
        .expect("the limit is in the dump");
    bytes[at] = b'7';
    std::fs::write(&path, &bytes).expect("edit");
    let err = reg.verify_pin(dir.path()).expect_err("edited file");
    assert_eq!(err.code(), "pin_hash_mismatch", "{err}");
    assert!(matches!(err, PinError::HashMismatch { .. }));
}

#[test]
fn an_edit_with_a_recomputed_hash_still_refuses_as_drift() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let path = dir.path().join(SCHEMA_FILE);
    let edited = String::from_utf8(std::fs::read(&path).expect("read"))
        .expect("utf8")
        .replace("\"risk\": \"read_only\"", "\"risk\": \"safe\"");
    std::fs::write(&path, &edited).expect("edit");
    std::fs::write(
        dir.path().join(HASH_FILE),
        format!("{}\n", pin::sha256_hex(edited.as_bytes())),
    )
    .expect("rehash");
    let err = reg.verify_pin(dir.path()).expect_err("drift");
    assert_eq!(err.code(), "pin_drift");
    let msg = err.to_string();
    assert!(
        msg.contains("changed: list_dir (risk), read_file (risk)"),
        "{msg}"
    );
}

#[test]
fn a_changed_declaration_refuses_naming_the_tool_and_field() {
    let dir = pinned_dir(&base());
    // Same names; read_file's limit changed, list_dir untouched.
    let changed = registry(vec![
        tool("list_dir", 1024, Risk::ReadOnly),
        tool("read_file", 1 << 20, Risk::ReadOnly),
    ]);
    let err = changed.verify_pin(dir.path()).expect_err("drift");
    let PinError::Drift { diff, .. } = &err else {
        panic!("expected drift, got {err}");
    };
    assert!(diff.added.is_empty() && diff.removed.is_empty());
    assert_eq!(
        diff.changed.keys().collect::<Vec<_>>(),
        ["read_file"],
        "{err}"
    );
    assert_eq!(diff.changed["read_file"], ["input_schema"]);
    assert!(
        err.to_string()
            .contains("changed: read_file (input_schema)"),
        "{err}"
    );
}

#[test]
fn added_and_removed_tools_are_named() {
    let dir = pinned_dir(&base());
    let other = registry(vec![
        tool("read_file", 65536, Risk::ReadOnly),
        tool("write_file", 65536, Risk::Destructive),
    ]);
    let err = other.verify_pin(dir.path()).expect_err("drift");
    let msg = err.to_string();
    assert!(msg.contains("added: write_file"), "{msg}");
    assert!(msg.contains("removed: list_dir"), "{msg}");
    assert!(!msg.contains("changed:"), "{msg}");
}

#[test]
fn a_malformed_hash_file_refuses() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let hash_path = dir.path().join(HASH_FILE);
    let good = std::fs::read_to_string(&hash_path).expect("hash");
    for bad in [
        good.trim_end().to_owned(),                          // no newline
        good.to_uppercase(),                                 // uppercase hex
        format!("{}\n", &good[..63]),                        // too short
        format!("sha256:{good}"),                            // prefixed
        format!("{}  tools.schema.json\n", good.trim_end()), // sha256sum style
    ] {
        std::fs::write(&hash_path, &bad).expect("write");
        let err = reg.verify_pin(dir.path()).expect_err("malformed");
        assert_eq!(err.code(), "pin_hash_malformed", "{bad:?}: {err}");
    }
}

#[test]
fn a_missing_file_refuses() {
    let reg = base();
    for file in [SCHEMA_FILE, HASH_FILE] {
        let dir = pinned_dir(&reg);
        std::fs::remove_file(dir.path().join(file)).expect("remove");
        let err = reg.verify_pin(dir.path()).expect_err("missing");
        assert_eq!(err.code(), "pin_missing", "{file}: {err}");
        assert!(err.to_string().contains(file), "{err}");
    }
    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        reg.verify_pin(empty.path().join("nowhere"))
            .expect_err("no dir")
            .code(),
        "pin_missing"
    );
}

#[test]
fn assert_pinned_panics_on_drift_with_the_diff() {
    let dir = pinned_dir(&base());
    let changed = registry(vec![tool("list_dir", 1024, Risk::Mutation)]);
    // Only meaningful when the update switch is off in this test process.
    if std::env::var(pin::UPDATE_ENV).is_ok() {
        return;
    }
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pin::assert_pinned(&changed, dir.path())
    }))
    .expect_err("drift must panic");
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("removed: read_file"), "{msg}");
    assert!(msg.contains("changed: list_dir ("), "{msg}");
    assert!(msg.contains("TOOLS_PIN_UPDATE=1"), "{msg}");
    pin::assert_pinned(&base(), dir.path());
}

#[test]
fn the_pinned_file_is_the_canonical_export() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(SCHEMA_FILE)).expect("read"))
            .expect("json");
    assert_eq!(on_disk["schema_version"], json!(1));
    assert_eq!(
        std::fs::read(dir.path().join(SCHEMA_FILE)).expect("read"),
        tool_core::schema::export::export(
            &reg,
            tool_core::schema::export::Format::Canonical,
            Default::default()
        )
        .expect("canonical")
    );
}

#[test]
fn cli_pin_then_verify_exit_codes() {
    let reg = base();
    let dir = tempfile::tempdir().expect("tempdir");
    let pin_dir = dir.path().join("pin");
    assert_eq!(
        run(&reg, "verify", &pin_dir),
        ExitCode::from(1),
        "nothing pinned yet"
    );
    assert_eq!(run(&reg, "pin", &pin_dir), ExitCode::SUCCESS);
    assert_eq!(run(&reg, "verify", &pin_dir), ExitCode::SUCCESS);
    let changed = registry(vec![
        tool("list_dir", 1024, Risk::ReadOnly),
        tool("read_file", 1 << 20, Risk::ReadOnly),
    ]);
    assert_eq!(run(&changed, "verify", &pin_dir), ExitCode::from(1));
    let hash = pin_dir.join(HASH_FILE);
    std::fs::write(&hash, "0".repeat(64)).expect("break hash");
    assert_eq!(run(&reg, "verify", &pin_dir), ExitCode::from(1));
    // Re-pinning repairs it.
    assert_eq!(run(&changed, "pin", &pin_dir), ExitCode::SUCCESS);
    assert_eq!(run(&changed, "verify", &pin_dir), ExitCode::SUCCESS);
    assert_eq!(
        tool_core::cli::run_with(&reg, ["prog", "verify"]),
        ExitCode::from(2),
        "--dir is required"
    );
}

/// A registry whose dump is several times the pieces the check reads and compares at a time.
fn large() -> Registry {
    let tools = (0..150)
        .map(|i| tool(&format!("tool_{i:03}"), 1000 + i, Risk::ReadOnly))
        .collect();
    registry(tools)
}

/// Overwrite the schema file with `bytes` and the hash file with their hash, so only the drift
/// check can refuse.
fn rewrite_with_hash(dir: &Path, bytes: &[u8]) {
    std::fs::write(dir.join(SCHEMA_FILE), bytes).expect("write schema");
    std::fs::write(dir.join(HASH_FILE), format!("{}\n", pin::sha256_hex(bytes))).expect("rehash");
}

#[test]
fn a_large_pin_holds_and_its_hash_becomes_the_fingerprint() {
    let pinned = large();
    let dir = pinned_dir(&pinned);
    let dump = std::fs::read(dir.path().join(SCHEMA_FILE)).expect("read");
    assert!(dump.len() > 100_000, "{} bytes", dump.len());
    // A registry that never made its dump or its fingerprint: the check records the hash.
    let fresh = large();
    fresh.verify_pin(dir.path()).expect("pin holds");
    assert_eq!(fresh.fingerprint(), pin::sha256_hex(&dump));
    assert_eq!(fresh.canonical_dump(), &dump[..]);
    // A registry that made its dump before.
    let made = large();
    assert_eq!(made.canonical_dump(), &dump[..]);
    made.verify_pin(dir.path()).expect("pin holds");
}

#[test]
fn any_difference_in_a_large_pin_is_drift_wherever_it_is() {
    let dir = pinned_dir(&large());
    let dump = std::fs::read(dir.path().join(SCHEMA_FILE)).expect("read");
    let last = dump.len() - 1;
    // Around the edges of the pieces read (32 KiB at a time) and at both ends.
    let offsets = [
        0,
        1,
        16 * 1024 - 1,
        16 * 1024,
        32 * 1024 - 1,
        32 * 1024,
        50_000,
        last,
    ];
    let mut cases: Vec<(String, Vec<u8>)> = offsets
        .iter()
        .map(|&at| {
            let mut edited = dump.clone();
            edited[at] = if edited[at] == b' ' { b'\t' } else { b' ' };
            (format!("one byte changed at {at}"), edited)
        })
        .collect();
    let mut longer = dump.clone();
    longer.push(b'\n');
    cases.push(("one byte appended".into(), longer));
    cases.push(("last byte cut".into(), dump[..last].to_vec()));
    cases.push(("cut at 32 KiB".into(), dump[..32 * 1024].to_vec()));
    cases.push(("empty".into(), Vec::new()));
    let mut doubled = dump.clone();
    doubled.extend_from_slice(&dump);
    cases.push(("written twice".into(), doubled));
    for (case, bytes) in cases {
        rewrite_with_hash(dir.path(), &bytes);
        // Both a registry that makes its dump in the check and one that made it before.
        for reg in [large(), {
            let r = large();
            r.canonical_dump();
            r
        }] {
            let err = reg.verify_pin(dir.path()).expect_err(&case);
            assert_eq!(err.code(), "pin_drift", "{case}: {err}");
            assert_ne!(reg.fingerprint(), pin::sha256_hex(&bytes), "{case}");
        }
    }
    rewrite_with_hash(dir.path(), &dump);
    large().verify_pin(dir.path()).expect("restored");
}

#[test]
fn a_schema_path_that_cannot_be_read_refuses_as_unreadable() {
    let reg = base();
    let dir = pinned_dir(&reg);
    let schema = dir.path().join(SCHEMA_FILE);
    std::fs::remove_file(&schema).expect("remove");
    std::fs::create_dir(&schema).expect("a directory in its place");
    let err = reg.verify_pin(dir.path()).expect_err("unreadable");
    assert_eq!(err.code(), "pin_unreadable", "{err}");
    assert!(err.to_string().contains(SCHEMA_FILE), "{err}");
    // Refused for the schema file before the hash file is looked at.
    std::fs::write(dir.path().join(HASH_FILE), "not a hash").expect("spoil the hash");
    let err = reg.verify_pin(dir.path()).expect_err("unreadable");
    assert_eq!(err.code(), "pin_unreadable", "{err}");
}

/// Start-up never waits on a pin file: a FIFO or a device in place of either file is refused
/// as unreadable, before a byte is read (a FIFO would wait for a writer, `/dev/zero` never ends).
#[test]
fn a_pin_file_that_is_not_a_regular_file_refuses_without_waiting() {
    let reg = base();
    for name in [SCHEMA_FILE, HASH_FILE] {
        for kind in ["fifo", "device"] {
            let dir = pinned_dir(&reg);
            let path = dir.path().join(name);
            std::fs::remove_file(&path).expect("remove");
            match kind {
                "fifo" => {
                    let made = std::process::Command::new("mkfifo")
                        .arg(&path)
                        .status()
                        .expect("mkfifo runs");
                    assert!(made.success());
                }
                _ => std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink"),
            }
            // On another thread, so a wait fails the test instead of hanging it.
            let (tx, rx) = std::sync::mpsc::channel();
            let (reg, dir_path) = (reg.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                let _ = tx.send(
                    reg.verify_pin(&dir_path)
                        .map_err(|e| (e.code(), e.to_string())),
                );
            });
            let result = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{name} as a {kind}: the check waited"));
            let (code, message) = result.expect_err("refused");
            assert_eq!(code, "pin_unreadable", "{name} as a {kind}: {message}");
            assert!(
                message.contains(name) && message.contains("not a regular file"),
                "{message}"
            );
        }
    }
}
