//! The built-in workload controllers' status, played by the server: Deployments, StatefulSets, ReplicaSets
//! and DaemonSets become ready once observed, Jobs run for a set time and then complete (or fail when told to,
//! see [`job`]); and the ClusterIP (and IP family) a new Service gets. No other kind is played: no Pods
//! are created, CronJobs create no Jobs, and every other kind keeps the status clients write.
//!
//! A real cluster's kube-controller-manager writes the status after the object changes; here the write follows
//! the one that caused it inside the same request, as a separate change (its own `resourceVersion`, watch
//! event and managedFields entry of `kube-controller-manager`), so a client sees the object first as written
//! and then as reported. A Job's end is such a write too, made when the server's clock reaches its due time.
//! A Service's ClusterIP is allocated by kube-apiserver itself, in the create. Every pod is taken to start at
//! once and be ready: enough for an operator to reach `Ready` on a laptop, not a scheduler. Switched by
//! [`ApiServerBuilder::workload_status`](crate::ApiServerBuilder::workload_status) (on by default).

pub(crate) mod job;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::managed_fields::Scope;
use crate::registry::ResourceType;

/// The field manager of the controllers' writes.
pub(crate) const MANAGER: &str = "kube-controller-manager";

/// What the controller's write changes: the status.
pub(crate) fn scope(_rt: &ResourceType) -> Scope {
    Scope::Status
}

/// Which kinds get a status: `(group, plural)`.
const WORKLOADS: [(&str, &str); 5] = [
    ("apps", "deployments"),
    ("apps", "statefulsets"),
    ("apps", "replicasets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
];

/// Whether `rt` is the Jobs resource.
pub(crate) fn is_job(rt: &ResourceType) -> bool {
    rt.group == "batch" && rt.plural == "jobs"
}

/// Whether the server plays a controller for objects of `rt`.
pub(crate) fn plays(rt: &ResourceType) -> bool {
    WORKLOADS
        .iter()
        .any(|(g, p)| rt.group == *g && rt.plural == *p)
}

/// The object as its controller would next write it at `now`, or `None` when it has nothing to write (already
/// observed, or being deleted).
pub(crate) fn reported(
    rt: &ResourceType,
    obj: &Value,
    jobs: &job::Settings,
    now: Timestamp,
) -> Option<Value> {
    if obj["metadata"].get("deletionTimestamp").is_some() {
        return None;
    }
    let status = if is_job(rt) {
        job::next_status(obj, jobs, now)?
    } else {
        workload_status(&rt.group, &rt.plural, obj)?
    };
    let mut next = obj.clone();
    next["status"] = status;
    Some(next)
}

/// The status the built-in controller of a workload (`apps` `deployments`, `statefulsets`, `replicasets`,
/// `daemonsets`) would write next for `obj` as this server plays it, or `None` when it has already observed
/// the object's generation. Public so that tests on a bare kube-apiserver can play the same controllers.
///
/// ```
/// # use serde_json::json;
/// let d = json!({"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 2}});
/// let status = kubewright_apiserver::workload_status("apps", "deployments", &d).unwrap();
/// assert_eq!(status["availableReplicas"], 2);
/// ```
pub fn workload_status(group: &str, plural: &str, obj: &Value) -> Option<Value> {
    if group != "apps" {
        return None;
    }
    let generation = obj["metadata"]["generation"].as_i64()?;
    if obj["status"]["observedGeneration"].as_i64() == Some(generation) {
        return None;
    }
    let replicas = obj["spec"]["replicas"].as_i64().unwrap_or(1).max(0);
    // Go's omitempty: counts of zero are left out.
    let count = |n: i64| (n > 0).then(|| json!(n));
    let status = match plural {
        "deployments" => {
            let mut s = json!({
                "observedGeneration": generation,
                "conditions": [
                    condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                    condition("Progressing", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed."),
                ],
            });
            for f in [
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
            ] {
                if let Some(v) = count(replicas) {
                    s[f] = v;
                }
            }
            s
        }
        "statefulsets" => {
            let revision = format!("{}-simulated", obj["metadata"]["name"].as_str()?);
            let mut s = json!({
                "observedGeneration": generation,
                "replicas": replicas,
                "currentRevision": revision,
                "updateRevision": revision,
                "collisionCount": 0,
            });
            for f in [
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ] {
                if let Some(v) = count(replicas) {
                    s[f] = v;
                }
            }
            s
        }
        "replicasets" => {
            let mut s = json!({ "observedGeneration": generation, "replicas": replicas });
            for f in ["fullyLabeledReplicas", "readyReplicas", "availableReplicas"] {
                if let Some(v) = count(replicas) {
                    s[f] = v;
                }
            }
            s
        }
        "daemonsets" => json!({
            // One node.
            "observedGeneration": generation,
            "currentNumberScheduled": 1,
            "desiredNumberScheduled": 1,
            "numberMisscheduled": 0,
            "numberReady": 1,
            "numberAvailable": 1,
            "updatedNumberScheduled": 1,
        }),
        _ => return None,
    };
    Some(status)
}

/// Allocates a ClusterIP to a Service being created without one (headless Services, `clusterIP: None`, and
/// `ExternalName` ones keep theirs).
pub(crate) fn allocate_cluster_ip(obj: &mut Value) {
    let spec = &obj["spec"];
    if spec["type"].as_str() == Some("ExternalName") {
        return;
    }
    if let Some(ip) = spec["clusterIP"].as_str().filter(|ip| !ip.is_empty()) {
        // A cluster IP asked for (or `None`) is the first of `clusterIPs`, as kube-apiserver normalizes it.
        if spec["clusterIPs"]
            .as_array()
            .is_none_or(|ips| ips.is_empty())
        {
            obj["spec"]["clusterIPs"] = json!([ip]);
        }
        return;
    }
    // A family other than IPv4 is refused by validation (this cluster serves IPv4 only): nothing to allocate.
    if spec["ipFamilies"]
        .as_array()
        .and_then(|f| f.first())
        .is_some_and(|f| f != "IPv4")
    {
        return;
    }
    let meta = &obj["metadata"];
    let id = format!(
        "{}/{}",
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default()
    );
    // From the namespace and name, so runs are reproducible; in 10.0.0.0/16, the range the envtest control
    // plane serves (room for tens of thousands of Services; addresses may repeat: nothing routes to them here).
    let host = id
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 65532
        + 2;
    let ip = format!("10.0.{}.{}", host >> 8, host & 0xff);
    obj["spec"]["clusterIP"] = json!(ip);
    obj["spec"]["clusterIPs"] = json!([ip]);
    // A single-stack IPv4 cluster, as the envtest control plane is.
    if let Some(spec) = obj["spec"].as_object_mut() {
        spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
        spec.entry("ipFamilies").or_insert(json!(["IPv4"]));
    }
}

fn condition(type_: &str, reason: &str, message: &str) -> Value {
    json!({ "type": type_, "status": "True", "reason": reason, "message": message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployments() -> ResourceType {
        crate::registry::Registry::with_builtins()
            .get("apps", "v1", "deployments")
            .map(|rt| (*rt).clone())
            .expect("deployments are built in")
    }

    #[test]
    fn a_deployment_is_reported_ready_once_per_generation() {
        let rt = deployments();
        let d = json!({"metadata": {"name": "d", "generation": 2}, "spec": {"replicas": 3}});
        let (jobs, now) = (job::Settings::default(), Timestamp::UNIX_EPOCH);
        let next = reported(&rt, &d, &jobs, now).expect("a status to write");
        assert_eq!(next["status"]["observedGeneration"], 2);
        assert_eq!(next["status"]["availableReplicas"], 3);
        assert_eq!(next["status"]["updatedReplicas"], 3);
        assert!(
            reported(&rt, &next, &jobs, now).is_none(),
            "observed: nothing more"
        );
        let zero = json!({"metadata": {"name": "d", "generation": 1}, "spec": {"replicas": 0}});
        let next = reported(&rt, &zero, &jobs, now).expect("a status");
        assert!(next["status"].get("availableReplicas").is_none());
    }
}
