//! Why a resource could not be registered or read, as the MCP error it becomes.

use rmcp::ErrorData;
use serde_json::json;

use crate::reason::ReasonCode;

/// The `data` key of a refusal's reason code (the same key tool refusals use).
pub(super) const REASON_KEY: &str = "reason_code";

/// Why a resource could not be registered or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource has this URI.
    #[error("resource not found: {uri}")]
    NotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The URI is not one this server accepts (too long, control characters, no scheme, a
    /// query or fragment on a `file://` URI, bad percent-encoding).
    #[error("invalid resource URI `{uri}`: {reason}")]
    InvalidUri {
        /// The URI (cut to [`MAX_URI_LEN`](super::MAX_URI_LEN)).
        uri: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The resource exists but may not be read: outside the workspace, not a regular file,
    /// hard-linked.
    #[error("refused `{uri}`: {message}")]
    Refused {
        /// The URI.
        uri: String,
        /// The reason code.
        code: ReasonCode,
        /// Details.
        message: String,
    },
    /// The resource is larger than the cap.
    #[error("refused `{uri}`: larger than {max} bytes")]
    TooLarge {
        /// The URI.
        uri: String,
        /// The cap.
        max: usize,
    },
    /// Reading failed (an I/O error, a reader function's failure).
    #[error("reading `{uri}` failed: {message}")]
    Failed {
        /// The URI.
        uri: String,
        /// Details.
        message: String,
    },
    /// A registration was refused: a bad URI template, a duplicate URI or name.
    #[error("resource registration refused: {0}")]
    Registration(String),
}

impl ResourceError {
    /// The reason code this error carries in `data`.
    pub fn code(&self) -> ReasonCode {
        match self {
            ResourceError::NotFound { .. } | ResourceError::InvalidUri { .. } => {
                ReasonCode::InvalidArguments
            }
            ResourceError::Refused { code, .. } => *code,
            ResourceError::TooLarge { .. } => ReasonCode::MalformedCall,
            ResourceError::Failed { .. } | ResourceError::Registration(_) => ReasonCode::ToolError,
        }
    }

    /// The JSON-RPC error for this failure, with the URI in `data.uri`.
    pub fn to_error_data(&self) -> ErrorData {
        let uri = match self {
            ResourceError::NotFound { uri }
            | ResourceError::InvalidUri { uri, .. }
            | ResourceError::Refused { uri, .. }
            | ResourceError::TooLarge { uri, .. }
            | ResourceError::Failed { uri, .. } => uri.as_str(),
            ResourceError::Registration(_) => "",
        };
        let data = json!({"uri": uri, REASON_KEY: self.code()});
        match self {
            // rmcp turns this into -32602 for 2026-07-28 requests (SEP-2164).
            ResourceError::NotFound { .. } => {
                ErrorData::resource_not_found(self.to_string(), Some(data))
            }
            ResourceError::Failed { .. } | ResourceError::Registration(_) => {
                ErrorData::internal_error(self.to_string(), Some(data))
            }
            _ => ErrorData::invalid_params(self.to_string(), Some(data)),
        }
    }
}
