//! Reads: get, list (selectors, pagination with continue tokens) and watch.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::call::{key, render};
use super::context::{Call, Reply, lock};
use super::scale::scale_of;
use crate::convert::from_storage;
use crate::error::{ApiError, ApiResult, Cause};
use crate::registry::ResourceType;
use crate::selector::{FieldSelector, LabelSelector};
use crate::store::{Filter, ObjKey, WatchItem, translate};
use crate::watch::WatchStream;

pub(super) fn get(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let mut state = lock(call.state)?;
    started(&mut state, rt);
    let obj = state
        .get(&rt.storage, &key(call))
        .ok_or_else(|| ApiError::not_found(rt.target(), call.req.name.as_deref().unwrap_or("")))?;
    let obj = crate::convert::served(rt, &[&obj])?
        .pop()
        .unwrap_or_default();
    if call.req.subresource.as_deref() == Some("scale") {
        return Ok(Reply::Json(
            200,
            scale_of(rt, &from_storage(rt, &obj)),
            Vec::new(),
        ));
    }
    Ok(Reply::Json(200, render(call).object(rt, &obj), Vec::new()))
}

/// Builds the selection a list or watch asks for.
pub(super) fn filter(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Filter> {
    let labels = LabelSelector::parse(call.query.get("labelSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.message()))?;
    let fields = FieldSelector::parse(call.query.get("fieldSelector").unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    for f in fields.fields() {
        let supported = f == "metadata.name"
            || f == "metadata.namespace"
            || rt.field_selectors.iter().any(|(name, _)| name == f);
        if !supported {
            // Kinds without field selectors of their own use apimachinery's default conversion.
            let message = if rt.custom || !rt.field_selectors.is_empty() {
                format!("field label not supported: {f}")
            } else {
                format!(
                    "\"{f}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                )
            };
            return Err(ApiError::bad_request(message));
        }
    }
    Ok(Filter {
        namespace: call.req.namespace.clone(),
        labels,
        fields,
        rtype: rt.clone(),
    })
}

pub(super) fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!(
            "Invalid value: \"{s}\": resourceVersion must be a number"
        ))
    })
}

pub(super) fn encode_continue(rv: u64, last: &ObjKey) -> String {
    let token = json!({ "v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}/{}\u{0}", last.namespace, last.name) });
    base64::engine::general_purpose::STANDARD.encode(token.to_string())
}

pub(super) fn decode_continue(token: &str) -> ApiResult<(u64, ObjKey)> {
    // kube-apiserver ends the message with the Go decoding error; this names the token instead.
    let bad = || {
        ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid: {token}"
        ))
    };
    let raw = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
    let rv = v["rv"].as_u64().ok_or_else(bad)?;
    let start = v["start"]
        .as_str()
        .ok_or_else(bad)?
        .trim_end_matches('\u{0}');
    let (ns, name) = start.split_once('/').ok_or_else(bad)?;
    Ok((rv, ObjKey::new(ns, name)))
}

pub(super) fn list(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let filter = filter(call, rt)?;
    let limit = match call.query.get("limit") {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?,
        None => 0,
    };
    let mut state = lock(call.state)?;
    let current = state.rv;
    started(&mut state, rt);
    let (list_rv, snapshot, after) = if let Some(token) = call.query.get("continue") {
        if call.query.get("resourceVersion").is_some() {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let (rv, after) = decode_continue(token)?;
        let snap = state
            .collections
            .get(&rt.storage)
            .and_then(|c| c.snapshot(rv))
            .ok_or_else(|| {
                ApiError::gone("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
            })?;
        (rv, snap, Some(after))
    } else {
        let rv = call.query.get("resourceVersion");
        let rvm = call.query.get("resourceVersionMatch");
        match (rv, rvm) {
            (Some(rv), Some("Exact")) => {
                let rv = parse_rv(rv)?;
                let coll = state.collection(&rt.storage);
                (rv, coll.at(rv, current)?, None)
            }
            (None, Some(_)) => {
                return Err(ApiError::invalid(
                    "ListOptions",
                    "meta.k8s.io",
                    "",
                    vec![Cause {
                        reason: "FieldValueForbidden".into(),
                        message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into(),
                        field: "resourceVersionMatch".into(),
                    }],
                ));
            }
            (Some(rv), _) => {
                let n = parse_rv(rv)?;
                if n > current {
                    return Err(crate::store::too_large(n, current));
                }
                (current, state.collection(&rt.storage).objects.clone(), None)
            }
            (None, _) => (current, state.collection(&rt.storage).objects.clone(), None),
        }
    };
    let range_start = match (&after, &filter.namespace) {
        (Some(k), _) => std::ops::Bound::Excluded(k.clone()),
        (None, Some(ns)) => std::ops::Bound::Included(ObjKey::new(ns, "")),
        (None, None) => std::ops::Bound::Unbounded,
    };
    let mut items = Vec::new();
    let mut more = None;
    let mut in_range = snapshot
        .range((range_start, std::ops::Bound::Unbounded))
        .take_while(|(k, _)| {
            filter
                .namespace
                .as_ref()
                .is_none_or(|ns| &k.namespace == ns)
        });
    for (k, obj) in in_range.by_ref() {
        if !filter.matches(obj) {
            continue;
        }
        if limit > 0 && items.len() == limit {
            more = Some(items_last_key(&items));
            break;
        }
        items.push((k.clone(), obj.clone()));
    }
    // Like kube-apiserver, the count of what is left only when nothing is filtered out.
    let remaining =
        (filter.labels.is_empty() && filter.fields.is_empty()).then(|| in_range.count() + 1);
    let mut list_meta = json!({ "resourceVersion": list_rv.to_string() });
    if let Some(Some(last)) = more {
        state.collection(&rt.storage).keep_snapshot(list_rv);
        list_meta["continue"] = json!(encode_continue(list_rv, &last));
        if let Some(n) = remaining {
            list_meta["remainingItemCount"] = json!(n);
        }
    } else if rt.custom {
        // Custom resource lists are unstructured, whose list metadata always carries `continue`.
        list_meta["continue"] = json!("");
    }
    drop(state);
    let stored: Vec<&Value> = items.iter().map(|(_, o)| o.as_ref()).collect();
    let converted = crate::convert::served(rt, &stored)?;
    let stored: Vec<&Value> = converted.iter().collect();
    Ok(Reply::Json(
        200,
        render(call).list(rt, &stored, list_meta),
        Vec::new(),
    ))
}

pub(super) fn items_last_key(items: &[(ObjKey, Arc<Value>)]) -> Option<ObjKey> {
    items.last().map(|(k, _)| k.clone())
}

/// A first request to a custom resource starts its watch cache, as kube-apiserver's does: later watches from a
/// version before this one get 410.
fn started(state: &mut crate::store::State, rt: &ResourceType) {
    if rt.custom {
        let current = state.rv;
        state.collection(&rt.storage).start(current);
    }
}

pub(super) fn watch(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let filter = filter(call, rt)?;
    let timeout = call
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let bookmarks = call
        .query
        .flag("allowWatchBookmarks")
        .then_some(call.bookmark_interval);
    let send_initial = call.query.flag("sendInitialEvents");
    let rv = call.query.get("resourceVersion");
    let rvm = call.query.get("resourceVersionMatch");
    if send_initial && rvm != Some("NotOlderThan") {
        return Err(ApiError::invalid(
            "ListOptions",
            "meta.k8s.io",
            "",
            vec![Cause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".into(),
                field: "resourceVersionMatch".into(),
            }],
        ));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut state = lock(call.state)?;
    let current = state.rv;
    started(&mut state, rt);
    let initial_list = send_initial || matches!(rv, None | Some("0"));
    if initial_list {
        if let Some(rv) = rv.filter(|r| *r != "0") {
            let n = parse_rv(rv)?;
            if n > current {
                return Err(crate::store::too_large(n, current));
            }
        }
        let coll = state.collection(&rt.storage);
        for obj in coll.objects.values() {
            if filter.matches(obj) {
                let _ = tx.send(WatchItem::Event(
                    crate::store::EventType::Added,
                    obj.clone(),
                ));
            }
        }
        if send_initial {
            let _ = tx.send(WatchItem::Bookmark(current, true));
        }
    } else if let Some(rv) = rv {
        let n = parse_rv(rv)?;
        if n > current {
            return Err(crate::store::too_large(n, current));
        }
        let coll = state.collection(&rt.storage);
        let since = if rt.custom {
            coll.watchable_from(n).and_then(|()| coll.events_since(n))
        } else {
            coll.events_since(n)
        };
        match since {
            Ok(events) => {
                for ev in events {
                    if let Some((kind, object)) = translate(&filter, &ev) {
                        let _ = tx.send(WatchItem::Event(kind, object));
                    }
                }
            }
            Err(e) => {
                drop(state);
                return Ok(Reply::Watch(WatchStream::error(
                    e,
                    rt.clone(),
                    call.state.clone(),
                )));
            }
        }
    }
    let id = state.add_watcher(&rt.storage, tx, filter);
    drop(state);
    Ok(Reply::Watch(WatchStream::new(
        rx,
        rt.clone(),
        render(call),
        timeout,
        bookmarks,
        call.state.clone(),
        id,
    )))
}
