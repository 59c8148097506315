//! The life of an object: system metadata, the write pipeline, deletion with finalizers, garbage collection,
//! namespace termination and CustomResourceDefinitions.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::convert::{from_storage, to_storage};
use super::crd;
use super::error::{ApiError, ApiResult, Cause};
use super::managed_fields::{self, Scope};
use super::registry::ResourceType;
use super::store::{ObjKey, State, StorageKey, key_of, owner_uids};
use super::validation;
use super::workloads;

/// Which part of the object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource.
    Main,
    /// The `status` subresource.
    Status,
    /// The `scale` subresource (a write of the replicas of the main resource).
    Scale,
}

/// Options common to writes.
#[derive(Debug, Clone)]
pub struct WriteOpts {
    /// The field manager.
    pub manager: String,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation=Strict`.
    pub strict: bool,
    /// Which part is written.
    pub part: Part,
    /// `managedFields` were already computed by server-side apply.
    pub applied: bool,
}

impl WriteOpts {
    /// A write by the server itself (seeding, given state).
    pub fn system(part: Part) -> Self {
        Self {
            manager: "kube-apiserver".into(),
            dry_run: false,
            strict: false,
            part,
            applied: false,
        }
    }
}

/// The result of a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The object in the request's version.
    pub object: Value,
    /// Warnings for the `Warning` header (unknown fields).
    pub warnings: Vec<String>,
}

/// How dependents are treated when an owner is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now, dependents afterwards.
    Background,
    /// Delete dependents first, then the owner.
    Foreground,
    /// Keep dependents, removing the owner reference.
    Orphan,
}

/// The result of a delete.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// The object is gone; its last state in the stored form.
    Gone(Arc<Value>),
    /// The object waits for finalizers; its current state in the stored form.
    Pending(Arc<Value>),
}

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

fn meta(obj: &Value) -> &Value {
    &obj["metadata"]
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn set_finalizers_value(obj: &mut Value, list: &[String]) {
    let m = meta_mut(obj);
    if list.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert("finalizers".into(), json!(list));
    }
}

fn is_deleting(obj: &Value) -> bool {
    meta(obj)["deletionTimestamp"].is_string()
}

/// The content that `metadata.generation` tracks: everything but metadata (and status when it is a subresource).
fn spec_content(rt: &ResourceType, obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        if rt.status_subresource || !rt.custom {
            m.remove("status");
        }
    }
    v
}

/// An object with what changes on every write (resourceVersion, managedFields times) removed, to detect no-ops.
fn comparable(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
            for e in entries.iter_mut() {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
        }
    }
    v
}

fn scope(rt: &ResourceType, part: Part) -> Scope {
    match part {
        Part::Status => Scope::Status,
        Part::Main if rt.status_subresource => Scope::Main,
        Part::Main => Scope::Whole,
        Part::Scale => Scope::Scale,
    }
}

/// Schema information for field management.
pub fn field_schema(rt: &ResourceType) -> Box<dyn managed_fields::Schema + Send + Sync> {
    match (&rt.schema, rt.typed) {
        (Some(s), _) => Box::new(validation::CustomSchema(s.clone())),
        (None, Some(_)) => Box::new(validation::BuiltinSchema {
            group: rt.group.clone(),
            kind: rt.kind.clone(),
        }),
        (None, None) => Box::new(managed_fields::DeducedSchema),
    }
}

fn name_causes(rt: &ResourceType, name: &str) -> Vec<Cause> {
    let check = if rt.group.is_empty() && rt.plural == "namespaces" {
        validation::dns_label(name)
    } else {
        validation::dns_subdomain(name)
    };
    match check {
        Ok(()) => Vec::new(),
        Err(msg) => vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: \"{name}\": {msg}"),
            field: "metadata.name".into(),
        }],
    }
}

fn owner_reference_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(refs) = meta(obj)["ownerReferences"].as_array() else {
        return causes;
    };
    let mut controllers = 0;
    for (i, r) in refs.iter().enumerate() {
        for field in ["apiVersion", "kind", "name", "uid"] {
            if r[field].as_str().is_none_or(str::is_empty) {
                causes.push(Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value".into(),
                    field: format!("metadata.ownerReferences[{i}].{field}"),
                });
            }
        }
        if r["controller"].as_bool() == Some(true) {
            controllers += 1;
        }
    }
    if controllers > 1 {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: Only one reference can have Controller set to true",
                Value::Array(refs.clone())
            ),
            field: "metadata.ownerReferences".into(),
        });
    }
    causes
}

/// Defaults, prunes and validates the content of a request-version object. Returns unknown-field warnings.
fn check_content(
    rt: &ResourceType,
    obj: &mut Value,
    strict: bool,
    name: &str,
) -> ApiResult<Vec<String>> {
    let unknown = validation::check(rt, obj, name)?;
    if strict && !unknown.is_empty() {
        let msg = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(ApiError::bad_request(format!(
            "strict decoding error: {msg}"
        )));
    }
    Ok(unknown
        .into_iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect())
}

fn namespace_check(state: &State, namespace: &str) -> ApiResult<()> {
    let ns_storage: StorageKey = (String::new(), "namespaces".into());
    match state.get(&ns_storage, &ObjKey::new("", namespace)) {
        None => Err(ApiError::not_found(
            super::error::Target {
                group: "",
                resource: "namespaces",
            },
            namespace,
        )),
        Some(ns) if is_deleting(&ns) => {
            let mut e = ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            );
            e.details = Some(json!({
                "name": namespace, "kind": "namespaces",
                "causes": [{ "reason": "NamespaceTerminating",
                             "message": format!("namespace {namespace} is being terminated"),
                             "field": "metadata.namespace" }]
            }));
            Err(e)
        }
        Some(_) => Ok(()),
    }
}

/// Creates an object. `obj` is in `rt`'s version with namespace already reconciled with the path.
pub fn create(
    state: &mut State,
    rt: &ResourceType,
    mut obj: Value,
    opts: &WriteOpts,
) -> ApiResult<Written> {
    let storage = rt.storage.clone();
    let now = state.now.clone();
    {
        let m = meta_mut(&mut obj);
        if m.get("resourceVersion")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
        {
            return Err(ApiError::internal(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        for f in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
        ] {
            m.remove(f);
        }
    }
    let namespace = meta(&obj)["namespace"].as_str().unwrap_or("").to_string();
    let mut name = meta(&obj)["name"].as_str().unwrap_or("").to_string();
    let generate = meta(&obj)["generateName"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if name.is_empty() && generate.is_empty() {
        return Err(ApiError::invalid(
            &rt.kind,
            &rt.group,
            "",
            vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: name or generateName is required".into(),
                field: "metadata.name".into(),
            }],
        ));
    }
    if name.is_empty() {
        let coll = state.collections.get(&storage);
        loop {
            let candidate = format!("{generate}{}", state.ids.suffix());
            let taken =
                coll.is_some_and(|c| c.objects.contains_key(&ObjKey::new(&namespace, &candidate)));
            if !taken {
                name = candidate;
                break;
            }
        }
        meta_mut(&mut obj).insert("name".into(), json!(name));
    }
    let mut causes = name_causes(rt, &name);
    causes.extend(owner_reference_causes(&obj));
    if !causes.is_empty() {
        return Err(ApiError::invalid(&rt.kind, &rt.group, &name, causes));
    }
    if rt.namespaced {
        namespace_check(state, &namespace)?;
    }
    if state
        .get(&storage, &ObjKey::new(&namespace, &name))
        .is_some()
    {
        return Err(ApiError::already_exists(rt.target(), &name));
    }
    if rt.status_subresource
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    type_defaults_on_create(rt, &mut obj);
    let warnings = check_content(rt, &mut obj, opts.strict, &name)?;
    if rt.custom_resource_definition() {
        crd::validate(&obj, &name)?;
        let mut f = finalizers(&obj);
        if !f.iter().any(|x| x == crd::CLEANUP_FINALIZER) {
            f.push(crd::CLEANUP_FINALIZER.into());
        }
        set_finalizers_value(&mut obj, &f);
    }
    {
        let uid = state.ids.uid();
        let m = meta_mut(&mut obj);
        m.insert("uid".into(), json!(uid));
        m.insert("creationTimestamp".into(), json!(now));
        if rt.generation {
            m.insert("generation".into(), json!(1));
        }
    }
    if !opts.applied {
        managed_fields::update(
            None,
            &mut obj,
            &opts.manager,
            &rt.api_version(),
            scope(rt, opts.part),
            field_schema(rt).as_ref(),
            &now,
        );
    }
    if opts.dry_run {
        return Ok(Written {
            object: obj,
            warnings,
        });
    }
    let stored = state.put(&storage, to_storage(rt, obj));
    after_write(state, rt, &stored);
    let key = key_of(&stored);
    let object = from_storage(rt, &state.get(&storage, &key).unwrap_or(stored));
    play_workload_controller(state, rt, &key);
    Ok(Written { object, warnings })
}

fn type_defaults_on_create(rt: &ResourceType, obj: &mut Value) {
    if rt.group.is_empty() && rt.plural == "namespaces" {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
        obj["status"] = json!({ "phase": "Active" });
    }
    if rt.group.is_empty() && rt.plural == "services" {
        // kube-apiserver allocates it itself, controllers or not.
        workloads::allocate_cluster_ip(obj);
    }
    validation::builtin_defaults(rt, obj);
}

/// Replaces an object (PUT, or the result of a patch). `new` is in `rt`'s version.
pub fn update(
    state: &mut State,
    rt: &ResourceType,
    key: &ObjKey,
    mut new: Value,
    opts: &WriteOpts,
) -> ApiResult<Written> {
    let storage = rt.storage.clone();
    let now = state.now.clone();
    let Some(old_stored) = state.get(&storage, key) else {
        return Err(ApiError::not_found(rt.target(), &key.name));
    };
    let old = from_storage(rt, &old_stored);
    let old_rv = meta(&old)["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    match meta(&new)["resourceVersion"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        Some(rv) if rv != old_rv => return Err(ApiError::conflict(rt.target(), &key.name)),
        Some(_) => {}
        None if rt.custom && opts.part != Part::Status && !opts.applied => {
            return Err(ApiError::invalid(
                &rt.kind,
                &rt.group,
                &key.name,
                vec![Cause {
                    reason: "FieldValueInvalid".into(),
                    message: "Invalid value: 0x0: must be specified for an update".into(),
                    field: "metadata.resourceVersion".into(),
                }],
            ));
        }
        None => {}
    }
    match opts.part {
        Part::Status => {
            let status = new.get("status").cloned();
            let managed = meta(&new)["managedFields"].clone();
            new = old.clone();
            match status {
                Some(s) => new["status"] = s,
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
            if opts.applied {
                meta_mut(&mut new).insert("managedFields".into(), managed);
            }
        }
        Part::Main | Part::Scale => {
            let old_meta = meta(&old).clone();
            let m = meta_mut(&mut new);
            for f in [
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ] {
                match old_meta.get(f) {
                    Some(v) => m.insert(f.into(), v.clone()),
                    None => m.remove(f),
                };
            }
            if !m.contains_key("managedFields")
                && let Some(mf) = old_meta.get("managedFields")
            {
                m.insert("managedFields".into(), mf.clone());
            }
            if rt.status_subresource {
                match old.get("status") {
                    Some(s) => new["status"] = s.clone(),
                    None => {
                        if let Some(m) = new.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
            }
        }
    }
    let mut causes = owner_reference_causes(&new);
    if is_deleting(&old) {
        let before = finalizers(&old);
        let added: Vec<String> = finalizers(&new)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            let cause = Cause {
                reason: "FieldValueForbidden".into(),
                message: format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    go_string_slice(&added)
                ),
                field: "metadata.finalizers".into(),
            };
            // kube-apiserver checks object metadata twice on update (the common checks and the kind's own),
            // so the cause is listed twice (and the message, which drops repeats, names it once).
            causes.push(cause.clone());
            causes.push(cause);
        }
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid(&rt.kind, &rt.group, &key.name, causes));
    }
    let warnings = check_content(rt, &mut new, opts.strict, &key.name)?;
    if rt.custom_resource_definition() {
        crd::validate(&new, &key.name)?;
    }
    if rt.generation && spec_content(rt, &old) != spec_content(rt, &new) {
        let g = meta(&old)["generation"].as_i64().unwrap_or(0) + 1;
        meta_mut(&mut new).insert("generation".into(), json!(g));
    }
    if !opts.applied {
        managed_fields::update(
            Some(&old),
            &mut new,
            &opts.manager,
            &rt.api_version(),
            scope(rt, opts.part),
            field_schema(rt).as_ref(),
            &now,
        );
    }
    meta_mut(&mut new).insert("resourceVersion".into(), json!(old_rv));
    if comparable(&new) == comparable(&old) {
        return Ok(Written {
            object: old,
            warnings,
        });
    }
    if opts.dry_run {
        return Ok(Written {
            object: new,
            warnings,
        });
    }
    if deletes_during_update(&storage, &new) {
        // Like kube-apiserver, the update is not stored: the object is deleted as it was (the DELETED event
        // carries the old state) and the answer is the updated object at the old resourceVersion.
        remove(state, &storage, key);
        return Ok(Written {
            object: new,
            warnings,
        });
    }
    let stored = state.put(&storage, to_storage(rt, new));
    after_write(state, rt, &stored);
    let object = state
        .get(&storage, key)
        .map(|o| from_storage(rt, &o))
        .unwrap_or_else(|| from_storage(rt, &stored));
    play_workload_controller(state, rt, key);
    Ok(Written { object, warnings })
}

/// Whether an update removes the last finalizer of an object being deleted (namespaces wait for their
/// `spec.finalizers` too).
fn deletes_during_update(storage: &StorageKey, new: &Value) -> bool {
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    is_deleting(new) && finalizers(new).is_empty() && !is_namespace
}

fn go_string_slice(items: &[String]) -> String {
    format!(
        "[]string{{{}}}",
        items
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Work that follows a stored write: finishing deletions whose finalizers are gone, CRD registration.
fn after_write(state: &mut State, rt: &ResourceType, stored: &Arc<Value>) {
    if rt.custom_resource_definition() {
        crd::sync(state, stored);
    }
    let storage = rt.storage.clone();
    let key = key_of(stored);
    let mut work = VecDeque::new();
    if is_deleting(stored) {
        work.push_back(Task::Check(storage.clone(), key.clone()));
    }
    if state.controllers {
        // A dependent whose owners are all gone is collected (the owner may have been deleted before it was created).
        let owners = owner_uids(stored);
        if !owners.is_empty() && owners.iter().all(|u| state.locate(u).is_none()) {
            work.push_back(Task::Collect(storage, key));
        }
    }
    run(state, work);
}

/// The workload controller's write after a write to `key` (see [`workloads`]): a change of its own, made after
/// the answer to the write that caused it was taken.
fn play_workload_controller(state: &mut State, rt: &ResourceType, key: &ObjKey) {
    if !state.workload_status || !workloads::plays(rt) {
        return;
    }
    let Some(current) = state.get(&rt.storage, key).map(|o| from_storage(rt, &o)) else {
        return;
    };
    if let Some(mut next) = workloads::reported(rt, &current) {
        // Recorded as kube-controller-manager's update, as on a real cluster.
        let now = state.now.clone();
        managed_fields::update(
            Some(&current),
            &mut next,
            workloads::MANAGER,
            &rt.api_version(),
            workloads::scope(rt),
            field_schema(rt).as_ref(),
            &now,
        );
        state.put(&rt.storage, to_storage(rt, next));
    }
}

/// Deletes an object by key, honouring finalizers and propagation.
pub fn delete(
    state: &mut State,
    rt: &ResourceType,
    key: &ObjKey,
    propagation: Option<Propagation>,
    preconditions: (Option<String>, Option<String>),
    dry_run: bool,
) -> ApiResult<Deleted> {
    let storage = rt.storage.clone();
    let Some(obj) = state.get(&storage, key) else {
        return Err(ApiError::not_found(rt.target(), &key.name));
    };
    let (uid, rv) = preconditions;
    if let Some(uid) = uid {
        let actual = meta(&obj)["uid"].as_str().unwrap_or("");
        if uid != actual {
            return Err(ApiError::conflict_with(
                rt.target(),
                &key.name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
    }
    if let Some(rv) = rv {
        let actual = meta(&obj)["resourceVersion"].as_str().unwrap_or("");
        if rv != actual {
            return Err(ApiError::conflict_with(
                rt.target(),
                &key.name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                ),
            ));
        }
    }
    if dry_run {
        return Ok(Deleted::Pending(obj));
    }
    let propagation = propagation.unwrap_or(Propagation::Background);
    Ok(mark_deleted(state, &storage, key, propagation))
}

/// Starts deleting a stored object and runs whatever that triggers.
fn mark_deleted(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    propagation: Propagation,
) -> Deleted {
    let Some(obj) = state.get(storage, key) else {
        return Deleted::Gone(Arc::new(Value::Null));
    };
    let mut fins = finalizers(&obj);
    match propagation {
        Propagation::Foreground if !fins.iter().any(|f| f == FOREGROUND) => {
            fins.push(FOREGROUND.into())
        }
        Propagation::Orphan if !fins.iter().any(|f| f == ORPHAN) => fins.push(ORPHAN.into()),
        _ => {}
    }
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    let is_crd = storage.0 == "apiextensions.k8s.io" && storage.1 == "customresourcedefinitions";
    let spec_finalizers = is_namespace
        && obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if fins.is_empty() && !spec_finalizers {
        let gone = remove(state, storage, key);
        return Deleted::Gone(gone.unwrap_or(obj));
    }
    if !is_deleting(&obj) || finalizers(&obj) != fins {
        let mut next = (*obj).clone();
        set_finalizers_value(&mut next, &fins);
        let m = meta_mut(&mut next);
        if !m.contains_key("deletionTimestamp") {
            m.insert("deletionTimestamp".into(), json!(state.now));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            // kube-apiserver bumps the generation when it sets deletionTimestamp.
            if let Some(g) = m.get("generation").and_then(Value::as_i64) {
                m.insert("generation".into(), json!(g + 1));
            }
        }
        if is_namespace {
            next["status"]["phase"] = json!("Terminating");
        }
        state.put(storage, next);
    }
    let mut work = VecDeque::new();
    if is_crd {
        work.push_back(Task::CrdCleanup(key.name.clone()));
    }
    if state.controllers {
        if is_namespace {
            work.push_back(Task::EmptyNamespace(key.name.clone()));
        }
        work.push_back(Task::Check(storage.clone(), key.clone()));
    }
    run(state, work);
    match state.get(storage, key) {
        Some(o) => Deleted::Pending(o),
        None => Deleted::Gone(obj),
    }
}

/// Removes an object from storage and queues the consequences.
fn remove(state: &mut State, storage: &StorageKey, key: &ObjKey) -> Option<Arc<Value>> {
    let gone = state.remove(storage, key)?;
    let mut work = VecDeque::new();
    work.push_back(Task::Removed(storage.clone(), gone.clone()));
    run(state, work);
    Some(gone)
}

/// Deferred consequences of a change, processed until none are left.
#[derive(Debug)]
enum Task {
    /// An object was removed: collect dependents, wake waiting owners, finish namespaces and CRDs.
    Removed(StorageKey, Arc<Value>),
    /// Re-examine an object being deleted: process foreground/orphan finalizers, remove it when done.
    Check(StorageKey, ObjKey),
    /// Delete an object whose owners are gone, if that is still true.
    Collect(StorageKey, ObjKey),
    /// Delete everything in a terminating namespace.
    EmptyNamespace(String),
    /// Delete every custom object of a terminating CRD.
    CrdCleanup(String),
}

fn run(state: &mut State, mut work: VecDeque<Task>) {
    // Each task removes or changes an object at most once per pass; the bound only guards against a bug looping.
    let mut budget = 1_000_000usize;
    while let Some(task) = work.pop_front() {
        budget = budget.saturating_sub(1);
        if budget == 0 {
            tracing::error!("lifecycle work did not settle; stopping");
            break;
        }
        match task {
            Task::Removed(storage, obj) => removed(state, &storage, &obj, &mut work),
            Task::Check(storage, key) => check(state, &storage, &key, &mut work),
            Task::Collect(storage, key) => collect(state, &storage, &key, &mut work),
            Task::EmptyNamespace(ns) => empty_namespace(state, &ns, &mut work),
            Task::CrdCleanup(name) => crd_cleanup(state, &name, &mut work),
        }
    }
}

fn removed(state: &mut State, storage: &StorageKey, obj: &Value, work: &mut VecDeque<Task>) {
    let uid = meta(obj)["uid"].as_str().unwrap_or("").to_string();
    if storage.0 == "apiextensions.k8s.io" && storage.1 == "customresourcedefinitions" {
        crd::unregister(state, obj);
    }
    if state.controllers {
        if let Some(deps) = state.dependents.get(&uid) {
            for (s, k) in deps.iter() {
                work.push_back(Task::Collect(s.clone(), k.clone()));
            }
        }
        // Owners waiting in foreground deletion for this dependent.
        for owner in owner_uids(obj) {
            if let Some((s, k)) = state.locate(&owner).cloned() {
                work.push_back(Task::Check(s, k));
            }
        }
        let ns = meta(obj)["namespace"].as_str().unwrap_or("");
        if !ns.is_empty() {
            let ns_storage: StorageKey = (String::new(), "namespaces".into());
            if let Some(nsobj) = state.get(&ns_storage, &ObjKey::new("", ns))
                && is_deleting(&nsobj)
            {
                work.push_back(Task::Check(ns_storage, ObjKey::new("", ns)));
            }
        }
    }
    // CRD cleanup is part of the API server itself, not a controller.
    if let Some(crd_name) = crd::crd_of_storage(state, storage) {
        work.push_back(Task::CrdCleanup(crd_name));
    }
}

fn update_stored(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    f: impl FnOnce(&mut Value),
) -> Option<Arc<Value>> {
    let obj = state.get(storage, key)?;
    let mut next = (*obj).clone();
    f(&mut next);
    if next == *obj {
        return Some(obj);
    }
    Some(state.put(storage, next))
}

fn check(state: &mut State, storage: &StorageKey, key: &ObjKey, work: &mut VecDeque<Task>) {
    let Some(obj) = state.get(storage, key) else {
        return;
    };
    if !is_deleting(&obj) {
        return;
    }
    let uid = meta(&obj)["uid"].as_str().unwrap_or("").to_string();
    let mut fins = finalizers(&obj);
    if state.controllers && fins.iter().any(|f| f == ORPHAN) {
        let deps: Vec<_> = state
            .dependents
            .get(&uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        for (s, k) in deps {
            update_stored(state, &s, &k, |d| {
                if let Some(refs) = d["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"].as_str() != Some(&uid));
                    if refs.is_empty() {
                        meta_mut(d).remove("ownerReferences");
                    }
                }
            });
        }
        fins.retain(|f| f != ORPHAN);
    }
    if state.controllers && fins.iter().any(|f| f == FOREGROUND) {
        let deps: Vec<_> = state
            .dependents
            .get(&uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        let mut blocking = false;
        for (s, k) in deps {
            let Some(dep) = state.get(&s, &k) else {
                continue;
            };
            let blocks = meta(&dep)["ownerReferences"]
                .as_array()
                .is_some_and(|refs| {
                    refs.iter().any(|r| {
                        r["uid"].as_str() == Some(&uid)
                            && r["blockOwnerDeletion"].as_bool() == Some(true)
                    })
                });
            if !is_deleting(&dep) {
                mark_deleted(state, &s, &k, Propagation::Foreground);
            }
            if blocks && state.get(&s, &k).is_some() {
                blocking = true;
            }
        }
        if !blocking {
            fins.retain(|f| f != FOREGROUND);
        }
    }
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    if is_namespace && state.controllers && namespace_is_empty(state, &key.name) {
        update_stored(state, storage, key, |n| {
            if let Some(m) = n["spec"].as_object_mut() {
                m.remove("finalizers");
            }
        });
    }
    let Some(current) = state.get(storage, key) else {
        return;
    };
    if finalizers(&current) != fins {
        update_stored(state, storage, key, |o| set_finalizers_value(o, &fins));
    }
    let Some(current) = state.get(storage, key) else {
        return;
    };
    let spec_fins = is_namespace
        && current["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if finalizers(&current).is_empty()
        && !spec_fins
        && let Some(gone) = state.remove(storage, key)
    {
        work.push_back(Task::Removed(storage.clone(), gone));
    }
}

fn collect(state: &mut State, storage: &StorageKey, key: &ObjKey, work: &mut VecDeque<Task>) {
    let Some(obj) = state.get(storage, key) else {
        return;
    };
    let owners = owner_uids(&obj);
    if owners.is_empty() {
        return;
    }
    let alive: Vec<&String> = owners
        .iter()
        .filter(|u| state.locate(u).is_some())
        .collect();
    if !alive.is_empty() {
        if alive.len() < owners.len() {
            let alive: Vec<String> = alive.into_iter().cloned().collect();
            update_stored(state, storage, key, |d| {
                if let Some(refs) = d["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| {
                        r["uid"]
                            .as_str()
                            .is_some_and(|u| alive.iter().any(|a| a == u))
                    });
                }
            });
        }
        return;
    }
    if is_deleting(&obj) {
        return;
    }
    // Dependents of an owner that was deleted in the foreground go the same way.
    let _ = work;
    mark_deleted(state, storage, key, Propagation::Background);
}

fn namespace_is_empty(state: &State, ns: &str) -> bool {
    state.collections.iter().all(|((g, p), c)| {
        (g.is_empty() && p == "namespaces") || !c.objects.keys().any(|k| k.namespace == ns)
    })
}

fn empty_namespace(state: &mut State, ns: &str, work: &mut VecDeque<Task>) {
    let mut targets = Vec::new();
    for (storage, coll) in state.collections.iter() {
        if storage.0.is_empty() && storage.1 == "namespaces" {
            continue;
        }
        let start = ObjKey::new(ns, "");
        for (k, o) in coll.objects.range(start..) {
            if k.namespace != ns {
                break;
            }
            if !is_deleting(o) {
                targets.push((storage.clone(), k.clone()));
            }
        }
    }
    for (s, k) in targets {
        mark_deleted(state, &s, &k, Propagation::Background);
    }
    work.push_back(Task::Check(
        (String::new(), "namespaces".into()),
        ObjKey::new("", ns),
    ));
}

fn crd_cleanup(state: &mut State, name: &str, work: &mut VecDeque<Task>) {
    let crd_storage: StorageKey = (
        "apiextensions.k8s.io".into(),
        "customresourcedefinitions".into(),
    );
    let key = ObjKey::new("", name);
    let Some(crd_obj) = state.get(&crd_storage, &key) else {
        return;
    };
    if !is_deleting(&crd_obj) {
        return;
    }
    let Some(storage) = crd::storage_of(&crd_obj) else {
        return;
    };
    let targets: Vec<ObjKey> = state
        .collections
        .get(&storage)
        .map(|c| {
            c.objects
                .iter()
                .filter(|(_, o)| !is_deleting(o))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    for k in targets {
        mark_deleted(state, &storage, &k, Propagation::Background);
    }
    let empty = state
        .collections
        .get(&storage)
        .is_none_or(|c| c.objects.is_empty());
    if empty {
        update_stored(state, &crd_storage, &key, |o| {
            let f: Vec<String> = finalizers(o)
                .into_iter()
                .filter(|f| f != crd::CLEANUP_FINALIZER)
                .collect();
            set_finalizers_value(o, &f);
        });
        if let Some(current) = state.get(&crd_storage, &key)
            && finalizers(&current).is_empty()
            && let Some(gone) = state.remove(&crd_storage, &key)
        {
            work.push_back(Task::Removed(crd_storage, gone));
        }
    }
}
