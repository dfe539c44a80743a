//! The attacks a keyed log must show: each rewrites a log the way an attacker with write access
//! (and, for forward security, the stolen current epoch key) would, and each is detected by the
//! verifier and refused by a writer that reopens the log.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::key::EpochKey;
use super::keyed::{self, seal, state_path, walk};
use super::*;
use crate::approval::ApprovalStatus;
use crate::decl::Risk;
use crate::gate::ScanMode;
use crate::reason::ReasonCode;
use crate::status::CallStatus;

const EPOCH: u64 = 3;

fn key() -> AuditKey {
    AuditKey::from_bytes(&[0x5a; 32]).expect("key")
}

fn event(n: u64) -> AuditEvent {
    AuditEvent {
        timestamp: timestamp_now(),
        session: "session-0".into(),
        tool: Some("read_file".into()),
        call_id: format!("call-{n}"),
        status: CallStatus::Ok,
        code: None,
        error_code: None,
        step: None,
        risk: Some(Risk::ReadOnly),
        approval: ApprovalStatus::NotRequired,
        rule_ids: Vec::new(),
        duration_ms: n,
        args_sha256: None,
        registry_fingerprint: "f".repeat(64),
        truncated: false,
        scan: ScanMode::On,
        enforced: "none".into(),
        safety: None,
    }
}

/// A closed keyed log of `n` events (epochs of [`EPOCH`] lines) in a fresh directory.
fn log_of(n: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let sink = JsonlAuditSink::open_keyed(&path, &key(), EPOCH).expect("open");
    for i in 0..n {
        sink.record(&event(i)).expect("record");
    }
    drop(sink);
    (dir, path)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    if !lines.is_empty() {
        text.push('\n');
    }
    std::fs::write(path, text).expect("write");
}

fn verify(path: &Path) -> Result<KeyedSummary, KeyedError> {
    let file = std::fs::File::open(path).expect("open");
    let state = std::fs::read(state_path(path)).ok();
    verify_keyed(BufReader::new(file), &key(), state.as_deref())
}

fn reason(r: Result<KeyedSummary, KeyedError>) -> KeyedBreak {
    match r {
        Err(KeyedError::Broken { reason, .. }) => reason,
        other => panic!("expected a broken log, got {other:?}"),
    }
}

/// Reopening is refused with `audit_tampered`.
fn reopen_refused(path: &Path) -> KeyedBreak {
    match JsonlAuditSink::open_keyed(path, &key(), EPOCH) {
        Err(e @ AuditLogError::Tampered { reason, .. }) => {
            assert_eq!(e.reason_code(), Some(ReasonCode::AuditTampered));
            assert!(e.to_string().starts_with("audit_tampered"), "{e}");
            reason
        }
        other => panic!("expected audit_tampered, got {other:?}"),
    }
}

/// Recompute `seq` and `prev_sha256` of every line from `from` on, as an attacker without the
/// key would (the MACs are kept), or with `key` re-MAC them.
fn rechain(lines: &mut [String], from: usize, key: Option<&EpochKey>) {
    for i in from..lines.len() {
        let prev = if i == 0 {
            GENESIS_SHA256.to_owned()
        } else {
            line_sha256(lines[i - 1].as_bytes())
        };
        let mut v: Value = serde_json::from_str(&lines[i]).expect("json");
        let obj = v.as_object_mut().expect("object");
        let mac = obj.remove("mac").expect("mac");
        obj.insert("seq".into(), Value::from(i as u64 + 1));
        obj.insert("prev_sha256".into(), Value::from(prev));
        let body = serde_json::to_vec(&v).expect("json");
        lines[i] = match key {
            Some(k) => String::from_utf8(seal(&body, k)).expect("utf-8"),
            None => {
                let mut s = String::from_utf8(body).expect("utf-8");
                s.pop();
                format!("{s},\"mac\":{mac}}}")
            }
        };
    }
}

#[test]
fn a_clean_keyed_log_verifies_with_its_key_and_its_unkeyed_chain_holds_too() {
    let (_dir, path) = log_of(7);
    let s = verify(&path).expect("clean");
    // open + 7 events + 2 epoch checkpoints (after 3 and 6 events) + close.
    assert_eq!((s.lines, s.events, s.closed), (11, 7, true));
    assert_eq!(s.epoch, 4);
    let text = std::fs::read(&path).expect("log");
    assert_eq!(verify_chain(&text[..]).expect("still a hash chain"), 11);
    let first: Value = serde_json::from_str(&lines(&path)[0]).expect("json");
    assert_eq!(first["checkpoint"], "open");
    assert_eq!(first["key_id"], key().id());
    // Another key does not verify it.
    let other = AuditKey::from_bytes(&[1; 32]).expect("key");
    let state = std::fs::read(state_path(&path)).expect("state");
    assert!(verify_keyed(&text[..], &other, Some(&state)).is_err());
    assert!(matches!(
        verify_keyed(&text[..], &other, None),
        Err(KeyedError::Broken {
            line: 1,
            reason: KeyedBreak::WrongKey
        })
    ));
    // Reopened with its key, it continues, and still verifies.
    let sink = JsonlAuditSink::open_keyed(&path, &key(), EPOCH).expect("reopen");
    sink.record(&event(8)).expect("record");
    drop(sink);
    assert_eq!(verify(&path).expect("continued").events, 8);
}

#[test]
fn a_cut_tail_is_detected() {
    for cut in 1..=3 {
        let (_dir, path) = log_of(7);
        let mut ls = lines(&path);
        ls.truncate(ls.len() - cut);
        write(&path, &ls);
        let r = reason(verify(&path));
        assert!(
            matches!(r, KeyedBreak::UnsealedTail | KeyedBreak::StateMismatch),
            "cut {cut}: {r:?}"
        );
        // Even without the state file, a log that does not end in its close is refused.
        let text = std::fs::read(&path).expect("log");
        assert!(verify_keyed(&text[..], &key(), None).is_err(), "cut {cut}");
        assert_eq!(
            reopen_refused(&path),
            KeyedBreak::StateMismatch,
            "cut {cut}"
        );
    }
}

#[test]
fn a_cut_at_an_earlier_checkpoint_is_detected_through_the_state() {
    // Two sessions, each ending in its close; the second session is cut off whole.
    let (_dir2, path2) = log_of(2);
    let sink = JsonlAuditSink::open_keyed(&path2, &key(), EPOCH).expect("reopen");
    sink.record(&event(9)).expect("record");
    drop(sink);
    let state = std::fs::read(state_path(&path2)).expect("state");
    let all = lines(&path2);
    // The first session's lines end in its close (open, 2 events, close).
    write(&path2, &all[..4]);
    std::fs::write(state_path(&path2), &state).expect("state");
    assert_eq!(reason(verify(&path2)), KeyedBreak::StateMismatch);
    assert_eq!(reopen_refused(&path2), KeyedBreak::StateMismatch);
    // A state for the cut position must be MACed under that position's epoch key (2), which
    // the holder of the current one (3) cannot compute.
    let sink = JsonlAuditSink::open_keyed(&path2, &key(), EPOCH);
    assert!(sink.is_err());
    let stolen = key().epoch(3);
    let forged = keyed::StateRecord {
        key_id: key().id(),
        epoch: 2,
        seq: 5,
        head_sha256: line_sha256(all[3].as_bytes()),
        len: (all[..4].iter().map(|l| l.len() + 1).sum::<usize>()) as u64,
    };
    keyed::write_state(&state_path(&path2), &forged, &stolen).expect("forge the state");
    assert_eq!(reason(verify(&path2)), KeyedBreak::StateMismatch);
    assert_eq!(reopen_refused(&path2), KeyedBreak::StateMismatch);
    // With the right epoch key the same state would be accepted: the test forges what it means.
    keyed::write_state(&state_path(&path2), &forged, &key().epoch(2)).expect("state");
    assert!(verify(&path2).expect("consistent").closed);
}

#[test]
fn a_middle_edit_with_the_chain_recomputed_is_detected() {
    let (_dir, path) = log_of(7);
    let mut ls = lines(&path);
    ls[2] = ls[2].replace("\"status\":\"ok\"", "\"status\":\"refused\"");
    rechain(&mut ls, 2, None);
    write(&path, &ls);
    // The hash chain alone no longer sees it.
    let text = std::fs::read(&path).expect("log");
    assert_eq!(verify_chain(&text[..]).expect("recomputed chain"), 11);
    assert_eq!(reason(verify(&path)), KeyedBreak::Mac);
    assert_eq!(reopen_refused(&path), KeyedBreak::Mac);
}

#[test]
fn a_deletion_is_detected_with_or_without_the_chain_recomputed() {
    let (_dir, path) = log_of(7);
    let mut ls = lines(&path);
    ls.remove(2);
    write(&path, &ls);
    assert_eq!(reason(verify(&path)), KeyedBreak::Sequence);
    rechain(&mut ls, 2, None);
    write(&path, &ls);
    assert_eq!(reason(verify(&path)), KeyedBreak::Mac);
    assert_eq!(reopen_refused(&path), KeyedBreak::Mac);
}

#[test]
fn an_appended_forgery_with_a_correct_chain_is_detected() {
    let (_dir, path) = log_of(4);
    let mut ls = lines(&path);
    let forged = ls[ls.len() - 1].replace("\"close\"", "\"epoch\"");
    ls.push(ls[2].clone());
    ls.push(forged);
    let n = ls.len();
    rechain(&mut ls, n - 2, None);
    write(&path, &ls);
    let text = std::fs::read(&path).expect("log");
    assert!(verify_chain(&text[..]).is_ok());
    assert!(matches!(
        reason(verify(&path)),
        KeyedBreak::Mac | KeyedBreak::Epoch
    ));
    assert!(matches!(
        reopen_refused(&path),
        KeyedBreak::Mac | KeyedBreak::Epoch
    ));
}

#[test]
fn an_emptied_log_is_detected() {
    let (_dir, path) = log_of(4);
    write(&path, &[]);
    assert_eq!(reason(verify(&path)), KeyedBreak::Emptied);
    assert_eq!(reopen_refused(&path), KeyedBreak::Emptied);
    // Its state removed as well, a fresh log starts: but the verifier, given the old state,
    // still sees that it is not the log that was written.
    let (_dir2, path2) = log_of(4);
    let state = std::fs::read(state_path(&path2)).expect("state");
    write(&path2, &[]);
    std::fs::remove_file(state_path(&path2)).expect("rm");
    drop(JsonlAuditSink::open_keyed(&path2, &key(), EPOCH).expect("a new log"));
    let text = std::fs::read(&path2).expect("log");
    assert!(verify_keyed(&text[..], &key(), Some(&state)).is_err());
}

#[test]
fn a_removed_state_file_is_not_continued() {
    let (_dir, path) = log_of(4);
    std::fs::remove_file(state_path(&path)).expect("rm");
    assert_eq!(reopen_refused(&path), KeyedBreak::StateMismatch);
}

/// Forward security: the key of the current epoch, stolen from the writer, cannot rewrite a line
/// of an earlier epoch, whether the forged line claims its old epoch or the current one.
#[test]
fn a_stolen_current_key_cannot_rewrite_an_earlier_epoch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let sink = JsonlAuditSink::open_keyed(&path, &key(), EPOCH).expect("open");
    for i in 0..7 {
        sink.record(&event(i)).expect("record");
    }
    let stolen = sink.current_key().expect("keyed");
    assert_eq!(stolen.epoch, 3);
    drop(sink);
    let clean = lines(&path);
    // Line 6 (seq 6) is an event of epoch 2, the one before the stolen key's.
    let target = 5;
    let v: Value = serde_json::from_str(&clean[target]).expect("json");
    assert_eq!(v["epoch"], 2);
    for claim_epoch in [2u64, 3] {
        let mut ls = clean.clone();
        let mut v: Value = serde_json::from_str(&ls[target]).expect("json");
        v["status"] = Value::from("refused");
        v["epoch"] = Value::from(claim_epoch);
        ls[target] = v.to_string();
        // Every line from the target on re-MACed with the stolen key, chain recomputed.
        rechain(&mut ls, target, Some(&stolen));
        write(&path, &ls);
        let r = reason(verify(&path));
        assert!(matches!(r, KeyedBreak::Mac | KeyedBreak::Epoch), "{r:?}");
        assert!(matches!(
            reopen_refused(&path),
            KeyedBreak::Mac | KeyedBreak::Epoch
        ));
    }
    // The untouched log still verifies: what failed above is the rewrite.
    write(&path, &clean);
    assert!(walk(
        std::fs::File::open(&path)
            .map(BufReader::new)
            .expect("open"),
        &key(),
        None
    )
    .is_ok());
}

#[test]
fn a_log_changed_while_open_stops_the_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("audit.jsonl");
    let sink = JsonlAuditSink::open_keyed(&path, &key(), EPOCH).expect("open");
    sink.record(&event(0)).expect("record");
    let mut ls = lines(&path);
    ls.push(ls[1].clone());
    write(&path, &ls);
    let err = sink.record(&event(1)).expect_err("someone else wrote");
    assert!(err.to_string().contains("audit_tampered"), "{err}");
    assert!(sink.record(&event(2)).is_err(), "the chain stays stopped");
}

#[test]
fn an_unkeyed_open_refuses_a_keyed_log_and_a_keyed_open_an_unkeyed_one() {
    let (_dir, path) = log_of(2);
    assert!(JsonlAuditSink::open(&path).is_err());
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("plain.jsonl");
    let sink = JsonlAuditSink::open(&plain).expect("open");
    sink.record(&event(0)).expect("record");
    drop(sink);
    let err = JsonlAuditSink::open_keyed(&plain, &key(), EPOCH).expect_err("unkeyed");
    assert_eq!(err.reason_code(), None, "{err}");
}
