//! A call's progress reports as `notifications/progress` for the request's progress token, in
//! order, and flushed before the call's result is sent.

use std::sync::Arc;

use rmcp::model::ProgressNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};

use crate::context::{Progress as ProgressReport, ProgressSink};

enum ProgressMsg {
    Report(ProgressReport),
    Flush(oneshot::Sender<()>),
}

pub(super) struct ProgressFlush {
    tx: mpsc::UnboundedSender<ProgressMsg>,
}

impl ProgressFlush {
    /// Wait until every report so far was sent.
    pub(super) async fn flush(self) {
        let (ack_tx, ack_rx) = oneshot::channel();
        if self.tx.send(ProgressMsg::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.await;
        }
    }
}

/// A progress sink that forwards reports, in order, as `notifications/progress` for `token`.
pub(super) fn progress_forwarder(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> (ProgressSink, ProgressFlush) {
    let (tx, mut rx) = mpsc::unbounded_channel::<ProgressMsg>();
    tokio::spawn(async move {
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
    let sink_tx = tx.clone();
    let sink: ProgressSink = Arc::new(move |p| {
        let _ = sink_tx.send(ProgressMsg::Report(p));
    });
    (sink, ProgressFlush { tx })
}
