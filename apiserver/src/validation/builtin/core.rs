//! The core group's rules (`pkg/apis/core/validation`): ConfigMaps and Secrets (keys, size, `immutable`, a
//! Secret's type), PersistentVolumeClaims (the spec is immutable), and the pod spec every workload embeds
//! (container names, images, resources, restart policy).

use base64::Engine;
use serde_json::Value;

use super::container::{self, Probe};
use super::field::{Errors, FieldError, child, index, key};
use super::{formats, meta, security, volumes};

/// `core.MaxSecretSize`: 1 MiB of data.
const MAX_SECRET_SIZE: usize = 1024 * 1024;
const IMMUTABLE_SET: &str = "field is immutable when `immutable` is set";

fn decoded_len(v: &Value) -> usize {
    let text = v.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_or(text.len(), |b| b.len())
}

/// `ValidateNamespace`: the metadata, and each of `spec.finalizers` a qualified name (`IsQualifiedName`, which
/// in 1.35 is `content.IsLabelKey` and says "label key"), fully qualified unless
/// it is one of the standard ones (the errors name the list, not the item).
pub(super) fn namespace(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    for f in obj["spec"]["finalizers"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
    {
        let name = f.as_str().unwrap_or("");
        for msg in formats::label_key(name) {
            errs.push(FieldError::invalid("spec.finalizers", name, msg));
        }
        if !name.contains('/') && !["kubernetes", "orphan", "foregroundDeletion"].contains(&name) {
            errs.push(FieldError::invalid(
                "spec.finalizers",
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

/// `ValidateConfigMap`.
pub(super) fn config_map(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    let mut size = 0;
    let binary = obj["binaryData"].as_object();
    if let Some(data) = obj["data"].as_object() {
        for (k, v) in data {
            for msg in formats::config_key(k) {
                errs.push(FieldError::invalid(key("data", k), k, msg));
            }
            if binary.is_some_and(|b| b.contains_key(k)) {
                errs.push(FieldError::invalid(
                    key("data", k),
                    k,
                    "duplicate of key present in binaryData",
                ));
            }
            size += v.as_str().map_or(0, str::len);
        }
    }
    if let Some(data) = binary {
        for (k, v) in data {
            for msg in formats::config_key(k) {
                errs.push(FieldError::invalid(key("binaryData", k), k, msg));
            }
            size += decoded_len(v);
        }
    }
    if size > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long("", MAX_SECRET_SIZE));
    }
    errs
}

/// Whether `immutable: true` was set.
fn immutable(obj: &Value) -> bool {
    obj["immutable"].as_bool() == Some(true)
}

/// An empty map and an absent one are the same to Go's `reflect.DeepEqual` only when both are absent; the
/// typed round trip leaves empty maps out, so absent and `{}` compare equal here as they do once decoded.
fn map_of(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.is_empty() => Value::Null,
        other => other.clone(),
    }
}

/// `ValidateConfigMapUpdate`.
pub(super) fn config_map_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    if immutable(old) {
        if !immutable(obj) {
            errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
        }
        for field in ["data", "binaryData"] {
            if map_of(&obj[field]) != map_of(&old[field]) {
                errs.push(FieldError::forbidden(field, IMMUTABLE_SET));
            }
        }
    }
    errs.extend(config_map(obj));
    errs
}

/// `ValidateSecret`.
pub(super) fn secret(obj: &Value) -> Errors {
    let mut errs = meta::object(obj);
    let data = obj["data"].as_object();
    let mut size = 0;
    if let Some(data) = data {
        for (k, v) in data {
            for msg in formats::config_key(k) {
                errs.push(FieldError::invalid(key("data", k), k, msg));
            }
            size += decoded_len(v);
        }
    }
    if size > MAX_SECRET_SIZE {
        errs.push(FieldError::too_long("data", MAX_SECRET_SIZE));
    }
    let has = |k: &str| data.is_some_and(|d| d.contains_key(k));
    let required = |k: &str| FieldError::required(key("data", k), "");
    match obj["type"].as_str().unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = obj["metadata"]["annotations"]["kubernetes.io/service-account.name"]
                .as_str()
                .unwrap_or("");
            if name.is_empty() {
                errs.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" if !has(".dockercfg") => errs.push(required(".dockercfg")),
        "kubernetes.io/dockerconfigjson" if !has(".dockerconfigjson") => {
            errs.push(required(".dockerconfigjson"));
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errs.push(required("username"));
            errs.push(required("password"));
        }
        "kubernetes.io/ssh-auth"
            if data
                .and_then(|d| d.get("ssh-privatekey"))
                .is_none_or(|v| decoded_len(v) == 0) =>
        {
            errs.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            if !has("tls.crt") {
                errs.push(required("tls.crt"));
            }
            if !has("tls.key") {
                errs.push(required("tls.key"));
            }
        }
        _ => {}
    }
    errs
}

/// `ValidateSecretUpdate`.
pub(super) fn secret_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    if obj["type"] != old["type"] {
        errs.push(FieldError::invalid_value(
            "type",
            &obj["type"],
            "field is immutable",
        ));
    }
    if immutable(old) {
        if !immutable(obj) {
            errs.push(FieldError::forbidden("immutable", IMMUTABLE_SET));
        }
        if map_of(&obj["data"]) != map_of(&old["data"]) {
            errs.push(FieldError::forbidden("data", IMMUTABLE_SET));
        }
    }
    errs.extend(secret(obj));
    errs
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec is immutable but for `resources.requests` and
/// `volumeAttributesClassName` of a bound claim, a `volumeName` set for the first time and a storage class set
/// where there was none. (kube-apiserver's message ends with a diff of the two specs; this one does not.)
pub(super) fn persistent_volume_claim_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    errs.extend(meta::object(obj));
    let mut new_spec = obj["spec"].clone();
    let mut old_spec = old["spec"].clone();
    if old_spec["volumeName"].as_str().unwrap_or("").is_empty() {
        old_spec["volumeName"] = new_spec["volumeName"].clone();
    }
    let beta_annotation = "volume.beta.kubernetes.io/storage-class";
    if old_spec.get("storageClassName").is_none_or(Value::is_null)
        && old["metadata"]["annotations"]
            .get(beta_annotation)
            .is_none()
    {
        old_spec["storageClassName"] = new_spec["storageClassName"].clone();
    }
    if obj["status"]["phase"] == "Bound" {
        if new_spec["resources"]["requests"].is_object() {
            new_spec["resources"]["requests"]["storage"] =
                old_spec["resources"]["requests"]["storage"].clone();
        }
        new_spec["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"].clone();
    }
    if strip_nulls(new_spec) != strip_nulls(old_spec) {
        errs.push(FieldError::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    errs
}

/// A value with its `null` members dropped, for comparisons where absent and `null` are the same.
pub(super) fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// `ValidatePodTemplateSpec` of the template at `path` (`spec.template`).
pub(super) fn pod_template(template: &Value, path: &str) -> Errors {
    // ValidatePodTemplateSpec names the template's labels `spec.template.labels`, without `metadata`.
    let mut errs = meta::labels_and_annotations(&template["metadata"], path);
    errs.extend(pod_spec(&template["spec"], &child(path, "spec")));
    errs
}

/// `ValidatePodSpec`, the rules of it this server has: volumes, containers (names, images, ports, environment,
/// volume mounts, resources, duplicates, probes), init containers (the same but probes), and the restart
/// policy.
pub(super) fn pod_spec(spec: &Value, path: &str) -> Errors {
    let (volumes, mut errs) = volumes::volumes(&spec["volumes"], &child(path, "volumes"));
    let host_users = spec["securityContext"]["hostUsers"] != false;
    let containers = spec["containers"].as_array().map_or(&[][..], Vec::as_slice);
    let containers_path = child(path, "containers");
    if containers.is_empty() {
        errs.push(FieldError::required(&containers_path, ""));
    } else {
        let mut names: Vec<&str> = Vec::new();
        for (i, c) in containers.iter().enumerate() {
            let at = index(&containers_path, i);
            errs.extend(container(c, &volumes, host_users, &at));
            let name = c["name"].as_str().unwrap_or("");
            if names.contains(&name) {
                errs.push(FieldError::duplicate(child(&at, "name"), name));
            } else {
                names.push(name);
            }
            for (field, kind) in [
                ("livenessProbe", Probe::Liveness),
                ("readinessProbe", Probe::Readiness),
                ("startupProbe", Probe::Startup),
            ] {
                errs.extend(container::probe(&c[field], kind, &child(&at, field)));
            }
        }
    }
    if let Some(init) = spec["initContainers"].as_array() {
        let mut names: Vec<&str> = containers
            .iter()
            .map(|c| c["name"].as_str().unwrap_or(""))
            .collect();
        let init_path = child(path, "initContainers");
        for (i, c) in init.iter().enumerate() {
            let at = index(&init_path, i);
            errs.extend(container(c, &volumes, host_users, &at));
            let name = c["name"].as_str().unwrap_or("");
            if names.contains(&name) {
                errs.push(FieldError::duplicate(child(&at, "name"), name));
            } else if !name.is_empty() {
                names.push(name);
            }
        }
    }
    let policy = spec["restartPolicy"].as_str().unwrap_or("");
    let policy_path = child(path, "restartPolicy");
    match policy {
        "Always" | "OnFailure" | "Never" => {}
        "" => errs.push(FieldError::required(policy_path, "")),
        other => errs.push(FieldError::not_supported(
            policy_path,
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    errs.extend(security::pod(spec, &child(path, "securityContext")));
    errs
}

/// `validateContainerCommon`: the name, the image, the ports, the environment, the volume mounts (naming
/// `volumes`, the pod's valid volumes) and the resources of one container.
fn container(c: &Value, volumes: &[String], host_users: bool, path: &str) -> Errors {
    let mut errs = Errors::new();
    let name = c["name"].as_str().unwrap_or("");
    let name_path = child(path, "name");
    if name.is_empty() {
        errs.push(FieldError::required(&name_path, ""));
    } else {
        for msg in formats::dns1123_label(name) {
            errs.push(FieldError::invalid(&name_path, name, msg));
        }
    }
    if c["image"].as_str().unwrap_or("").is_empty() {
        errs.push(FieldError::required(child(path, "image"), ""));
    }
    errs.extend(container::ports(&c["ports"], &child(path, "ports")));
    errs.extend(container::env(&c["env"], &child(path, "env")));
    errs.extend(container::volume_mounts(
        &c["volumeMounts"],
        volumes,
        &child(path, "volumeMounts"),
    ));
    errs.extend(resources(&c["resources"], &child(path, "resources")));
    errs.extend(security::container(
        &c["securityContext"],
        &child(path, "securityContext"),
        host_users,
    ));
    errs
}

/// Whether a resource may be requested below its limit (`IsOvercommitAllowed`): a native resource that is not
/// huge pages.
fn overcommit_allowed(name: &str) -> bool {
    (!name.contains('/') || name.contains("kubernetes.io/")) && !name.starts_with("hugepages-")
}

/// `validateResourceRequirements`: each request at most its limit (equal to it for resources that cannot be
/// overcommitted, which must have a limit).
fn resources(r: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let limits = r["limits"].as_object();
    let req_path = child(path, "requests");
    let Some(requests) = r["requests"].as_object() else {
        return errs;
    };
    for (name, q) in requests {
        let q = q.as_str().unwrap_or("");
        match limits.and_then(|l| l.get(name)).and_then(Value::as_str) {
            Some(limit) => {
                let order = crate::quantity::compare(q, limit);
                if !overcommit_allowed(name) && order != Some(std::cmp::Ordering::Equal) {
                    errs.push(FieldError::invalid(
                        &req_path,
                        q,
                        format!("must be equal to {name} limit of {limit}"),
                    ));
                } else if order == Some(std::cmp::Ordering::Greater) {
                    errs.push(FieldError::invalid(
                        &req_path,
                        q,
                        format!("must be less than or equal to {name} limit of {limit}"),
                    ));
                }
            }
            None if !overcommit_allowed(name) => errs.push(FieldError::required(
                child(path, "limits"),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    errs
}

/// `ValidatePodUpdate`: a Pod's spec is immutable but for its containers' images, `activeDeadlineSeconds`
/// (lowered only), added tolerations and removed scheduling gates. (kube-apiserver's message ends with a diff
/// of the two specs; this one does not, and the node selector and affinity of a gated Pod are not let
/// through.)
pub(super) fn pod_update(obj: &Value, old: &Value) -> Errors {
    let mut errs = meta::object_update(obj);
    errs.extend(meta::object(obj));
    errs.extend(pod_spec(&obj["spec"], "spec"));
    let (spec, old_spec) = (&obj["spec"], &old["spec"]);
    for list in ["containers", "initContainers"] {
        let new_list = spec[list].as_array().map_or(&[][..], Vec::as_slice);
        let old_list = old_spec[list].as_array().map_or(&[][..], Vec::as_slice);
        let path = child("spec", list);
        if new_list.len() != old_list.len() {
            errs.push(FieldError::forbidden(
                path,
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
        for (i, c) in new_list.iter().enumerate() {
            let image = c["image"].as_str().unwrap_or("");
            if image.is_empty() {
                errs.push(FieldError::required(child(&index(&path, i), "image"), ""));
            }
            if image.trim() != image {
                errs.push(FieldError::invalid(
                    child(&index(&path, i), "image"),
                    image,
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    let deadline_path = "spec.activeDeadlineSeconds";
    match (
        spec["activeDeadlineSeconds"].as_i64(),
        old_spec["activeDeadlineSeconds"].as_i64(),
    ) {
        (Some(new), _) if !(0..=i64::from(i32::MAX)).contains(&new) => {
            errs.push(FieldError::invalid_value(
                deadline_path,
                &spec["activeDeadlineSeconds"],
                format!("must be between 0 and {}, inclusive", i32::MAX),
            ));
            return errs;
        }
        (Some(new), Some(before)) if before < new => {
            errs.push(FieldError::invalid_value(
                deadline_path,
                &spec["activeDeadlineSeconds"],
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (None, Some(_)) => errs.push(FieldError::invalid_printed(
            deadline_path,
            "null".into(),
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    let mut munged = spec.clone();
    for list in ["containers", "initContainers"] {
        if let Some(cs) = munged[list].as_array_mut() {
            for (i, c) in cs.iter_mut().enumerate() {
                c["image"] = old_spec[list][i]["image"].clone();
            }
        }
    }
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        munged[field] = old_spec[field].clone();
    }
    if strip_nulls(munged) != strip_nulls(old_spec.clone()) {
        errs.push(FieldError::forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
        ));
    }
    errs
}
