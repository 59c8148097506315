//! The verbs on resources: get, list, watch, create, update, patch, delete, deletecollection, and the
//! `status` and `scale` subresources.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::convert::from_storage;
use super::error::{ApiError, ApiResult, Cause, success_status};
use super::lifecycle::{self, Deleted, Part, Propagation, WriteOpts};
use super::managed_fields;
use super::registry::ResourceType;
use super::request::{Query, ResourceRequest, Verb};
use super::selector::{FieldSelector, LabelSelector};
use super::store::{Filter, ObjKey, State, WatchItem, translate};
use super::strategic;
use super::table::Render;
use super::watch::WatchStream;

/// What a handler answers.
#[derive(Debug)]
pub enum Reply {
    /// A JSON document with a status code.
    Json(u16, Value, Vec<String>),
    /// A watch stream.
    Watch(WatchStream),
}

/// Everything a handler needs from the request besides the path.
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
    /// The shared state.
    pub state: &'a Arc<Mutex<State>>,
    /// The time to stamp on writes.
    pub now: String,
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
    if req.verb == Verb::Create && req.name.is_some() {
        return Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    match req.verb {
        Verb::Get => get(&call, &rt),
        Verb::List => list(&call, &rt),
        Verb::Watch => watch(&call, &rt),
        Verb::Create => create(&call, &rt),
        Verb::Update => update(&call, &rt),
        Verb::Patch => patch(&call, &rt),
        Verb::Delete => delete(&call, &rt),
        Verb::DeleteCollection => delete_collection(&call, &rt),
    }
}

fn key(call: &Call<'_>) -> ObjKey {
    ObjKey::new(
        call.req.namespace.as_deref().unwrap_or(""),
        call.req.name.as_deref().unwrap_or(""),
    )
}

fn render(call: &Call<'_>) -> Render {
    Render::from_accept(call.accept, call.query.get("includeObject"))
}

fn part(call: &Call<'_>) -> Part {
    if call.req.subresource.as_deref() == Some("status") {
        Part::Status
    } else {
        Part::Main
    }
}

/// The field manager: `fieldManager`, or the User-Agent up to its first `/`, as the real server does.
fn manager(call: &Call<'_>) -> String {
    call.query
        .get("fieldManager")
        .map(str::to_string)
        .unwrap_or_else(|| {
            let ua = call.user_agent.split('/').next().unwrap_or("").trim();
            if ua.is_empty() {
                "unknown".to_string()
            } else {
                ua.to_string()
            }
        })
}

fn write_opts(call: &Call<'_>, applied: bool) -> ApiResult<WriteOpts> {
    let strict = match call.query.get("fieldValidation") {
        None | Some("Warn") | Some("Ignore") => false,
        Some("Strict") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got \"{other}\""
            )));
        }
    };
    Ok(WriteOpts {
        manager: manager(call),
        dry_run: dry_run(call)?,
        strict,
        part: part(call),
        applied,
    })
}

fn dry_run(call: &Call<'_>) -> ApiResult<bool> {
    match call.query.get("dryRun") {
        None => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
        ))),
    }
}

/// Parses a YAML body; JSON (what clients such as kube send, even as `application/apply-patch+yaml`) is YAML
/// too and parses much faster as JSON.
pub(super) fn parse_yaml(body: &[u8]) -> Result<Value, serde_yaml::Error> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(_) => serde_yaml::from_slice(body),
    }
}

/// Decodes a JSON or YAML request body into an object.
fn decode(call: &Call<'_>) -> ApiResult<Value> {
    if call.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    reject_binary(call.content_type)?;
    let yaml = call.content_type.contains("yaml");
    let parsed: Result<Value, String> = if yaml {
        parse_yaml(call.body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(call.body).map_err(|e| e.to_string())
    };
    match parsed {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            json_type(&other)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {e}"
        ))),
    }
}

/// Protobuf and CBOR bodies are refused with 415 and a message that says what to send instead.
fn reject_binary(content_type: &str) -> ApiResult<()> {
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (the in-memory API server does not decode {content_type}; kubectl's typed generators such as `kubectl create configmap` send protobuf, so use `kubectl create -f` or `kubectl apply` instead)"
        )));
    }
    Ok(())
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks `apiVersion` and `kind` of a request body against the addressed type.
fn check_type(rt: &ResourceType, obj: &Value) -> ApiResult<()> {
    let kind = obj["kind"].as_str().unwrap_or("");
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'Kind' is missing in '{}'",
            serde_json::to_string(obj).unwrap_or_default()
        )));
    }
    if api_version.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Object 'apiVersion' is missing in '{}'",
            serde_json::to_string(obj).unwrap_or_default()
        )));
    }
    if api_version != rt.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if kind != rt.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            rt.kind
        )));
    }
    Ok(())
}

/// The type check of an applied configuration, as kube-apiserver's field manager words it (a missing kind or
/// apiVersion is just another type).
fn check_applied_type(rt: &ResourceType, obj: &Value) -> ApiResult<()> {
    let kind = obj["kind"].as_str().unwrap_or("");
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    if api_version != rt.api_version() || kind != rt.kind {
        // Go's GroupVersionKind.String(): the core group is empty, so `/v1, Kind=ConfigMap`.
        let group_version = if api_version.contains('/') {
            api_version.to_string()
        } else {
            format!("/{api_version}")
        };
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group_version}, Kind={kind}"
        )));
    }
    Ok(())
}

/// Makes the body's namespace agree with the path's.
fn reconcile_namespace(call: &Call<'_>, rt: &ResourceType, obj: &mut Value) -> ApiResult<()> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    let meta = obj["metadata"]
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
    if rt.namespaced {
        let path_ns = call.req.namespace.clone().unwrap_or_default();
        if let Some(body_ns) = meta.get("namespace").and_then(Value::as_str)
            && !body_ns.is_empty()
            && body_ns != path_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        meta.insert("namespace".into(), json!(path_ns));
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

fn reconcile_name(call: &Call<'_>, obj: &mut Value) -> ApiResult<()> {
    let url = call.req.name.clone().unwrap_or_default();
    match obj["metadata"]["name"].as_str() {
        Some(n) if !n.is_empty() && n != url => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({url})"
        ))),
        _ => {
            obj["metadata"]["name"] = json!(url);
            Ok(())
        }
    }
}

fn get(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let state = lock(call.state)?;
    let obj = state
        .get(&rt.storage, &key(call))
        .ok_or_else(|| ApiError::not_found(rt.target(), call.req.name.as_deref().unwrap_or("")))?;
    let obj = from_storage(rt, &obj);
    if call.req.subresource.as_deref() == Some("scale") {
        return Ok(Reply::Json(200, scale_of(rt, &obj), Vec::new()));
    }
    Ok(Reply::Json(200, render(call).object(rt, obj), Vec::new()))
}

/// Builds the selection a list or watch asks for.
fn filter(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Filter> {
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

fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!(
            "Invalid value: \"{s}\": resourceVersion must be a number"
        ))
    })
}

fn encode_continue(rv: u64, last: &ObjKey) -> String {
    let token = json!({ "v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}/{}\u{0}", last.namespace, last.name) });
    base64::engine::general_purpose::STANDARD.encode(token.to_string())
}

fn decode_continue(token: &str) -> ApiResult<(u64, ObjKey)> {
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

fn list(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let filter = filter(call, rt)?;
    let limit = match call.query.get("limit") {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?,
        None => 0,
    };
    let mut state = lock(call.state)?;
    let current = state.rv;
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
                    return Err(super::store::too_large(n, current));
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
    let items: Vec<Value> = items.iter().map(|(_, o)| from_storage(rt, o)).collect();
    Ok(Reply::Json(
        200,
        render(call).list(rt, items, list_meta),
        Vec::new(),
    ))
}

fn items_last_key(items: &[(ObjKey, Arc<Value>)]) -> Option<ObjKey> {
    items.last().map(|(k, _)| k.clone())
}

fn watch(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
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
                message: "Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan".into(),
                field: "sendInitialEvents".into(),
            }],
        ));
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut state = lock(call.state)?;
    let current = state.rv;
    let initial_list = send_initial || matches!(rv, None | Some("0"));
    if initial_list {
        if let Some(rv) = rv.filter(|r| *r != "0") {
            let n = parse_rv(rv)?;
            if n > current {
                return Err(super::store::too_large(n, current));
            }
        }
        let coll = state.collection(&rt.storage);
        for obj in coll.objects.values() {
            if filter.matches(obj) {
                let _ = tx.send(WatchItem::Event(
                    super::store::EventType::Added,
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
            return Err(super::store::too_large(n, current));
        }
        match state.collection(&rt.storage).events_since(n) {
            Ok(events) => {
                for ev in events {
                    if let Some(kind) = translate(&filter, &ev) {
                        let _ = tx.send(WatchItem::Event(kind, ev.object.clone()));
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

fn create(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let mut obj = decode(call)?;
    check_type(rt, &obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    let opts = write_opts(call, false)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let written = lifecycle::create(&mut state, rt, obj, &opts)?;
    Ok(Reply::Json(201, written.object, written.warnings))
}

fn update(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    if call.req.subresource.as_deref() == Some("scale") {
        let scale = decode(call)?;
        return write_scale(call, rt, |_| Ok(scale));
    }
    let mut obj = decode(call)?;
    check_type(rt, &obj)?;
    reconcile_name(call, &mut obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    let opts = write_opts(call, false)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let written = lifecycle::update(&mut state, rt, &key(call), obj, &opts)?;
    Ok(Reply::Json(200, written.object, written.warnings))
}

/// The kinds of patch the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

fn patch_type(content_type: &str) -> ApiResult<PatchType> {
    match content_type {
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(PatchType::Apply),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})"
        ))),
    }
}

/// Applies a non-apply patch to a document.
fn apply_patch(pt: PatchType, rt: &ResourceType, doc: &Value, body: &Bytes) -> ApiResult<Value> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
    match pt {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            let mut out = doc.clone();
            json_patch::patch(&mut out, &ops).map_err(|e| {
                tracing::debug!(error = %e, "JSON patch failed");
                // kube-apiserver says no more than this, with empty details.
                let mut err = ApiError::new(
                    422,
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                );
                err.details = Some(json!({}));
                err
            })?;
            Ok(out)
        }
        PatchType::Merge => {
            let go_type = match &patch {
                Value::Object(_) => None,
                Value::String(_) => Some("string"),
                Value::Number(_) => Some("number"),
                Value::Array(_) => Some("array"),
                Value::Bool(_) => Some("bool"),
                Value::Null => Some("null"),
            };
            if let Some(go_type) = go_type {
                return Err(ApiError::bad_request(format!(
                    "error decoding patch: json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
                )));
            }
            let mut out = doc.clone();
            json_patch::merge(&mut out, &patch);
            Ok(out)
        }
        PatchType::Strategic => {
            if rt.custom || !strategic::supports_strategic_merge_patch(&rt.group, &rt.kind) {
                return Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                ));
            }
            strategic::apply(&rt.group, &rt.kind, doc, &patch).map_err(|e| {
                let reason = if e.reason().is_empty() {
                    "InternalError"
                } else {
                    e.reason()
                };
                ApiError::new(e.status_code(), reason, e.to_string())
            })
        }
        PatchType::Apply => Err(ApiError::internal("apply handled elsewhere")),
    }
}

fn patch(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let pt = patch_type(call.content_type)?;
    if call.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    if call.req.subresource.as_deref() == Some("scale") {
        if pt == PatchType::Apply {
            return Err(ApiError::unsupported_media_type(
                "apply is not supported on the scale subresource",
            ));
        }
        return write_scale(call, rt, |scale| apply_patch(pt, rt, scale, call.body));
    }
    if pt == PatchType::Apply {
        return server_side_apply(call, rt);
    }
    let k = key(call);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state
        .get(&rt.storage, &k)
        .ok_or_else(|| ApiError::not_found(rt.target(), &k.name))?;
    let doc = from_storage(rt, &current);
    let mut patched = apply_patch(pt, rt, &doc, call.body)?;
    if !patched.is_object() {
        return Err(ApiError::new(
            422,
            "Invalid",
            "the patch produced something that is not an object",
        ));
    }
    // A patch cannot move or retype the object.
    patched["apiVersion"] = json!(rt.api_version());
    patched["kind"] = json!(rt.kind);
    patched["metadata"]["name"] = json!(k.name);
    if rt.namespaced {
        patched["metadata"]["namespace"] = json!(k.namespace);
    }
    let opts = write_opts(call, false)?;
    let written = lifecycle::update(&mut state, rt, &k, patched, &opts)?;
    Ok(Reply::Json(200, written.object, written.warnings))
}

fn server_side_apply(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let Some(manager) = call.query.get("fieldManager").map(str::to_string) else {
        return Err(ApiError::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: is required for apply patch".into(),
                field: "fieldManager".into(),
            }],
        ));
    };
    let mut applied: Value = parse_yaml(call.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !applied.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the applied configuration is not an object",
        ));
    }
    check_applied_type(rt, &applied)?;
    reconcile_name(call, &mut applied)?;
    reconcile_namespace(call, rt, &mut applied)?;
    let force = call.query.flag("force");
    let k = key(call);
    let p = part(call);
    let scope = match p {
        Part::Status => managed_fields::Scope::Status,
        Part::Main if rt.status_subresource => managed_fields::Scope::Main,
        Part::Main => managed_fields::Scope::Whole,
        Part::Scale => managed_fields::Scope::Scale,
    };
    let mut opts = write_opts(call, true)?;
    opts.manager = manager.clone();
    let schema = lifecycle::field_schema(rt);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state.get(&rt.storage, &k).map(|c| from_storage(rt, &c));
    let live = current.as_ref();
    if live.is_none() && p == Part::Status {
        return Err(ApiError::not_found(rt.target(), &k.name));
    }
    let result = managed_fields::apply(
        live,
        &applied,
        &manager,
        &rt.api_version(),
        scope,
        force,
        schema.as_ref(),
        &call.now,
    );
    let mut merged = match result {
        Ok(v) => v,
        Err(conflicts) => return Err(apply_conflict(&conflicts)),
    };
    match live {
        None => {
            let written = lifecycle::create(&mut state, rt, merged, &opts)?;
            Ok(Reply::Json(201, written.object, written.warnings))
        }
        Some(live) => {
            let rv = applied["metadata"]["resourceVersion"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| {
                    live["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                });
            merged["metadata"]["resourceVersion"] = json!(rv);
            let written = lifecycle::update(&mut state, rt, &k, merged, &opts)?;
            Ok(Reply::Json(200, written.object, written.warnings))
        }
    }
}

fn apply_conflict(conflicts: &[managed_fields::Conflict]) -> ApiError {
    let mut e = ApiError::new(409, "Conflict", managed_fields::conflict_message(conflicts));
    // kube-apiserver's apply conflicts name neither the object nor its kind, only the causes.
    e.details = Some(json!({ "causes": conflicts.iter().map(|c| c.cause()).collect::<Vec<_>>() }));
    e
}

fn get_path<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |cur, p| cur.get(p))
}

fn set_path(obj: &mut Value, path: &str, value: Value) {
    let mut cur = obj;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        if !cur.is_object() {
            *cur = json!({});
        }
        if i == parts.len() - 1 {
            cur[*p] = value;
            return;
        }
        cur = &mut cur[*p];
    }
}

/// The `autoscaling/v1` Scale of an object.
fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
    let Some(spec) = &rt.scale else {
        return Value::Null;
    };
    let selector = match &spec.label_selector_path {
        Some(p) if rt.custom => get_path(obj, p).cloned().unwrap_or(Value::Null),
        _ => {
            // Built-in workloads derive the selector string from spec.selector.
            match LabelSelector::from_label_selector(&obj["spec"]["selector"]) {
                Ok(s) if !s.is_empty() => json!(s.to_string()),
                _ => Value::Null,
            }
        }
    };
    let mut status = json!({ "replicas": get_path(obj, &spec.status_replicas_path).cloned().unwrap_or(json!(0)) });
    if !selector.is_null() {
        status["selector"] = selector;
    }
    let m = &obj["metadata"];
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
        },
        "spec": { "replicas": get_path(obj, &spec.spec_replicas_path).cloned().unwrap_or(json!(0)) },
        "status": status,
    })
}

/// Writes the scale subresource: `change` turns the current Scale into the desired one.
fn write_scale(
    call: &Call<'_>,
    rt: &Arc<ResourceType>,
    change: impl FnOnce(&Value) -> ApiResult<Value>,
) -> ApiResult<Reply> {
    let Some(spec) = rt.scale.clone() else {
        return Err(ApiError::no_route());
    };
    let k = key(call);
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let current = state
        .get(&rt.storage, &k)
        .ok_or_else(|| ApiError::not_found(rt.target(), &k.name))?;
    let obj = from_storage(rt, &current);
    let scale = change(&scale_of(rt, &obj))?;
    let Some(replicas) = scale["spec"]["replicas"].as_i64() else {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            &k.name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: null: must be an integer".into(),
                field: "spec.replicas".into(),
            }],
        ));
    };
    // A custom resource's replicas are checked by its own validation (schema and scale checks) instead.
    if replicas < 0 && !rt.custom {
        return Err(ApiError::invalid(
            "Scale",
            "autoscaling",
            &k.name,
            vec![Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                field: "spec.replicas".into(),
            }],
        ));
    }
    let mut next = obj.clone();
    if let Some(rv) = scale["metadata"]["resourceVersion"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        next["metadata"]["resourceVersion"] = json!(rv);
    }
    set_path(&mut next, &spec.spec_replicas_path, json!(replicas));
    let mut opts = write_opts(call, false)?;
    opts.part = Part::Scale;
    let written = lifecycle::update(&mut state, rt, &k, next, &opts)?;
    Ok(Reply::Json(
        200,
        scale_of(rt, &written.object),
        written.warnings,
    ))
}

/// DeleteOptions from the body and the query.
struct DeleteOptions {
    propagation: Option<Propagation>,
    preconditions: (Option<String>, Option<String>),
    dry_run: bool,
}

fn delete_options(call: &Call<'_>) -> ApiResult<DeleteOptions> {
    let body: Value = if call.body.is_empty() {
        json!({})
    } else {
        serde_json::from_slice(call.body)
            .map_err(|e| ApiError::bad_request(format!("couldn't decode DeleteOptions: {e}")))?
    };
    let policy = body["propagationPolicy"]
        .as_str()
        .map(str::to_string)
        .or_else(|| call.query.get("propagationPolicy").map(str::to_string));
    let mut propagation = match policy.as_deref() {
        None => None,
        Some("Background") => Some(Propagation::Background),
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some(other) => {
            return Err(ApiError::invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                vec![Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!(
                        "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
                    ),
                    field: "propagationPolicy".into(),
                }],
            ));
        }
    };
    if propagation.is_none() {
        match body["orphanDependents"].as_bool() {
            Some(true) => propagation = Some(Propagation::Orphan),
            Some(false) => propagation = Some(Propagation::Background),
            None => {}
        }
    }
    let pre = &body["preconditions"];
    let dry = body["dryRun"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v == "All"))
        || dry_run(call)?;
    Ok(DeleteOptions {
        propagation,
        preconditions: (
            pre["uid"].as_str().map(str::to_string),
            pre["resourceVersion"].as_str().map(str::to_string),
        ),
        dry_run: dry,
    })
}

fn deleted_reply(rt: &ResourceType, deleted: Deleted) -> Value {
    match deleted {
        Deleted::Pending(obj) => from_storage(rt, &obj),
        Deleted::Gone(obj) => success_status(
            rt.target(),
            obj["metadata"]["name"].as_str().unwrap_or(""),
            obj["metadata"]["uid"].as_str().unwrap_or(""),
        ),
    }
}

fn delete(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
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
    Ok(Reply::Json(200, deleted_reply(rt, deleted), Vec::new()))
}

fn delete_collection(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let filter = filter(call, rt)?;
    let opts = delete_options(call)?;
    let mut state = lock(call.state)?;
    state.now = call.now.clone();
    let keys: Vec<ObjKey> = state
        .collection(&rt.storage)
        .objects
        .iter()
        .filter(|(_, o)| filter.matches(o))
        .map(|(k, _)| k.clone())
        .collect();
    let mut items = Vec::new();
    for k in keys {
        match lifecycle::delete(
            &mut state,
            rt,
            &k,
            opts.propagation,
            (None, None),
            opts.dry_run,
        ) {
            Ok(Deleted::Pending(o)) | Ok(Deleted::Gone(o)) => items.push(from_storage(rt, &o)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let rv = state.rv;
    drop(state);
    Ok(Reply::Json(
        200,
        Render::Object.list(rt, items, json!({ "resourceVersion": rv.to_string() })),
        Vec::new(),
    ))
}
