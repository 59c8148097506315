//! The verbs on resources: get, list, watch, create, update, patch, delete, deletecollection, and the
//! `status` and `scale` subresources.

mod call;
mod delete;
mod options;
mod read;
mod scale;
mod write;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::request::{Query, ResourceRequest, Verb};
use crate::store::State;
use crate::watch::WatchStream;
pub(crate) use call::parse_yaml;
use delete::{delete, delete_collection};
use read::{get, list, watch};
use write::{create, patch, update};

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
    pub clock: crate::server::Clock,
    /// How often watches with `allowWatchBookmarks` get a bookmark.
    pub bookmark_interval: Duration,
}

fn lock(state: &Mutex<State>) -> ApiResult<std::sync::MutexGuard<'_, State>> {
    state
        .lock()
        .map_err(|_| ApiError::internal("the server's state lock was poisoned"))
}

/// Handles a resource request.
pub fn handle(call: Call<'_>) -> ApiResult<Reply> {
    let req = call.req;
    let rt = {
        let state = lock(call.state)?;
        state
            .registry
            .get(&req.group, &req.version, &req.resource)
            .ok_or_else(ApiError::no_route)?
    };
    match req.subresource.as_deref() {
        None => {}
        Some("status") if rt.status_subresource => {}
        Some("scale") if rt.scale.is_some() => {}
        // kube-apiserver's finalize storage only updates.
        Some("finalize") if rt.is_namespace() && req.verb == Verb::Update => {}
        Some("finalize") if rt.is_namespace() && req.name.is_some() => {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            )
            .with_details(serde_json::json!({})));
        }
        Some(_) => return Err(ApiError::no_route()),
    }
    let needs_name = matches!(
        req.verb,
        Verb::Get | Verb::Update | Verb::Patch | Verb::Delete
    );
    if req.subresource.is_some() && !needs_name {
        return Err(ApiError::no_route());
    }
    if rt.namespaced && needs_name && req.namespace.is_none() {
        return Err(ApiError::no_route());
    }
    if !rt.namespaced && req.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    let refused = req.verb == Verb::DeleteCollection && !rt.delete_collection;
    if refused || (req.verb == Verb::Create && req.name.is_some()) {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let reply = match req.verb {
        Verb::Get => get(&call, &rt),
        Verb::List => list(&call, &rt),
        Verb::Watch => watch(&call, &rt),
        Verb::Create => create(&call, &rt),
        Verb::Update => update(&call, &rt),
        Verb::Patch => patch(&call, &rt),
        Verb::Delete => delete(&call, &rt),
        Verb::DeleteCollection => delete_collection(&call, &rt),
    };
    // A deprecated CRD version's requests carry its warning first.
    match (reply, &rt.deprecation_warning) {
        (Ok(Reply::Json(code, body, mut warnings)), Some(warning)) => {
            warnings.insert(0, warning.clone());
            Ok(Reply::Json(code, body, warnings))
        }
        // On a refusal too, as kube-apiserver adds the warning before it handles the request.
        (Err(e), Some(warning)) => Ok(Reply::Json(e.code, e.to_status(), vec![warning.clone()])),
        (reply, _) => reply,
    }
}
