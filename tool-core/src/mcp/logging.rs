//! Tool log messages as MCP `notifications/message`.
//!
//! A request gets messages only if it asked: 2026-07-28 clients set
//! `io.modelcontextprotocol/logLevel` in the request's `_meta`; 2025-11-25 clients call
//! `logging/setLevel` once per connection. The request's own level wins over the connection's.
//! Without either, a tool's [`ToolContext::log`](crate::context::ToolContext::log) sends
//! nothing. Messages are sent in the order they are logged, as notifications related to the
//! request, and all of them before the request's result.

// MCP logging is marked deprecated in rmcp (SEP-2577) while the revisions this server speaks
// still define it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use crate::context::{LogLevel, LogMessage, LogSink};

/// Our level for MCP's.
pub fn level_from_mcp(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// MCP's level for ours.
pub fn level_to_mcp(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The level one connection set with `logging/setLevel` (2025-11-25); `None` until it does.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectionLogLevel(Arc<Mutex<Option<LogLevel>>>);

impl ConnectionLogLevel {
    pub(crate) fn set(&self, level: LogLevel) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    pub(crate) fn get(&self) -> Option<LogLevel> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The level a request gets messages at: its own `_meta` level, else the connection's.
pub(crate) fn request_level(
    meta: Option<LoggingLevel>,
    connection: &ConnectionLogLevel,
) -> Option<LogLevel> {
    meta.map(level_from_mcp).or_else(|| connection.get())
}

/// One `notifications/message` for a tool's message: the tool as `logger`, the message text as
/// `data` (the notification goes with the request that made the call).
pub fn notification(tool: &str, m: &LogMessage) -> LoggingMessageNotificationParam {
    let mut p = LoggingMessageNotificationParam::new(level_to_mcp(m.level), json!(m.message));
    p.logger = Some(tool.to_owned());
    p
}

enum Msg {
    Log(LogMessage),
    Flush(oneshot::Sender<()>),
}

/// Waits until every message logged so far has been handed to the transport.
pub(crate) struct LogFlush {
    tx: mpsc::UnboundedSender<Msg>,
}

impl LogFlush {
    pub(crate) async fn flush(self) {
        let (ack_tx, ack_rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.await;
        }
    }
}

/// A log sink at `min` that forwards messages, in order, as `notifications/message`.
pub(crate) fn log_forwarder(
    peer: Peer<RoleServer>,
    tool: String,
    min: LogLevel,
) -> (LogSink, LogFlush) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            match msg {
                Msg::Log(m) => {
                    if let Err(e) = peer.notify_logging_message(notification(&tool, &m)).await {
                        tracing::debug!(error = %e, "log notification not delivered");
                    }
                }
                Msg::Flush(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    });
    let sink_tx = tx.clone();
    let sink = LogSink::new(min, move |m| {
        let _ = sink_tx.send(Msg::Log(m));
    });
    (sink, LogFlush { tx })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_both_ways_and_keep_their_order() {
        for l in LogLevel::ALL {
            assert_eq!(level_from_mcp(level_to_mcp(l)), l);
            // The wire name is the same.
            assert_eq!(
                serde_json::to_value(level_to_mcp(l)).expect("serializes"),
                json!(l.as_str())
            );
        }
        assert!(LogLevel::Warning > LogLevel::Info);
    }

    #[test]
    fn the_requests_level_wins_and_nothing_is_asked_by_default() {
        let conn = ConnectionLogLevel::default();
        assert_eq!(request_level(None, &conn), None);
        conn.set(LogLevel::Error);
        assert_eq!(request_level(None, &conn), Some(LogLevel::Error));
        assert_eq!(
            request_level(Some(LoggingLevel::Debug), &conn),
            Some(LogLevel::Debug)
        );
    }
}
