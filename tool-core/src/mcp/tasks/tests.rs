//! Tests of the task store: ids, ends, quotas and questions.

use rmcp::model::ErrorCode;

use super::*;

fn caps() -> Option<ClientCapabilities> {
    Some(serde_json::from_value(json!({"elicitation": {}})).expect("caps"))
}

#[test]
fn ids_are_minted_looked_up_only_for_their_owner_and_checked_for_shape() {
    let store = TaskStore::default();
    let t = store
        .create(&Caller::keyed("alice"), caps())
        .expect("created");
    assert_eq!(t.id.len(), 32);
    assert!(store.get(&t.id, "alice").is_ok());
    for (id, owner) in [(t.id.as_str(), "bob"), ("0000", "alice"), ("../x", "alice")] {
        let e = store.get(id, owner).expect_err("refused");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    }
    let v = serde_json::to_value(&t.created).expect("json");
    assert_eq!(v["resultType"], "task");
    assert_eq!(v["status"], "working");
    assert!(v["createdAt"].as_str().is_some_and(|s| s.ends_with('Z')));
}

#[test]
fn a_cancelled_task_stays_cancelled_and_fires_its_calls_cancellation() {
    let store = TaskStore::default();
    let t = store.create(&Caller::sole(""), None).expect("created");
    store.cancel(&t.id, "").expect("cancelled");
    assert!(t.cancel.is_cancelled());
    store.finish(&t.id, Ok(JsonObject::new()));
    assert_eq!(
        store.get(&t.id, "").expect("task").status(),
        TaskStatus::Cancelled
    );
    // Cancelling again is the same acknowledgement.
    assert!(store.cancel(&t.id, "").is_ok());
}

#[test]
fn a_full_store_makes_room_from_finished_tasks_only() {
    let store = TaskStore::default();
    let first = store.create(&Caller::sole(""), None).expect("created");
    for _ in 1..MAX_TASKS {
        store.create(&Caller::sole(""), None).expect("created");
    }
    assert!(store.create(&Caller::sole(""), None).is_err());
    store.finish(&first.id, Ok(JsonObject::new()));
    assert!(store.create(&Caller::sole(""), None).is_ok());
    assert!(store.get(&first.id, "").is_err());
}

#[test]
fn a_tasks_slot_is_given_back_on_every_end() {
    let store = Arc::new(TaskStore::new(
        ClientQuotas::new()
            .with_max_tasks(8)
            .with_max_tasks_per_client(1),
    ));
    let alice = Caller::keyed("alice");
    let held = || store.running.held(&alice.client);
    // Completed, failed, cancelled, forgotten, expired, and a call that never reported.
    type End<'a> = &'a dyn Fn(&Arc<TaskStore>, &str);
    let ends: [End<'_>; 6] = [
        &|s, id| s.finish(id, Ok(JsonObject::new())),
        &|s, id| s.finish(id, Err(ErrorData::internal_error("x", None))),
        &|s, id| s.cancel(id, &Caller::keyed("alice").id).expect("cancelled"),
        &|s, id| s.remove(id),
        &|s, id| {
            s.age(id, TASK_TTL);
            // Any use of the store drops what expired.
            assert!(s.get(id, "alice").is_err());
        },
        &|s, id| drop(s.finisher(id)),
    ];
    for end in ends {
        let t = store.create(&alice, None).expect("created");
        assert_eq!(held(), 1);
        let e = store.create(&alice, None).expect_err("at quota");
        assert_eq!(
            e.data.expect("data")["reason_code"],
            "client_quota_exceeded"
        );
        // Another client is served meanwhile.
        let bob = store.create(&Caller::keyed("bob"), None).expect("bob");
        store
            .cancel(&bob.id, &Caller::keyed("bob").id)
            .expect("cancelled");
        end(&store, &t.id);
        assert_eq!(held(), 0);
    }
}

#[test]
fn a_client_at_its_quota_leaves_the_store_to_the_others() {
    let store = TaskStore::new(
        ClientQuotas::new()
            .with_max_tasks(4)
            .with_max_tasks_per_client(2),
    );
    let a = Caller::keyed("a");
    for _ in 0..2 {
        store.create(&a, None).expect("created");
    }
    let e = store.create(&a, None).expect_err("at quota");
    assert_eq!(
        e.data.expect("data")["reason_code"],
        "client_quota_exceeded"
    );
    for who in ["b", "b"] {
        store
            .create(&Caller::keyed(who), None)
            .expect("another client");
    }
    // The store is full now: everyone is refused with the server-wide code.
    let e = store.create(&Caller::keyed("c"), None).expect_err("full");
    assert_eq!(
        e.data.expect("data")["reason_code"],
        "error_budget_exhausted"
    );
}

#[tokio::test]
async fn a_question_waits_until_every_pending_one_is_answered() {
    let store = Arc::new(TaskStore::default());
    let t = store.create(&Caller::sole(""), caps()).expect("created");
    let input = t.input.bound(Arc::clone(&store));
    let form = |m: &str| {
        InputRequest::form(
            m,
            json!({"type": "object", "properties": {"n": {"type": "string"}}}),
        )
    };
    let asked = vec![("a".to_owned(), form("a?")), ("b".to_owned(), form("b?"))];
    let ask = tokio::spawn({
        let input = Arc::clone(&input);
        async move { input.ask(&asked).await }
    });
    while store.get(&t.id, "").expect("task").status() != TaskStatus::InputRequired {
        tokio::task::yield_now().await;
    }
    let answer = json!({"action": "accept", "content": {"n": "x"}});
    store
        .update(
            &t.id,
            "",
            BTreeMap::from([("a".to_owned(), answer.clone())]),
        )
        .expect("ack");
    let d = serde_json::to_value(store.get(&t.id, "").expect("task")).expect("json");
    assert_eq!(d["status"], "input_required");
    assert!(d["inputRequests"].get("a").is_none() && d["inputRequests"].get("b").is_some());
    store
        .update(&t.id, "", BTreeMap::from([("b".to_owned(), answer)]))
        .expect("ack");
    let answers = ask.await.expect("joined").expect("answers");
    assert_eq!(answers.len(), 2);
}
