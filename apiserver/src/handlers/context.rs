//! What every handler shares: the request as a handler sees it ([`Call`]), what it answers ([`Reply`]), and the
//! lock on the server's state.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::request::{Query, ResourceRequest};
use crate::store::State;
use crate::watch::WatchStream;

/// What a handler answers.
#[derive(Debug)]
pub enum Reply {
    /// A JSON document with a status code.
    Json(u16, Value, Vec<String>),
    /// A watch stream.
    Watch(WatchStream),
}

/// Everything a handler needs from the request besides the path.
/// The part a write plays in admission ([`crate::server`]'s webhook calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Admission {
    /// An ordinary write.
    #[default]
    None,
    /// A dry run that shows the object the mutating webhooks see: decoded, patched and defaulted, but
    /// not yet validated (kube-apiserver validates after mutating admission).
    Probe,
    /// The body is an object that mutating webhooks changed, carrying the `managedFields` of the request
    /// before mutation: they are stored as they are (mutations are owned by no manager, as on
    /// kube-apiserver).
    Mutated,
}

pub struct Call<'a> {
    /// The parsed path.
    pub req: &'a ResourceRequest,
    /// Query parameters.
    pub query: &'a Query,
    /// `Content-Type`, without parameters.
    pub content_type: &'a str,
    /// `Accept`.
    pub accept: &'a str,
    /// `User-Agent`.
    pub user_agent: &'a str,
    /// The request body.
    pub body: &'a Bytes,
    /// What admission asks of this write, when webhooks are called around it.
    pub admission: Admission,
    /// The shared state.
    pub state: &'a Arc<Mutex<State>>,
    /// The time to stamp on writes.
    pub now: String,
    /// The server's clock (tables' ages are counted on it).
    pub clock: crate::clock::Clock,
    /// How often watches with `allowWatchBookmarks` get a bookmark.
    pub bookmark_interval: Duration,
}

/// Locks the server's state, as an internal error if a panic poisoned it.
pub(super) fn lock(state: &Mutex<State>) -> ApiResult<std::sync::MutexGuard<'_, State>> {
    state
        .lock()
        .map_err(|_| ApiError::internal("the server's state lock was poisoned"))
}
