//! Resource subscriptions of 2025-11-25 sessions.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::ResourceError;
use super::set::Resources;
use crate::reason::ReasonCode;

/// The resources one 2025-11-25 session subscribed to, and the task that forwards their
/// updates. Dropped with the session; the task ends then.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
    forwarding: AtomicBool,
    stop: CancellationToken,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The most URIs one session may subscribe to.
const MAX_SUBSCRIPTIONS: usize = 1024;

impl Subscriptions {
    /// Subscribe to `uri`, which must be readable now; updates go to `peer`.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        resources: &Resources,
        peer: Peer<RoleServer>,
    ) -> Result<(), ResourceError> {
        resources.read(uri)?;
        {
            let mut uris = self.uris.lock().unwrap_or_else(|p| p.into_inner());
            if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(uri) {
                return Err(ResourceError::Refused {
                    uri: uri.to_owned(),
                    code: ReasonCode::MalformedCall,
                    message: format!("at most {MAX_SUBSCRIPTIONS} subscriptions per session"),
                });
            }
            uris.insert(uri.to_owned());
        }
        if !self.forwarding.swap(true, Ordering::SeqCst) {
            let rx = resources.updates.subscribe();
            tokio::spawn(forward(Arc::downgrade(self), self.stop.clone(), rx, peer));
        }
        Ok(())
    }

    /// Stop sending updates of `uri`.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uri);
    }
}

async fn forward(
    subs: Weak<Subscriptions>,
    stop: CancellationToken,
    mut rx: broadcast::Receiver<String>,
    peer: Peer<RoleServer>,
) {
    loop {
        let uri = tokio::select! {
            () = stop.cancelled() => return,
            msg = rx.recv() => match msg {
                Ok(uri) => uri,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        let subscribed = match subs.upgrade() {
            Some(s) => s
                .uris
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&uri),
            None => return,
        };
        if subscribed
            && peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
        {
            return;
        }
    }
}
