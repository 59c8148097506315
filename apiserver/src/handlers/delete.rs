//! Deletes: delete and deletecollection, with the options `options.rs` reads.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call::key;
use super::context::{Call, Reply, lock};
use super::options::delete_options;
use super::read::filter;
use crate::convert::try_from_storage;
use crate::error::{ApiResult, success_status};
use crate::lifecycle::{self, Deleted};
use crate::registry::ResourceType;
use crate::store::ObjKey;
use crate::table::Render;

pub(super) fn deleted_reply(rt: &ResourceType, deleted: Deleted) -> ApiResult<Value> {
    Ok(match deleted {
        Deleted::Pending(obj) => try_from_storage(rt, &obj)?,
        Deleted::Gone(obj) => success_status(
            rt.target(),
            obj["metadata"]["name"].as_str().unwrap_or(""),
            obj["metadata"]["uid"].as_str().unwrap_or(""),
        ),
    })
}

pub(super) fn delete(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let opts = delete_options(call)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let deleted = lifecycle::delete(
        &mut state,
        rt,
        &key(call),
        opts.propagation,
        opts.preconditions,
        opts.dry_run,
    )?;
    Ok(Reply::Json(200, deleted_reply(rt, deleted)?, Vec::new()))
}

pub(super) fn delete_collection(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let filter = filter(call, rt)?;
    let opts = delete_options(call)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let listed: Vec<(ObjKey, Arc<Value>)> = state
        .collection(&rt.storage)
        .objects
        .iter()
        .filter(|(_, o)| filter.matches(o))
        .map(|(k, o)| (k.clone(), o.clone()))
        .collect();
    // Like kube-apiserver, the answer is the list as it was before the deletes.
    let rv = state.rv;
    let mut items = Vec::new();
    for (k, o) in listed {
        match lifecycle::delete(
            &mut state,
            rt,
            &k,
            opts.propagation,
            (None, None),
            opts.dry_run,
        ) {
            Ok(_) => items.push(o),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    drop(state);
    let mut list_meta = json!({ "resourceVersion": rv.to_string() });
    if rt.custom {
        // Custom resource lists are unstructured, whose list metadata always carries `continue`.
        list_meta["continue"] = json!("");
    }
    Ok(Reply::Json(
        200,
        Render::Object.list(
            rt,
            &items
                .iter()
                .map(|o: &Arc<Value>| o.as_ref())
                .collect::<Vec<_>>(),
            list_meta,
        ),
        Vec::new(),
    ))
}
