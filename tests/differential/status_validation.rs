//! Writes to the `status` of built-in kinds, validated as kube-apiserver validates them:
//! - the `apps` workloads: a valid status, negative counts, counts above `status.replicas` and
//!   `availableReplicas` above `readyReplicas` (every cause in one 422), a decremented `collisionCount`, and a
//!   spec sent through `/status` (ignored), on Deployments, ReplicaSets, StatefulSets and DaemonSets;
//! - Jobs (`job_statuses`): the Job controller's statuses and the transitions and combinations refused;
//! - Services, Ingresses, PodDisruptionBudgets, HorizontalPodAutoscalers, Pods and CronJobs
//!   (`other_statuses`), and the status a new Pod gets.

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{CONDITION_WITHOUT_TRANSITION_TIME, EMPTY_BUILTIN_STATUS};
use crate::support::{MERGE, Transcript, run};

fn workload(kind: &str, name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
}

/// Keeps of a successful answer only what the status rules decide: its status and the spec field sent
/// through `/status` (the defaults and managedFields of these kinds are compared elsewhere, with their own
/// deviations); a refusal is compared whole.
fn keep_status(t: &mut Transcript) {
    if let Some(answer) = t.last_answer_mut()
        && answer["kind"] != "Status"
    {
        *answer = json!({
            "status": answer["status"],
            "minReadySeconds": answer["spec"]["minReadySeconds"],
        });
    }
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let counts = json!({"replicas": 2, "readyReplicas": 2, "availableReplicas": 1});
    let bad = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "updatedReplicas": -1,
        "observedGeneration": -1, "fullyLabeledReplicas": 4, "currentReplicas": -2});
    let daemon_counts = json!({"currentNumberScheduled": 1, "numberMisscheduled": 0,
        "desiredNumberScheduled": 1, "numberReady": 1});
    let daemon_bad = json!({"currentNumberScheduled": -1, "numberMisscheduled": -1,
        "desiredNumberScheduled": -1, "numberReady": -1, "numberAvailable": -3, "observedGeneration": -1});
    for (kind, plural, good, wrong) in [
        ("Deployment", "deployments", &counts, &bad),
        ("ReplicaSet", "replicasets", &counts, &bad),
        ("StatefulSet", "statefulsets", &counts, &bad),
        ("DaemonSet", "daemonsets", &daemon_counts, &daemon_bad),
    ] {
        let collection = format!("/apis/apps/v1/namespaces/{ns}/{plural}");
        let status = format!("{collection}/w/status");
        t.post(
            &format!("{kind}: create"),
            &collection,
            &workload(kind, "w"),
        )
        .await;
        keep_status(&mut t);
        t.patch(
            &format!("{kind}: a valid status"),
            &status,
            MERGE,
            &json!({ "status": good }),
        )
        .await;
        keep_status(&mut t);
        t.patch(
            &format!("{kind}: invalid counts"),
            &status,
            MERGE,
            &json!({ "status": wrong }),
        )
        .await;
        keep_status(&mut t);
        if kind != "ReplicaSet" {
            t.patch(
                &format!("{kind}: a collision count"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": 2}}),
            )
            .await;
            keep_status(&mut t);
            t.patch(
                &format!("{kind}: a collision count decremented"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": 1}}),
            )
            .await;
            keep_status(&mut t);
            t.patch(
                &format!("{kind}: a collision count removed"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": null}}),
            )
            .await;
            keep_status(&mut t);
        }
        t.patch(
            &format!("{kind}: a spec through status"),
            &status,
            MERGE,
            &json!({"spec": {"minReadySeconds": 5}, "status": {"observedGeneration": 1}}),
        )
        .await;
        keep_status(&mut t);
    }
    t
}

#[tokio::test]
async fn workload_status_writes_are_validated_alike() {
    run(
        "workload_status_writes_are_validated_alike",
        &[EMPTY_BUILTIN_STATUS],
        scenario,
    )
    .await;
}

/// Removes empty objects and `null`s, so a status left out and an empty one compare equal (kube-apiserver
/// answers `status: {}` for a new built-in object, the in-memory server leaves it out).
fn prune(v: &mut Value) {
    if let Value::Object(m) = v {
        m.values_mut().for_each(prune);
        m.retain(|_, v| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()));
    } else if let Value::Array(items) = v {
        items.iter_mut().for_each(prune);
    }
}

/// Keeps of a successful answer only its status (pruned); a refusal is compared whole.
fn keep_only_status(t: &mut Transcript) {
    if let Some(answer) = t.last_answer_mut()
        && answer["kind"] != "Status"
    {
        let mut status = answer["status"].take();
        prune(&mut status);
        *answer = json!({ "status": status });
    }
}

/// Keeps of a successful create only the kind answered: the new object's status (zero counts on
/// kube-apiserver for some kinds) is not what these scenarios compare.
fn keep_kind(t: &mut Transcript) {
    if let Some(answer) = t.last_answer_mut()
        && answer["kind"] != "Status"
    {
        *answer = json!({ "kind": answer["kind"] });
    }
}

const T0: &str = "2026-01-01T00:00:00Z";
const T1: &str = "2026-01-01T00:00:10Z";

fn job(name: &str, spec: Value) -> Value {
    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox:1.36"}]}}}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        job["spec"][k] = v.clone();
    }
    job
}

/// Writes to Jobs' `status`: what the Job controller writes passes; contradictory conditions, finished Jobs
/// with active pods or no start time, counters and terminal conditions taken back, and index lists that do
/// not parse, overlap or belong to no index are refused, every cause in one 422.
async fn job_statuses(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    t.post("create a Job", &jobs, &job("j", json!({}))).await;
    keep_kind(&mut t);
    let status = format!("{jobs}/j/status");
    let complete = json!([{"type": "SuccessCriteriaMet", "status": "True"},
        {"type": "Complete", "status": "True"}]);
    let steps = [
        (
            "started",
            json!({"startTime": T0, "active": 1, "ready": 1, "terminating": 0}),
        ),
        ("more ready than active", json!({"ready": 2})),
        (
            "negative counts",
            json!({"failed": -1, "succeeded": -1, "terminating": -1}),
        ),
        (
            "completed indexes of a non-indexed Job",
            json!({"completedIndexes": "0"}),
        ),
        (
            "failed indexes without a per-index limit",
            json!({"failedIndexes": "0"}),
        ),
        (
            "Complete alone, with a pod active",
            json!({"conditions": [{"type": "Complete", "status": "True"}]}),
        ),
        (
            "Complete and Failed",
            json!({"active": 0, "completionTime": T1, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"},
                {"type": "Failed", "status": "True"}]}),
        ),
        (
            "completed before it started",
            json!({"active": 0, "ready": 0, "succeeded": 1, "completionTime": "2025-12-31T00:00:00Z",
                "conditions": complete}),
        ),
        (
            "complete",
            json!({"active": 0, "ready": 0, "succeeded": 1, "completionTime": T1, "conditions": complete}),
        ),
        (
            "a finished Job taken back",
            json!({"active": 1, "succeeded": 0, "completionTime": "2026-01-01T00:00:20Z",
                "startTime": null, "conditions": null}),
        ),
        ("an unrelated write to a finished Job", json!({"ready": 0})),
    ];
    for (label, body) in steps {
        t.patch(label, &status, MERGE, &json!({ "status": body }))
            .await;
        keep_only_status(&mut t);
    }
    // An Indexed Job with a per-index backoff limit: its index lists.
    let indexed = json!({"completionMode": "Indexed", "completions": 3, "parallelism": 3,
        "backoffLimitPerIndex": 1});
    t.post("create an Indexed Job", &jobs, &job("k", indexed))
        .await;
    keep_kind(&mut t);
    let status = format!("{jobs}/k/status");
    for (label, body) in [
        (
            "index lists",
            json!({"completedIndexes": "0-1", "failedIndexes": "2"}),
        ),
        ("an index out of range", json!({"completedIndexes": "0,3"})),
        ("indexes not increasing", json!({"completedIndexes": "1,0"})),
        (
            "an interval of three parts",
            json!({"failedIndexes": "0-1-2"}),
        ),
        ("overlapping indexes", json!({"failedIndexes": "1-2"})),
        (
            "a Failed Job without FailureTarget",
            json!({"startTime": T0,
            "conditions": [{"type": "Failed", "status": "True"}]}),
        ),
    ] {
        t.patch(label, &status, MERGE, &json!({ "status": body }))
            .await;
        keep_only_status(&mut t);
    }
    t
}

#[tokio::test]
async fn job_status_writes_are_validated_alike() {
    run("job_status_writes_are_validated_alike", &[], job_statuses).await;
}

/// Writes to the `status` of the other kinds with status rules: a Service's and an Ingress's load balancer,
/// a PodDisruptionBudget's conditions and counts, a HorizontalPodAutoscaler's replica counts, a Pod's
/// conditions, QoS class and IPs (and the status and defaults a new Pod gets), a PersistentVolumeClaim's
/// capacity and allocated resources, and a CronJob's (no rules).
async fn other_statuses(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let core = |plural: &str| format!("/api/v1/namespaces/{ns}/{plural}");
    let group = |gv: &str, plural: &str| format!("/apis/{gv}/namespaces/{ns}/{plural}");
    let services = core("services");
    for (name, type_) in [("cluster", "ClusterIP"), ("balanced", "LoadBalancer")] {
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": type_, "ports": [{"port": 80}], "selector": {"app": "x"}}});
        t.post(&format!("create a {type_} Service"), &services, &svc)
            .await;
        keep_kind(&mut t);
    }
    let ingress = |ip: &str, mode: Option<&str>, hostname: &str| {
        let mut e = json!({"ip": ip, "hostname": hostname});
        if let Some(mode) = mode {
            e["ipMode"] = json!(mode);
        }
        e
    };
    for (label, name, entries) in [
        (
            "a ClusterIP Service's load balancer",
            "cluster",
            json!([ingress("1.2.3.4", Some("VIP"), "")]),
        ),
        (
            "a valid load balancer",
            "balanced",
            json!([ingress("1.2.3.4", Some("VIP"), "lb.example.com")]),
        ),
        (
            "an invalid load balancer",
            "balanced",
            json!([
                ingress("1.2.3", None, "1.2.3.4"),
                ingress("", Some("VIP"), "x"),
                ingress("1.2.3.5", Some("Tunnel"), "Bad_Host")
            ]),
        ),
    ] {
        t.patch(
            label,
            &format!("{services}/{name}/status"),
            MERGE,
            &json!({"status": {"loadBalancer": {"ingress": entries}}}),
        )
        .await;
        keep_only_status(&mut t);
    }
    let ingresses = group("networking.k8s.io/v1", "ingresses");
    let ing = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}});
    t.post("create an Ingress", &ingresses, &ing).await;
    keep_kind(&mut t);
    t.patch(
        "an Ingress's invalid load balancer",
        &format!("{ingresses}/i/status"),
        MERGE,
        &json!({"status": {"loadBalancer": {"ingress": [{"ip": "300.1.1.1", "hostname": "1.2.3.4"},
            {"ip": "1.2.3.4", "ports": [{"port": 80, "protocol": "TCP"}]}]}}}),
    )
    .await;
    keep_only_status(&mut t);
    let pdbs = group("policy/v1", "poddisruptionbudgets");
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}});
    t.post("create a PodDisruptionBudget", &pdbs, &pdb).await;
    keep_kind(&mut t);
    for (label, status) in [
        (
            "a PodDisruptionBudget's valid status",
            json!({"disruptionsAllowed": 1, "currentHealthy": 2,
            "desiredHealthy": 1, "expectedPods": 2, "conditions": [{"type": "DisruptionAllowed",
            "status": "True", "reason": "SufficientPods", "lastTransitionTime": T0, "message": ""}]}),
        ),
        (
            "a PodDisruptionBudget's invalid status",
            json!({"disruptionsAllowed": -1, "expectedPods": -2,
            "conditions": [{"type": "bad type", "status": "Maybe", "reason": "9lives", "observedGeneration": -1,
                    "lastTransitionTime": T0, "message": ""},
                {"type": "bad type", "status": "True", "lastTransitionTime": T0, "reason": "A:", "message": ""},
                {"type": "Other", "status": "True", "lastTransitionTime": T0, "reason": "", "message": ""}]}),
        ),
        (
            "a condition without a transition time",
            json!({"conditions": [{"type": "Ok", "status": "True",
            "reason": "Fine", "message": ""}]}),
        ),
    ] {
        t.patch(
            label,
            &format!("{pdbs}/p/status"),
            MERGE,
            &json!({ "status": status }),
        )
        .await;
        keep_only_status(&mut t);
    }
    let hpas = group("autoscaling/v2", "horizontalpodautoscalers");
    let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
        "spec": {"maxReplicas": 3, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}});
    t.post("create a HorizontalPodAutoscaler", &hpas, &hpa)
        .await;
    keep_kind(&mut t);
    t.patch(
        "a HorizontalPodAutoscaler's negative counts",
        &format!("{hpas}/h/status"),
        MERGE,
        &json!({"status": {"currentReplicas": -1, "desiredReplicas": -2}}),
    )
    .await;
    keep_only_status(&mut t);
    let pods = core("pods");
    for (name, resources) in [
        ("best-effort", json!({})),
        (
            "guaranteed",
            json!({"limits": {"cpu": "1", "memory": "1Gi"}}),
        ),
        ("burstable", json!({"requests": {"cpu": "100m"}})),
    ] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "resources": resources}]},
            "status": {"phase": "Running"}});
        t.post(&format!("create a {name} Pod"), &pods, &pod).await;
        keep_only_status(&mut t);
    }
    let gated = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
        "spec": {"schedulingGates": [{"name": "example.com/wait"}],
            "containers": [{"name": "c", "image": "busybox:1.36"}]}});
    t.post("create a gated Pod", &pods, &gated).await;
    if let Some(answer) = t.last_answer_mut() {
        // Its condition's transition time is the server's clock.
        answer["status"]["conditions"][0]["lastTransitionTime"] = json!("<time>");
    }
    keep_only_status(&mut t);
    for (label, status) in [
        (
            "a Pod's valid status",
            json!({"phase": "Running", "podIP": "10.0.0.1",
            "podIPs": [{"ip": "10.0.0.1"}], "hostIP": "10.1.0.1", "hostIPs": [{"ip": "10.1.0.1"}],
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "example.com/ok", "status": "True"}]}),
        ),
        (
            "a Pod's invalid status",
            json!({"qosClass": "Guaranteed", "observedGeneration": -1,
            "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "hostIPs": [{"ip": "10.1.0.2"}],
            "conditions": [{"type": "bad type", "status": "True", "observedGeneration": -1}]}),
        ),
    ] {
        t.patch(
            label,
            &format!("{pods}/best-effort/status"),
            MERGE,
            &json!({ "status": status }),
        )
        .await;
        keep_only_status(&mut t);
    }
    let limited = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "limited"},
        "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "busybox:1.36",
            "ports": [{"containerPort": 8080}],
            "resources": {"limits": {"cpu": "1", "memory": "1024Mi"}, "requests": {"cpu": "100m"}}}]}});
    t.post("a Pod's requests default to its limits", &pods, &limited)
        .await;
    if let Some(answer) = t.last_answer_mut()
        && answer["kind"] != "Status"
    {
        let spec = &answer["spec"];
        *answer = json!({"enableServiceLinks": spec["enableServiceLinks"],
            "resources": spec["containers"][0]["resources"], "ports": spec["containers"][0]["ports"]});
    }
    let claims = core("persistentvolumeclaims");
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    t.post("create a PersistentVolumeClaim", &claims, &claim)
        .await;
    keep_kind(&mut t);
    // One entry per map in the refused ones: Go reports a map's errors in its random order.
    for (label, status) in [
        (
            "a PersistentVolumeClaim's valid status",
            json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "allocatedResources": {"storage": "1Gi"}, "allocatedResourceStatuses": {"storage": "NodeResizePending"}}),
        ),
        (
            "a PersistentVolumeClaim's negative capacity, CPU and resize state",
            json!({"capacity": {"storage": "-1Ki"},
            "allocatedResources": {"storage": null, "cpu": "1"}, "allocatedResourceStatuses": {"storage": "Resizing"}}),
        ),
        (
            "a PersistentVolumeClaim's negative allocation",
            json!({"allocatedResources": {"example.com/iops": "-500m"}}),
        ),
        (
            "a PersistentVolumeClaim's invalid resource names",
            json!({"allocatedResources": {"storage": null, "kubernetes.io/fast": "1"},
            "allocatedResourceStatuses": {"storage": null, "bad name": "NodeResizePending"}}),
        ),
    ] {
        t.patch(
            label,
            &format!("{claims}/pvc/status"),
            MERGE,
            &json!({ "status": status }),
        )
        .await;
        keep_only_status(&mut t);
    }
    let cronjobs = group("batch/v1", "cronjobs");
    let cj = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}});
    t.post("create a CronJob", &cronjobs, &cj).await;
    keep_kind(&mut t);
    t.patch(
        "a CronJob's status",
        &format!("{cronjobs}/c/status"),
        MERGE,
        &json!({"status": {"lastScheduleTime": T0, "lastSuccessfulTime": T1}}),
    )
    .await;
    keep_only_status(&mut t);
    t
}

#[tokio::test]
async fn other_status_writes_are_validated_alike() {
    run(
        "other_status_writes_are_validated_alike",
        &[CONDITION_WITHOUT_TRANSITION_TIME],
        other_statuses,
    )
    .await;
}
