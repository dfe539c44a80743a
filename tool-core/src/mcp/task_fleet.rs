//! Tasks across the replicas of a fleet: a task started through one replica is read, answered
//! and cancelled through any other, and never stays `working` after its replica died.
//!
//! The replica running a task publishes it to the shared store ([`super::fleet`]) at every
//! change and holds its lease, renewed every [`BEAT`]:
//!
//! | key | holds | written by |
//! |---|---|---|
//! | `task:ID` | the task as `tasks/get` shows it, its owner and replica | the running replica |
//! | `lease:ID` | the running replica's name, for [`LEASE_TTL`] | the running replica (`SET NX`, renewed) |
//! | `final:ID` | the task's end: completed, failed or cancelled | whoever ends it first (`SET NX`) |
//! | `answer:ID:HEX` | an answer delivered by `tasks/update` elsewhere | any replica |
//!
//! The end is single-writer by construction: `final:ID` is claimed, never overwritten, so a task
//! cancelled through one replica stays cancelled whatever its call still returns, as on one
//! replica. Each beat the running replica takes the answers other replicas stored for its
//! pending questions, and cancels its call when the task was ended elsewhere. Another replica
//! asked about a task whose record says it runs while its lease is gone ends it as `failed`,
//! saying that its replica stopped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus};
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::backend::McpBackend;
use super::fleet::{store_unavailable, Fleet};
use super::quota::{Caller, Client, Quota, QuotaExceeded};
use super::server::McpServer;
use super::tasks::{check_id, now_iso8601, unknown, TaskStore, TASK_TTL};
use crate::reason::ReasonCode;
use crate::store::{Store, StoreError};

/// How often the running replica renews its lease, publishes and takes answers.
pub const BEAT: Duration = Duration::from_millis(250);

/// How long a lease outlives its last renewal: a replica silent this long is taken for dead.
pub const LEASE_TTL: Duration = Duration::from_secs(3);

/// A task as the store keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    /// The caller that created it (the hash of its `Authorization` header, empty without one).
    owner: String,
    /// The replica that ran it.
    replica: String,
    /// The task as `tasks/get` answers it.
    task: Value,
}

impl Record {
    fn detailed(&self) -> Result<DetailedTask, ErrorData> {
        serde_json::from_value(self.task.clone()).map_err(|e| {
            ErrorData::internal_error(
                format!("a task record in the store is not a task: {e}"),
                None,
            )
        })
    }
}

fn key(kind: &str, id: &str) -> String {
    format!("{kind}:{id}")
}

/// The key of an answer to question `question` of task `id` (the question id hex-encoded: it
/// came from a client).
fn answer_key(id: &str, question: &str) -> String {
    format!("answer:{id}:{}", hex::encode(question))
}

/// What is left of a task's life `age` after its creation, at least a second.
fn remaining(age: Duration) -> Duration {
    TASK_TTL.saturating_sub(age).max(Duration::from_secs(1))
}

async fn read(store: &dyn Store, key: &str) -> Result<Option<Record>, StoreError> {
    Ok(store
        .get(key)
        .await?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

fn encode(record: &Record) -> Vec<u8> {
    serde_json::to_vec(record).unwrap_or_default()
}

fn is_terminal(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
    )
}

/// The store set of a client's running tasks; `None` for the sole client of a stdio server.
fn running_set(client: &Client) -> Option<String> {
    match client {
        Client::Sole => None,
        Client::Key(k) => Some(format!("tasks:{k}")),
    }
}

/// Task `id` ended now as `status` with `payload`, keeping the times of its last record.
fn ended_now(
    id: &str,
    last: &DetailedTask,
    status: TaskStatus,
    payload: TaskPayload,
) -> DetailedTask {
    let mut task = Task::new(id, status, last.task.created_at.clone(), now_iso8601());
    task.ttl_ms = last.task.ttl_ms;
    task.poll_interval_ms = last.task.poll_interval_ms;
    DetailedTask::new(task, payload)
}

/// Task `id` of a dead replica, as `failed`.
fn lapsed(id: &str, last: &DetailedTask, replica: &str) -> DetailedTask {
    let error: JsonObject = json!({
        "code": -32603,
        "message": format!(
            "{}: the replica running this task ({replica}) stopped; its lease lapsed, and the \
             task's call ended with it",
            ReasonCode::ToolError
        ),
        "data": {"reason_code": ReasonCode::ToolError, "replica": replica},
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    ended_now(id, last, TaskStatus::Failed, TaskPayload::Failed { error })
}

/// A task ended elsewhere, as `cancelled`.
fn cancelled(id: &str, last: &DetailedTask) -> DetailedTask {
    ended_now(id, last, TaskStatus::Cancelled, TaskPayload::Cancelled)
}

impl<B: McpBackend> McpServer<B> {
    /// Make task `id`, just created here for `caller`, a task of the fleet before its call
    /// starts: counted in the caller's fleet-wide quota, leased to this replica and published.
    /// Refused (and forgotten here) when the caller is at its quota or the store fails.
    pub(super) async fn join_fleet(&self, id: &str, caller: &Caller) -> Result<(), ErrorData> {
        if !self.fleet.shared {
            return Ok(());
        }
        let refused = self.enlist(id, caller).await.err();
        match refused {
            None => {
                spawn_publisher(
                    Arc::clone(&self.task_store),
                    Arc::clone(&self.fleet),
                    id.to_owned(),
                    caller.clone(),
                );
                Ok(())
            }
            Some(e) => {
                self.task_store.remove(id);
                Err(e)
            }
        }
    }

    async fn enlist(&self, id: &str, caller: &Caller) -> Result<(), ErrorData> {
        let store = &*self.fleet.store;
        if let Some(set) = running_set(&caller.client) {
            let limit = self.task_store.quotas().max_tasks_per_client();
            match store.admit(&set, id, limit, TASK_TTL).await {
                Ok(true) => {}
                Ok(false) => {
                    return Err(QuotaExceeded {
                        what: Quota::Tasks,
                        limit,
                    }
                    .into())
                }
                Err(e) => return Err(store_unavailable(&e)),
            }
        }
        let published = async {
            let replica = self.fleet.replica.as_bytes();
            store.claim(&key("lease", id), replica, LEASE_TTL).await?;
            publish(
                store,
                &self.task_store,
                &self.fleet,
                id,
                caller,
                Duration::ZERO,
            )
            .await
        };
        if let Err(e) = published.await {
            if let Some(set) = running_set(&caller.client) {
                let _ = store.release(&set, id).await;
            }
            return Err(store_unavailable(&e));
        }
        Ok(())
    }

    /// `tasks/get`: this replica's task, or the fleet's.
    pub(super) async fn task_get(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<GetTaskResult, ErrorData> {
        if !self.fleet.shared {
            return self.task_store.get(id, &caller.id).map(GetTaskResult::new);
        }
        check_id(id)?;
        if let Some(ended) = self.ended(id, caller).await? {
            return Ok(GetTaskResult::new(ended));
        }
        if self.task_store.holds(id) {
            return self.task_store.get(id, &caller.id).map(GetTaskResult::new);
        }
        let store = &*self.fleet.store;
        let record = self.record(id, caller).await?;
        let last = record.detailed()?;
        if is_terminal(last.status()) {
            return Ok(GetTaskResult::new(last));
        }
        let lease = store
            .get(&key("lease", id))
            .await
            .map_err(|e| store_unavailable(&e))?;
        if lease.is_some() {
            return Ok(GetTaskResult::new(last));
        }
        let failed = lapsed(id, &last, &record.replica);
        self.end(id, &record, failed).await.map(GetTaskResult::new)
    }

    /// `tasks/update`: the answers go to the replica running the task.
    pub(super) async fn task_update(
        &self,
        id: &str,
        caller: &Caller,
        responses: BTreeMap<String, Value>,
    ) -> Result<(), ErrorData> {
        if !self.fleet.shared || self.task_store.holds(id) {
            return self.task_store.update(id, &caller.id, responses);
        }
        check_id(id)?;
        let record = self.record(id, caller).await?;
        let pending = record
            .task
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let store = &*self.fleet.store;
        // As on one replica: answers to questions not pending are ignored.
        for (question, value) in responses {
            if !pending.contains_key(&question) {
                continue;
            }
            let bytes = serde_json::to_vec(&value).unwrap_or_default();
            store
                .put(&answer_key(id, &question), &bytes, TASK_TTL)
                .await
                .map_err(|e| store_unavailable(&e))?;
        }
        Ok(())
    }

    /// `tasks/cancel`: ended here, or claimed as cancelled for the fleet (the running replica
    /// stops its call at its next beat).
    pub(super) async fn task_cancel(&self, id: &str, caller: &Caller) -> Result<(), ErrorData> {
        if !self.fleet.shared || self.task_store.holds(id) {
            return self.task_store.cancel(id, &caller.id);
        }
        check_id(id)?;
        let record = self.record(id, caller).await?;
        let last = record.detailed()?;
        if !is_terminal(last.status()) {
            self.end(id, &record, cancelled(id, &last)).await?;
        }
        Ok(())
    }

    /// The end of task `id` claimed by any replica, if it is `caller`'s.
    async fn ended(&self, id: &str, caller: &Caller) -> Result<Option<DetailedTask>, ErrorData> {
        let ended = read(&*self.fleet.store, &key("final", id))
            .await
            .map_err(|e| store_unavailable(&e))?;
        match ended {
            Some(r) if r.owner == caller.id => r.detailed().map(Some),
            Some(_) => Err(unknown(id)),
            None => Ok(None),
        }
    }

    /// The record of task `id`, if it is `caller`'s.
    async fn record(&self, id: &str, caller: &Caller) -> Result<Record, ErrorData> {
        let record = read(&*self.fleet.store, &key("task", id))
            .await
            .map_err(|e| store_unavailable(&e))?;
        match record {
            Some(r) if r.owner == caller.id => Ok(r),
            _ => Err(unknown(id)),
        }
    }

    /// End task `id` as `ended`, unless another replica ended it first: the end that won.
    async fn end(
        &self,
        id: &str,
        record: &Record,
        ended: DetailedTask,
    ) -> Result<DetailedTask, ErrorData> {
        let store = &*self.fleet.store;
        let final_record = Record {
            task: serde_json::to_value(&ended).unwrap_or_default(),
            ..record.clone()
        };
        let claimed = store
            .claim(&key("final", id), &encode(&final_record), TASK_TTL)
            .await
            .map_err(|e| store_unavailable(&e))?;
        if claimed {
            return Ok(ended);
        }
        let won = read(store, &key("final", id))
            .await
            .map_err(|e| store_unavailable(&e))?;
        match won {
            Some(r) => r.detailed(),
            None => Ok(ended),
        }
    }
}

/// Publish task `id` as this replica sees it now (`age` after its creation); its end is
/// claimed, never overwritten.
async fn publish(
    store: &dyn Store,
    tasks: &TaskStore,
    fleet: &Fleet,
    id: &str,
    caller: &Caller,
    age: Duration,
) -> Result<bool, StoreError> {
    let Ok(detailed) = tasks.get(id, &caller.id) else {
        // Forgotten here (a call that asked first and was no task): forgotten everywhere.
        store.delete(&key("task", id)).await?;
        store.delete(&key("lease", id)).await?;
        return Ok(true);
    };
    let terminal = is_terminal(detailed.status());
    let record = Record {
        owner: caller.id.clone(),
        replica: fleet.replica.clone(),
        task: serde_json::to_value(&detailed).unwrap_or_default(),
    };
    let ttl = remaining(age);
    if terminal {
        store
            .claim(&key("final", id), &encode(&record), ttl)
            .await?;
    }
    store.put(&key("task", id), &encode(&record), ttl).await?;
    Ok(terminal)
}

/// The loop of the replica running task `id`: publish at every change, and every [`BEAT`]
/// renew the lease, take answers stored elsewhere, stop the call when the task was ended
/// elsewhere; until the task ends or is forgotten here.
fn spawn_publisher(tasks: Arc<TaskStore>, fleet: Arc<Fleet>, id: String, caller: Caller) {
    let started = Instant::now();
    tokio::spawn(async move {
        let store = &*fleet.store;
        let lease = key("lease", &id);
        // The first record was published when the task joined the fleet: publish again only
        // after a change, or after a publish that failed.
        let mut dirty = false;
        loop {
            let Some(changed) = tasks.changes(&id) else {
                let _ = publish(store, &tasks, &fleet, &id, &caller, started.elapsed()).await;
                break;
            };
            if dirty {
                match publish(store, &tasks, &fleet, &id, &caller, started.elapsed()).await {
                    Ok(true) => break,
                    Ok(false) => dirty = false,
                    Err(e) => tracing::warn!(task = %id, error = %e, "task not published"),
                }
            }
            tokio::select! {
                () = changed.notified() => dirty = true,
                () = tokio::time::sleep(BEAT) => {}
            }
            match store
                .renew(&lease, fleet.replica.as_bytes(), LEASE_TTL)
                .await
            {
                Ok(true) => {}
                Ok(false) => {
                    // Lapsed (this replica was silent too long): claim it again if free.
                    let _ = store
                        .claim(&lease, fleet.replica.as_bytes(), LEASE_TTL)
                        .await;
                }
                Err(e) => tracing::warn!(task = %id, error = %e, "task lease not renewed"),
            }
            if let Ok(Some(_)) = store.get(&key("final", &id)).await {
                // Ended elsewhere (cancelled, or taken for dead): stop the call here.
                let _ = tasks.cancel(&id, &caller.id);
            }
            take_answers(store, &tasks, &id, &caller).await;
        }
        let _ = store.delete(&lease).await;
        if let Some(set) = running_set(&caller.client) {
            let _ = store.release(&set, &id).await;
        }
    });
}

/// Deliver the answers other replicas stored for task `id`'s pending questions.
async fn take_answers(store: &dyn Store, tasks: &TaskStore, id: &str, caller: &Caller) {
    for question in tasks.pending_questions(id) {
        let key = answer_key(id, &question);
        let Ok(Some(bytes)) = store.get(&key).await else {
            continue;
        };
        let _ = store.delete(&key).await;
        if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
            let _ = tasks.update(id, &caller.id, BTreeMap::from([(question, value)]));
        }
    }
}
