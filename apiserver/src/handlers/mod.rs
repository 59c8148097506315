//! The verbs on resources: get, list, watch, create, update, patch, delete, deletecollection, and the
//! `status` and `scale` subresources.

mod call;
mod context;
mod delete;
mod options;
mod read;
mod review;
mod scale;
mod write;

use crate::error::{ApiError, ApiResult};
use crate::request::Verb;
pub(crate) use call::parse_yaml;
use context::lock;
pub use context::{Admission, Call, Reply};
use delete::{delete, delete_collection};
use read::{get, list, watch};
use serde_json::json;
use write::{create, patch, update};

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
    if rt.review {
        // Create-only storage: go-restful serves no other verb.
        return match req.verb {
            Verb::Create if req.subresource.is_none() => review::create(&call, &rt),
            _ if req.name.is_some() => Err(ApiError::no_route().with_details(json!({}))),
            _ => Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            )
            .with_details(json!({}))),
        };
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
