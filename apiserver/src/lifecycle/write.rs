//! The write pipeline: create and update, with defaults, validation, managed fields and generation.

use std::collections::VecDeque;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::gc::{Task, remove, run};
use super::job_selector;
use super::metadata::{
    check_content, comparable, field_schema, finalizers, is_deleting, meta, meta_mut, name_causes,
    namespace_check, owner_reference_causes, scope, spec_content,
};
use super::options::{Part, WriteOpts, Written};
use super::pod_create;
use crate::convert::{from_storage, to_storage, try_from_storage, try_to_storage};
use crate::crd;
use crate::error::{ApiError, ApiResult, Cause};
use crate::managed_fields::{self};
use crate::registry::ResourceType;
use crate::store::{ObjKey, State, StorageKey, key_of, owner_uids};
use crate::validation;
use crate::workloads;

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
    let generated = name.is_empty();
    if generated {
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
        // kube-apiserver reports the metadata's causes with the kind's own.
        causes.extend(validation::kind_causes(rt, &obj));
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
    let requested_qos = pod_create::requested_qos(&obj);
    if rt.status_subresource
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    type_defaults_on_create(rt, &mut obj);
    let is_namespace = rt.group.is_empty() && rt.plural == "namespaces";
    if is_namespace && !generated {
        // Defaulted on decoding when the name is given, so the creator owns it.
        name_label(&mut obj, &name);
    }
    let uid = state.ids.uid();
    // A Job's selector is generated (from its uid) before validation and after field management.
    let generated = if job_selector::is_job(rt) {
        meta_mut(&mut obj).insert("uid".into(), json!(uid));
        job_selector::generate(&mut obj, &uid)
    } else {
        None
    };
    let warnings = check_content(rt, &mut obj, None, opts, &name)?;
    if rt.custom_resource_definition() {
        crd::status::defaults(&mut obj);
        crd::status::prepare(&mut obj, None);
        crd::validate(&obj, &name)?;
    }
    {
        let m = meta_mut(&mut obj);
        m.insert("uid".into(), json!(uid));
        m.insert("creationTimestamp".into(), json!(now));
        if rt.generation {
            m.insert("generation".into(), json!(1));
        }
    }
    if !opts.applied {
        let mut seen = generated.as_ref().map(|g| g.without(&obj));
        managed_fields::update(
            None,
            seen.as_mut().unwrap_or(&mut obj),
            &opts.manager,
            &rt.api_version(),
            scope(rt, opts.part),
            field_schema(rt).as_ref(),
            &now,
        );
        if let Some(fields) =
            seen.and_then(|mut s| s["metadata"].as_object_mut()?.remove("managedFields"))
        {
            meta_mut(&mut obj).insert("managedFields".into(), fields);
        }
    }
    if is_namespace {
        // Set by the namespace strategy after the field manager ran: nobody owns them (nor the name label of a
        // generated name).
        name_label(&mut obj, &name);
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
        obj["status"] = json!({ "phase": "Active" });
    }
    if pod_create::is_pod(rt) {
        pod_create::prepare(&mut obj, requested_qos, &now);
    }
    if opts.dry_run {
        return Ok(Written {
            object: obj,
            warnings,
        });
    }
    let stored = state.put(&storage, try_to_storage(rt, obj)?);
    after_write(state, rt, &stored);
    let key = key_of(&stored);
    let object = try_from_storage(rt, &state.get(&storage, &key).unwrap_or(stored))?;
    play_workload_controller(state, rt, &key);
    Ok(Written { object, warnings })
}

/// The system fields of an update's metadata come from the stored object (`managedFields` too when the
/// update sends none).
fn keep_system_metadata(new: &mut Value, old: &Value) {
    let old_meta = meta(old).clone();
    let m = meta_mut(new);
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
}

/// Every namespace carries its name as the label `kubernetes.io/metadata.name`, set again on every write.
fn name_label(obj: &mut Value, name: &str) {
    let labels = &mut meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert("kubernetes.io/metadata.name".into(), json!(name));
    }
}

pub(super) fn type_defaults_on_create(rt: &ResourceType, obj: &mut Value) {
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
    let old = try_from_storage(rt, &old_stored)?;
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
        Part::Status if rt.custom_resource_definition() => {
            // Its status strategy resets the metadata from the new object itself, so what a client sends
            // to a CRD's `/status` stays, but for the system fields.
            let spec = old["spec"].clone();
            keep_system_metadata(&mut new, &old);
            new["spec"] = spec;
        }
        // A namespace's status strategy keeps only its spec: metadata written through `/status` is kept.
        Part::Status if !rt.is_namespace() => {
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
        Part::Main | Part::Scale | Part::Finalize | Part::Status => {
            keep_system_metadata(&mut new, &old);
            if opts.part == Part::Status {
                match old.get("spec") {
                    Some(s) => new["spec"] = s.clone(),
                    None => {
                        if let Some(m) = new.as_object_mut() {
                            m.remove("spec");
                        }
                    }
                }
            } else if rt.status_subresource {
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
    if rt.group.is_empty() && rt.plural == "namespaces" {
        name_label(&mut new, &key.name);
    }
    if opts.part == Part::Main {
        validation::prepare_update(rt, &mut new, &old);
    }
    let warnings = check_content(rt, &mut new, Some(&old), opts, &key.name)?;
    if rt.custom_resource_definition() {
        if opts.part == Part::Status {
            crd::status::defaults(&mut new);
            let causes = crd::status::causes(&new);
            if !causes.is_empty() {
                return Err(ApiError::invalid(&rt.kind, &rt.group, &key.name, causes));
            }
        } else {
            crd::status::defaults(&mut new);
            crd::status::prepare(&mut new, Some(&old));
            crd::validate(&new, &key.name)?;
        }
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
    if opts.part == Part::Main {
        validation::keep_namespace_finalizers(rt, &mut new, &old);
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
    let stored = state.put(&storage, try_to_storage(rt, new)?);
    after_write(state, rt, &stored);
    let object = try_from_storage(rt, &state.get(&storage, key).unwrap_or(stored))?;
    play_workload_controller(state, rt, key);
    Ok(Written { object, warnings })
}

/// The workload controller's writes after a write to `key` (see [`workloads`]): changes of their own, made after
/// the answer to the write that caused them was taken. A Job's controller may write twice in a row (started,
/// then finished when its run time is zero, or resumed, then finished); a running Job is remembered by its due
/// time, for [`finish_due_jobs`].
fn play_workload_controller(state: &mut State, rt: &ResourceType, key: &ObjKey) {
    if !state.workload_status || !workloads::plays(rt) {
        return;
    }
    let Ok(now) = state.now.parse::<Timestamp>() else {
        return;
    };
    // Each write moves a Job towards its end (started, finished); three bound the loop.
    for _ in 0..3 {
        let Some(current) = state.get(&rt.storage, key).map(|o| from_storage(rt, &o)) else {
            return;
        };
        let Some(mut next) = workloads::reported(rt, &current, &state.jobs.settings, now) else {
            break;
        };
        // Recorded as kube-controller-manager's update, as on a real cluster.
        let stamp = state.now.clone();
        managed_fields::update(
            Some(&current),
            &mut next,
            workloads::MANAGER,
            &rt.api_version(),
            workloads::scope(rt),
            field_schema(rt).as_ref(),
            &stamp,
        );
        state.put(&rt.storage, to_storage(rt, next));
    }
    if workloads::is_job(rt)
        && let Some(job) = state.get(&rt.storage, key).map(|o| from_storage(rt, &o))
        && job["metadata"].get("deletionTimestamp").is_none()
        && let Some(at) = workloads::job::finishes_at(&job, &state.jobs.settings)
    {
        state.jobs.timers.insert(at, key.clone());
    }
}

/// Finishes the Jobs whose run time is over at `state.now`, each in a write of its own (see
/// [`workloads::job`]).
pub(crate) fn finish_due_jobs(state: &mut State) {
    let Ok(now) = state.now.parse::<Timestamp>() else {
        return;
    };
    let due = state.jobs.timers.take_due(now);
    if due.is_empty() {
        return;
    }
    let Some(rt) = state.registry.get("batch", "v1", "jobs") else {
        return;
    };
    for key in due {
        play_workload_controller(state, &rt, &key);
    }
}

/// Whether an update removes the last finalizer of an object being deleted (namespaces wait for their
/// `spec.finalizers` too).
pub(super) fn deletes_during_update(storage: &StorageKey, new: &Value) -> bool {
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    is_deleting(new) && finalizers(new).is_empty() && !is_namespace
}

pub(super) fn go_string_slice(items: &[String]) -> String {
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
pub(super) fn after_write(state: &mut State, rt: &ResourceType, stored: &Arc<Value>) {
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
