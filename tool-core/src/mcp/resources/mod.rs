//! MCP resources: what an application offers for reading by URI (`resources/list`,
//! `resources/read`, `resources/templates/list`, and `resources/subscribe` for 2025-11-25
//! sessions).
//!
//! A [`Resources`] set holds
//! - fixed resources ([`Resource::text`], [`Resource::blob`]),
//! - resource templates ([`ResourceTemplate`]): an RFC 6570 level-1 URI template such as
//!   `notes://{day}/summary` whose variables a reader function turns into content,
//! - and, if asked, the files of the workspace ([`WorkspaceResources`]) as `file://` URIs,
//!   read through the path guard like a tool's path argument: the URI's path must lie inside
//!   the workspace, symlinks may not lead out, only regular files with a single hard link are
//!   read (never a FIFO, a device, a socket), beneath the workspace's directory handle so a
//!   swap after the check cannot escape, and at most a size cap.
//!
//! Every requested URI is checked before anything is looked up (length, characters, scheme).
//! An unknown URI is the resource-not-found error with the URI in `data.uri` (`-32602` on
//! 2026-07-28, SEP-2164; `-32002` on 2025-11-25); a refused one is `-32602` with the reason
//! code in `data`.

mod error;
mod mime;
mod set;
mod subscribe;
mod template;
mod uri;
mod workspace;

pub use error::ResourceError;
pub use set::{ReadOutcome, Resource, Resources, STATIC_TTL_MS};
pub use template::{ResourceTemplate, TemplateMatch};
pub use uri::{check_uri, MAX_URI_LEN};
pub use workspace::WorkspaceResources;

pub(crate) use subscribe::Subscriptions;

#[cfg(test)]
mod tests;
