//! A call's progress reports as `notifications/progress` for the request's progress token, in
//! order, and flushed before the call's result is sent. The task that sends them starts with the
//! first report.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ProgressNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};

use crate::context::{Progress as ProgressReport, ProgressSink};

enum ProgressMsg {
    Report(ProgressReport),
    Flush(oneshot::Sender<()>),
}

/// Where a call's reports go: the forwarding task, started by the first report (most calls
/// report none, and a call that reports none costs no task).
type Lane = Arc<Mutex<Option<mpsc::UnboundedSender<ProgressMsg>>>>;

pub(super) struct ProgressFlush {
    lane: Lane,
}

impl ProgressFlush {
    /// Wait until every report so far was sent.
    pub(super) async fn flush(self) {
        let tx = self
            .lane
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(tx) = tx else {
            return;
        };
        let (ack_tx, ack_rx) = oneshot::channel();
        if tx.send(ProgressMsg::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.await;
        }
    }
}

/// A progress sink that forwards reports, in order, as `notifications/progress` for `token`.
/// Call it within the runtime; the sink itself may be called from any thread.
pub(super) fn progress_forwarder(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> (ProgressSink, ProgressFlush) {
    let lane: Lane = Arc::default();
    let runtime = Handle::current();
    let sink_lane = Arc::clone(&lane);
    let sink: ProgressSink = Arc::new(move |p| {
        // A panic while holding the lock cannot leave the lane half-set (one assignment).
        let mut tx = sink_lane.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = tx.get_or_insert_with(|| forward(&runtime, peer.clone(), token.clone()));
        let _ = tx.send(ProgressMsg::Report(p));
    });
    (sink, ProgressFlush { lane })
}

/// The task that sends reports to `peer` in order and answers flushes once what came before
/// them was sent.
fn forward(
    runtime: &Handle,
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> mpsc::UnboundedSender<ProgressMsg> {
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressMsg>();
    runtime.spawn(async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                ProgressMsg::Report(p) => {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    if let Some(total) = p.total {
                        param = param.with_total(total);
                    }
                    if let Some(message) = p.message {
                        param = param.with_message(message);
                    }
                    if let Err(e) = peer.notify_progress(param).await {
                        tracing::debug!(error = %e, "progress notification not delivered");
                    }
                }
                ProgressMsg::Flush(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    });
    tx
}
