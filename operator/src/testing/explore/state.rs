//! The settled state of a run: every object of the kinds the operator and the scenario touch, with what
//! differs from run to run (uids, resourceVersions, times, generated names, allocated IPs) replaced by what
//! it stands for (a uid or a generated name wherever it appears: in an object reference of a status, say), so
//! two runs that end the same compare equal.

use std::collections::HashMap;
use std::sync::Arc;

use kube::Client;
use kube::api::{ApiResource, ListParams};
use serde_json::Value;

use super::run::api;
use crate::cache::OWNER_LABEL;
use crate::testing::table::HarnessError;

/// A function that replaces what differs between runs in an author's objects (e.g. a random password).
pub(super) type Normalizer = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// Condition and status fields that hold times.
const TIMES: [&str; 5] = [
    "lastTransitionTime",
    "lastUpdateTime",
    "lastHeartbeatTime",
    "lastProbeTime",
    "lastScaleTime",
];

/// Every object of `kinds` on the server, normalized, in a stable order.
pub(super) async fn snapshot(
    client: &Client,
    kinds: &[ApiResource],
    normalizers: &[Normalizer],
) -> Result<Vec<Value>, HarnessError> {
    let mut objects = Vec::new();
    for resource in kinds {
        let list = api(client, resource, None)
            .list(&ListParams::default())
            .await
            .map_err(|source| HarnessError::Kube {
                context: format!("listing {}", resource.kind),
                source,
            })?;
        for o in list.items {
            let mut value = serde_json::to_value(o)?;
            value["apiVersion"] = Value::String(resource.api_version.clone());
            value["kind"] = Value::String(resource.kind.clone());
            objects.push(value);
        }
    }
    let owners: HashMap<String, String> = objects
        .iter()
        .filter_map(|o| {
            let uid = o["metadata"]["uid"].as_str()?;
            Some((uid.to_string(), identity(o)))
        })
        .collect();
    // A generated name stands for the object wherever it appears (a status naming its child, say), and so does
    // a uid (a status referencing its child by an object reference, say).
    let generated: HashMap<String, String> = objects
        .iter()
        .filter_map(|o| {
            let prefix = o["metadata"]["generateName"].as_str()?;
            let name = o["metadata"]["name"].as_str()?;
            Some((name.to_string(), format!("{prefix}<generated>")))
        })
        .collect();
    let uids = owners
        .iter()
        .map(|(uid, o)| (uid.clone(), format!("<uid of {o}>")));
    let stands_for: HashMap<String, String> = generated.into_iter().chain(uids).collect();
    for o in &mut objects {
        normalize(o, &owners);
        replace_strings(o, &stands_for);
        for n in normalizers {
            n(o);
        }
    }
    objects.sort_by_key(identity);
    Ok(objects)
}

/// `apiVersion Kind namespace/name`.
pub(super) fn identity(o: &Value) -> String {
    let meta = &o["metadata"];
    identity_of(
        o["apiVersion"].as_str().unwrap_or(""),
        o["kind"].as_str().unwrap_or(""),
        meta["namespace"].as_str(),
        meta["name"].as_str().unwrap_or(""),
    )
}

/// `apiVersion Kind namespace/name`, from its parts.
pub(super) fn identity_of(
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> String {
    match namespace {
        Some(ns) => format!("{api_version} {kind} {ns}/{name}"),
        None => format!("{api_version} {kind} {name}"),
    }
}

/// Replaces every string value equal to a key of `names` by its value.
fn replace_strings(v: &mut Value, names: &HashMap<String, String>) {
    match v {
        Value::String(text) => {
            if let Some(to) = names.get(text.as_str()) {
                *text = to.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| replace_strings(i, names)),
        Value::Object(map) => map.values_mut().for_each(|i| replace_strings(i, names)),
        _ => {}
    }
}

/// Replaces what differs between runs in one object (`owners`: the identity of each uid the state holds).
pub(super) fn normalize(o: &mut Value, owners: &HashMap<String, String>) {
    let generation = o["metadata"]["generation"].as_i64();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "selfLink",
            "generation",
        ] {
            meta.remove(field);
        }
        if let Some(prefix) = meta.get("generateName").and_then(Value::as_str) {
            let generated = format!("{prefix}<generated>");
            meta.insert("name".into(), Value::String(generated));
        }
        if meta.contains_key("deletionTimestamp") {
            meta.insert("deletionTimestamp".into(), Value::String("<set>".into()));
        }
        if let Some(refs) = meta
            .get_mut("ownerReferences")
            .and_then(Value::as_array_mut)
        {
            for r in refs.iter_mut().filter_map(Value::as_object_mut) {
                r.remove("uid");
            }
        }
        // Which member owns a sharded parent and its children (set by a take-over) says nothing of the state.
        if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
            labels.remove(crate::sharding::SHARD_LABEL);
            if labels.is_empty() {
                meta.remove("labels");
            }
        }
        if let Some(owner) = meta.get_mut("labels").and_then(|l| l.get_mut(OWNER_LABEL))
            && let Some(uid) = owner.as_str()
        {
            let named = owners
                .get(uid)
                .map(|o| format!("<uid of {o}>"))
                .unwrap_or_else(|| "<uid of an object gone>".into());
            *owner = Value::String(named);
        }
    }
    if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut)
        && spec.contains_key("clusterIP")
        && spec["clusterIP"] != "None"
    {
        spec.insert("clusterIP".into(), Value::String("<allocated>".into()));
        spec.remove("clusterIPs");
    }
    if let Some(status) = o.get_mut("status") {
        relate_generation(status, generation);
        if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
            // A list map keyed by type: its order says nothing (it follows the history of the writes).
            conditions.sort_by(|a, b| a["type"].as_str().cmp(&b["type"].as_str()));
            for c in conditions.iter_mut() {
                relate_generation(c, generation);
                if let Some(c) = c.as_object_mut() {
                    for t in TIMES {
                        c.remove(t);
                    }
                }
            }
        }
    }
}

/// An `observedGeneration` says whether it is the object's generation, not which number that is.
fn relate_generation(v: &mut Value, generation: Option<i64>) {
    if let Some(observed) = v.get_mut("observedGeneration") {
        let said = match (observed.as_i64(), generation) {
            (Some(o), Some(g)) if o == g => "<current>",
            (Some(o), Some(g)) if o < g => "<behind>",
            _ => "<other>",
        };
        *observed = Value::String(said.into());
    }
}

/// The objects as YAML documents, one after the other.
pub(super) fn yaml(objects: &[Value]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("--- # ");
        out.push_str(&identity(o));
        out.push('\n');
        out.push_str(&serde_saphyr::to_string(o).unwrap_or_else(|e| format!("# {e}\n")));
    }
    out
}

/// A unified diff from `reference` to `got`, as YAML.
pub(super) fn diff(reference: &[Value], got: &[Value]) -> String {
    let (a, b) = (yaml(reference), yaml(got));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(4)
        .header("reference", "perturbed")
        .to_string()
}

/// Objects that still carry a `deletionTimestamp`: a finalizer that was never removed.
pub(super) fn dangling(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .filter(|o| !o["metadata"]["deletionTimestamp"].is_null())
        .map(|o| {
            format!(
                "{} is being deleted and stays, held by finalizers {}",
                identity(o),
                o["metadata"]["finalizers"]
            )
        })
        .collect()
}
