//! `kubectl get` tables on both servers: the same objects of built-in kinds and of a CRD with printer
//! columns, listed and read with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`; the column
//! definitions and every cell (the `-o wide` ones included) must agree. Objects are written without being
//! recorded (their bodies are compared by the other scenarios); only the tables are compared, with ages and
//! timestamps normalized.

use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::support::{
    Deviation, MERGE, Transcript, configmap, deployment, gadget_crd, run, widget, widgets,
};

/// The `Accept` header kubectl sends for `get`.
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// Sends a write that is not recorded and must succeed.
pub(crate) async fn write(
    client: &Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
) {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", "application/json")
        .header("content-type", content_type)
        .body(serde_json::to_vec(body).expect("a JSON body"))
        .expect("a request");
    client
        .request_text(request)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
}

pub(crate) async fn create(client: &Client, path: &str, body: Value) {
    write(client, "POST", path, "application/json", &body).await;
}

pub(crate) async fn status(client: &Client, path: &str, status: Value) {
    let patch = json!({ "status": status });
    write(client, "PATCH", &format!("{path}/status"), MERGE, &patch).await;
}

/// Records the table of `path` (a collection or an object).
pub(crate) async fn table(t: &mut Transcript, label: &str, path: &str) {
    t.send_accepting(label, "GET", path, TABLE, "", None).await;
}

pub(crate) fn core(ns: &str, plural: &str) -> String {
    format!("/api/v1/namespaces/{ns}/{plural}")
}

pub(crate) fn group(ns: &str, group_version: &str, plural: &str) -> String {
    format!("/apis/{group_version}/namespaces/{ns}/{plural}")
}

pub(crate) fn pod_template(app: &str) -> Value {
    json!({
        "metadata": { "labels": { "app": app } },
        "spec": { "containers": [
            { "name": "app", "image": "nginx:1" },
            { "name": "sidecar", "image": "busybox:1" },
        ] }
    })
}

pub(crate) fn object(api_version: &str, kind: &str, name: &str, rest: Value) -> Value {
    let mut obj = json!({ "apiVersion": api_version, "kind": kind, "metadata": { "name": name } });
    if let (Some(o), Some(rest)) = (obj.as_object_mut(), rest.as_object()) {
        o.extend(rest.clone());
    }
    obj
}

async fn workloads_and_config(client: Client, ns: String) -> Transcript {
    let c = &client;
    let apps = |plural: &str| group(&ns, "apps/v1", plural);
    let batch = |plural: &str| group(&ns, "batch/v1", plural);
    let selector = |app: &str| json!({ "matchLabels": { "app": app } });

    create(c, &apps("deployments"), deployment("web")).await;
    let rs = json!({ "spec": { "replicas": 2, "selector": selector("rs"), "template": pod_template("rs") } });
    create(
        c,
        &apps("replicasets"),
        object("apps/v1", "ReplicaSet", "rs", rs),
    )
    .await;
    let sts = json!({ "spec": {
        "replicas": 3, "serviceName": "db", "selector": selector("db"), "template": pod_template("db"),
    } });
    create(
        c,
        &apps("statefulsets"),
        object("apps/v1", "StatefulSet", "db", sts),
    )
    .await;
    let mut ds_template = pod_template("ds");
    ds_template["spec"]["nodeSelector"] = json!({ "zone": "a", "disk": "ssd" });
    let ds = json!({ "spec": { "selector": {
        "matchLabels": { "app": "ds" },
        "matchExpressions": [{ "key": "tier", "operator": "NotIn", "values": ["db", "cache"] }],
    }, "template": ds_template } });
    let mut ds = object("apps/v1", "DaemonSet", "agent", ds);
    ds["spec"]["template"]["metadata"]["labels"]["tier"] = json!("web");
    create(c, &apps("daemonsets"), ds).await;

    let mut job_template = pod_template("job");
    job_template["spec"]["restartPolicy"] = json!("Never");
    let job = json!({ "spec": { "parallelism": 2, "template": job_template } });
    create(c, &batch("jobs"), object("batch/v1", "Job", "once", job)).await;
    let cron = json!({ "spec": {
        "schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "suspend": true,
        "jobTemplate": { "spec": { "template": job_template } },
    } });
    create(
        c,
        &batch("cronjobs"),
        object("batch/v1", "CronJob", "tick", cron),
    )
    .await;
    let plain_cron = json!({ "spec": {
        "schedule": "@hourly", "jobTemplate": { "spec": { "template": job_template } },
    } });
    create(
        c,
        &batch("cronjobs"),
        object("batch/v1", "CronJob", "hourly", plain_cron),
    )
    .await;

    // Statuses as the controllers (not running on either server) would write them.
    let rs_status = json!({ "replicas": 2, "readyReplicas": 1, "availableReplicas": 1 });
    status(c, &format!("{}/rs", apps("replicasets")), rs_status).await;
    let sts_status =
        json!({ "replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 3 });
    status(c, &format!("{}/db", apps("statefulsets")), sts_status).await;
    status(
        c,
        &format!("{}/agent", apps("daemonsets")),
        json!({
            "desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
            "updatedNumberScheduled": 1, "numberAvailable": 2, "numberMisscheduled": 0,
        }),
    )
    .await;
    let done = json!({ "spec": { "completions": 1, "template": job_template } });
    create(c, &batch("jobs"), object("batch/v1", "Job", "done", done)).await;
    status(c, &format!("{}/done", batch("jobs")), json!({
        "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:03:20Z", "succeeded": 1,
        "conditions": [
            { "type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "done",
              "lastProbeTime": "2026-01-01T00:03:20Z", "lastTransitionTime": "2026-01-01T00:03:20Z" },
            { "type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "done",
              "lastProbeTime": "2026-01-01T00:03:20Z", "lastTransitionTime": "2026-01-01T00:03:20Z" },
        ],
    })).await;
    status(c, &format!("{}/tick", batch("cronjobs")), json!({
        "lastScheduleTime": "2026-01-01T00:00:00Z",
        "active": [{ "kind": "Job", "apiVersion": "batch/v1", "name": "tick-1", "namespace": ns }],
    })).await;

    let mut cm = configmap("settings", json!({ "a": "1", "b": "2" }));
    cm["binaryData"] = json!({ "bin": "AAE=" });
    create(c, &core(&ns, "configmaps"), cm).await;
    let secret = json!({ "data": { "u": "YQ==", "p": "Yg==" } });
    create(
        c,
        &core(&ns, "secrets"),
        object("v1", "Secret", "creds", secret),
    )
    .await;
    let tls =
        json!({ "type": "kubernetes.io/tls", "data": { "tls.crt": "YQ==", "tls.key": "Yg==" } });
    create(
        c,
        &core(&ns, "secrets"),
        object("v1", "Secret", "cert", tls),
    )
    .await;
    create(
        c,
        &core(&ns, "serviceaccounts"),
        object("v1", "ServiceAccount", "robot", json!({})),
    )
    .await;
    let lease = json!({ "spec": { "holderIdentity": "robot-1", "leaseDurationSeconds": 15 } });
    let leases = group(&ns, "coordination.k8s.io/v1", "leases");
    create(
        c,
        &leases,
        object("coordination.k8s.io/v1", "Lease", "leader", lease),
    )
    .await;
    create(
        c,
        &leases,
        object(
            "coordination.k8s.io/v1",
            "Lease",
            "free",
            json!({ "spec": {} }),
        ),
    )
    .await;
    let role = json!({ "rules": [{ "apiGroups": [""], "resources": ["pods"], "verbs": ["get"] }] });
    let roles = group(&ns, "rbac.authorization.k8s.io/v1", "roles");
    create(
        c,
        &roles,
        object("rbac.authorization.k8s.io/v1", "Role", "reader", role),
    )
    .await;

    let mut t = Transcript::new(client.clone());
    table(
        &mut t,
        "deployments",
        &format!("{}?includeObject=None", apps("deployments")),
    )
    .await;
    table(
        &mut t,
        "deployment",
        &format!("{}/web?includeObject=None", apps("deployments")),
    )
    .await;
    table(
        &mut t,
        "replicasets",
        &format!("{}?includeObject=None", apps("replicasets")),
    )
    .await;
    table(
        &mut t,
        "statefulsets",
        &format!("{}?includeObject=None", apps("statefulsets")),
    )
    .await;
    table(
        &mut t,
        "daemonsets",
        &format!("{}?includeObject=None", apps("daemonsets")),
    )
    .await;
    table(
        &mut t,
        "jobs",
        &format!("{}?includeObject=None", batch("jobs")),
    )
    .await;
    table(
        &mut t,
        "cronjobs",
        &format!("{}?includeObject=None", batch("cronjobs")),
    )
    .await;
    table(
        &mut t,
        "configmaps",
        &format!("{}?includeObject=Object", core(&ns, "configmaps")),
    )
    .await;
    table(
        &mut t,
        "configmap",
        &format!("{}/settings", core(&ns, "configmaps")),
    )
    .await;
    table(
        &mut t,
        "secrets",
        &format!("{}?includeObject=None", core(&ns, "secrets")),
    )
    .await;
    table(
        &mut t,
        "serviceaccounts",
        &format!("{}?includeObject=None", core(&ns, "serviceaccounts")),
    )
    .await;
    table(&mut t, "leases", &format!("{leases}?includeObject=None")).await;
    table(
        &mut t,
        "roles (no printer)",
        &format!("{roles}?includeObject=None"),
    )
    .await;
    table(
        &mut t,
        "namespace",
        &format!("/api/v1/namespaces/{ns}?includeObject=None"),
    )
    .await;
    t
}

/// The `-o wide` Selector cell of a Job names the Job's uid (`batch.kubernetes.io/controller-uid=<uid>`, the
/// selector both servers generate), which differs between the two servers.
const JOB_SELECTOR_UID: Deviation = Deviation {
    name: "the uid in a Job's generated selector",
    paths: &["jobs:/body/rows/*/cells/7"],
};

#[tokio::test]
async fn workload_and_config_tables_match() {
    run(
        "workload_and_config_tables_match",
        &[JOB_SELECTOR_UID],
        workloads_and_config,
    )
    .await;
}

/// The label of the scenario's Events, and its selector: kube-apiserver's own controllers may report events
/// in the namespace too (its IP allocator's repair loop about a Service given a cluster IP).
const OURS: &str = "labelSelector=table%3Dyes";

fn labelled(mut obj: Value) -> Value {
    obj["metadata"]["labels"] = json!({ "table": "yes" });
    obj
}

async fn pods_services_and_events(client: Client, ns: String) -> Transcript {
    let c = &client;
    let pods = core(&ns, "pods");
    let mut spec = pod_template("p")["spec"].clone();
    spec["readinessGates"] = json!([{ "conditionType": "example.dev/warm" }]);
    create(
        c,
        &pods,
        object("v1", "Pod", "pending", json!({ "spec": spec })),
    )
    .await;
    create(
        c,
        &pods,
        object("v1", "Pod", "crashing", json!({ "spec": spec })),
    )
    .await;
    status(c, &format!("{pods}/crashing"), json!({
        "phase": "Running",
        "podIP": "10.1.0.7", "podIPs": [{ "ip": "10.1.0.7" }],
        "conditions": [{ "type": "example.dev/warm", "status": "True" }],
        "containerStatuses": [
            { "name": "app", "image": "nginx:1", "imageID": "", "ready": true, "restartCount": 0,
              "state": { "running": { "startedAt": "2026-01-01T00:00:00Z" } } },
            { "name": "sidecar", "image": "busybox:1", "imageID": "", "ready": false, "restartCount": 3,
              "state": { "waiting": { "reason": "CrashLoopBackOff" } },
              "lastState": { "terminated": { "exitCode": 1, "finishedAt": "2026-01-01T00:00:00Z" } } },
        ],
    })).await;
    create(
        c,
        &pods,
        object(
            "v1",
            "Pod",
            "done",
            json!({ "spec": pod_template("d")["spec"] }),
        ),
    )
    .await;
    status(c, &format!("{pods}/done"), json!({ "phase": "Succeeded" })).await;

    let mut init_spec = pod_template("i")["spec"].clone();
    init_spec["initContainers"] = json!([
        { "name": "setup", "image": "busybox:1" },
        { "name": "proxy", "image": "envoy:1", "restartPolicy": "Always" },
        { "name": "migrate", "image": "busybox:1" },
    ]);
    create(
        c,
        &pods,
        object("v1", "Pod", "initializing", json!({ "spec": init_spec })),
    )
    .await;
    let waiting = json!({ "waiting": { "reason": "PodInitializing" } });
    status(c, &format!("{pods}/initializing"), json!({
        "phase": "Pending",
        "initContainerStatuses": [
            { "name": "setup", "image": "busybox:1", "imageID": "", "ready": false, "restartCount": 1,
              "state": { "terminated": { "exitCode": 0, "reason": "Completed" } } },
            { "name": "proxy", "image": "envoy:1", "imageID": "", "ready": true, "started": true, "restartCount": 2,
              "state": { "running": {} } },
            { "name": "migrate", "image": "busybox:1", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "running": {} } },
        ],
        "containerStatuses": [
            { "name": "app", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0, "state": waiting },
            { "name": "sidecar", "image": "busybox:1", "imageID": "", "ready": false, "restartCount": 0, "state": waiting },
        ],
    })).await;
    create(
        c,
        &pods,
        object(
            "v1",
            "Pod",
            "failed",
            json!({ "spec": pod_template("f")["spec"] }),
        ),
    )
    .await;
    status(c, &format!("{pods}/failed"), json!({
        "phase": "Failed",
        "containerStatuses": [
            { "name": "app", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "terminated": { "exitCode": 2 } } },
            { "name": "sidecar", "image": "busybox:1", "imageID": "", "ready": false, "restartCount": 0,
              "state": { "terminated": { "exitCode": 0, "reason": "Completed" } } },
        ],
    })).await;
    let mut held = object(
        "v1",
        "Pod",
        "stopping",
        json!({ "spec": pod_template("s")["spec"] }),
    );
    held["metadata"]["finalizers"] = json!(["example.dev/hold"]);
    create(c, &pods, held).await;
    write(
        c,
        "DELETE",
        &format!("{pods}/stopping"),
        "application/json",
        &json!({}),
    )
    .await;

    let deployments = group(&ns, "apps/v1", "deployments");
    let mut web = deployment("web");
    web["spec"]["replicas"] = json!(3);
    create(c, &deployments, web).await;
    status(c, &format!("{deployments}/web"), json!({
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2,
    })).await;

    let services = core(&ns, "services");
    let headless = json!({ "spec": {
        "clusterIP": "None", "selector": { "app": "p", "tier": "web" },
        "ports": [{ "name": "http", "port": 80 }, { "name": "dns", "port": 53, "protocol": "UDP" }],
    } });
    create(c, &services, object("v1", "Service", "headless", headless)).await;
    let external = json!({ "spec": { "type": "ExternalName", "externalName": "db.example.com" } });
    create(c, &services, object("v1", "Service", "external", external)).await;

    let balanced = json!({ "spec": {
        "type": "LoadBalancer", "clusterIP": "10.0.200.7", "externalIPs": ["198.51.100.1"],
        "selector": { "app": "p" }, "ports": [{ "port": 80, "nodePort": 30777 }],
    } });
    create(c, &services, object("v1", "Service", "balanced", balanced)).await;
    status(
        c,
        &format!("{services}/balanced"),
        json!({ "loadBalancer": { "ingress": [
        { "hostname": "lb.example.com" }, { "ip": "192.0.2.1" },
    ] } }),
    )
    .await;
    let pending = json!({ "spec": {
        "type": "LoadBalancer", "clusterIP": "10.0.200.9", "ports": [{ "port": 80, "nodePort": 30779 }],
    } });
    create(c, &services, object("v1", "Service", "waiting", pending)).await;
    let node_port = json!({ "spec": {
        "type": "NodePort", "clusterIP": "10.0.200.8",
        "ports": [{ "name": "https", "port": 443, "nodePort": 30778 }, { "name": "dns", "port": 53, "nodePort": 30053, "protocol": "UDP" }],
    } });
    create(c, &services, object("v1", "Service", "nodeport", node_port)).await;

    let endpoints = json!({ "subsets": [
        { "addresses": [{ "ip": "10.1.0.1" }, { "ip": "10.1.0.2" }], "ports": [{ "name": "http", "port": 80 }, { "name": "https", "port": 443 }] },
    ] });
    create(
        c,
        &core(&ns, "endpoints"),
        object("v1", "Endpoints", "headless", endpoints),
    )
    .await;
    create(
        c,
        &core(&ns, "endpoints"),
        object("v1", "Endpoints", "empty", json!({})),
    )
    .await;

    let ingresses = group(&ns, "networking.k8s.io/v1", "ingresses");
    let backend = json!({ "service": { "name": "headless", "port": { "number": 80 } } });
    let ingress = json!({ "spec": {
        "ingressClassName": "nginx", "tls": [{ "hosts": ["a.example.com"] }],
        "rules": [
            { "host": "a.example.com", "http": { "paths": [{ "path": "/", "pathType": "Prefix", "backend": backend }] } },
            { "host": "b.example.com" },
        ],
    } });
    create(
        c,
        &ingresses,
        object("networking.k8s.io/v1", "Ingress", "web", ingress),
    )
    .await;
    status(
        c,
        &format!("{ingresses}/web"),
        json!({ "loadBalancer": { "ingress": [
        { "ip": "192.0.2.9" }, { "hostname": "lb.example.com" },
    ] } }),
    )
    .await;
    let default_backend = json!({ "spec": { "defaultBackend": backend } });
    create(
        c,
        &ingresses,
        object(
            "networking.k8s.io/v1",
            "Ingress",
            "catchall",
            default_backend,
        ),
    )
    .await;

    let claims = core(&ns, "persistentvolumeclaims");
    let claim = json!({ "spec": {
        "storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
        "resources": { "requests": { "storage": "1Gi" } },
    } });
    create(
        c,
        &claims,
        object("v1", "PersistentVolumeClaim", "data", claim),
    )
    .await;

    let event = json!({
        "involvedObject": { "kind": "Pod", "name": "crashing", "namespace": ns, "fieldPath": "spec.containers{sidecar}" },
        "reason": "BackOff", "message": "Back-off restarting  ", "type": "Warning", "count": 4,
        "source": { "component": "kubelet", "host": "node-1" },
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:05:00Z",
    });
    create(
        c,
        &core(&ns, "events"),
        labelled(object("v1", "Event", "crashing.1", event)),
    )
    .await;
    let new_event = json!({
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.dev/operator",
        "reportingInstance": "operator-0", "action": "Reconcile", "reason": "Synced", "type": "Normal",
        "note": "synced", "regarding": { "kind": "ConfigMap", "name": "settings", "namespace": ns },
    });
    let events = group(&ns, "events.k8s.io/v1", "events");
    create(
        c,
        &events,
        labelled(object("events.k8s.io/v1", "Event", "synced.1", new_event)),
    )
    .await;

    let mut t = Transcript::new(client.clone());
    table(&mut t, "pods", &format!("{pods}?includeObject=None")).await;
    let with_status = format!("{deployments}?includeObject=None");
    table(&mut t, "deployment with status", &with_status).await;
    table(
        &mut t,
        "services",
        &format!("{services}?includeObject=None"),
    )
    .await;
    table(
        &mut t,
        "endpoints",
        &format!("{}?includeObject=None", core(&ns, "endpoints")),
    )
    .await;
    table(
        &mut t,
        "ingresses",
        &format!("{ingresses}?includeObject=None"),
    )
    .await;
    table(&mut t, "claims", &format!("{claims}?includeObject=None")).await;
    table(
        &mut t,
        "core events",
        &format!("{}?includeObject=None&{OURS}", core(&ns, "events")),
    )
    .await;
    table(
        &mut t,
        "events.k8s.io events",
        &format!("{events}?includeObject=None&{OURS}"),
    )
    .await;
    t
}

#[tokio::test]
async fn pod_service_and_event_tables_match() {
    run(
        "pod_service_and_event_tables_match",
        &[],
        pods_services_and_events,
    )
    .await;
}

fn gadget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "tables.example.dev/v1", "kind": "Gadget",
        "metadata": { "name": name, "labels": { "app.kubernetes.io/name": "gizmo" } },
        "spec": spec,
    })
}

/// Makes sure the Gadget CRD is there and waits until it is served.
async fn install_gadgets(client: &Client, ns: &str) {
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let body = serde_json::to_vec(&gadget_crd()).expect("a JSON body");
    let request = http::Request::builder()
        .method("POST")
        .uri(crds)
        .header("content-type", "application/json")
        .body(body)
        .expect("a request");
    if let Err(e) = client.request_text(request).await {
        // `support::both` installs it on both servers before any scenario runs, so that discovery agrees
        // (`kinds.rs`) and no CRD is created on kube-apiserver while another scenario watches (it sends
        // that watch an extra bookmark).
        assert!(
            e.to_string().contains("already exists"),
            "creating the CRD: {e}"
        );
    }
    let path = format!("/apis/tables.example.dev/v1/namespaces/{ns}/gadgets");
    for _ in 0..200 {
        let request = http::Request::get(&path)
            .body(Vec::new())
            .expect("a request");
        if client.request_text(request).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Gadget CRD is not served");
}

async fn custom_resources(client: Client, ns: String) -> Transcript {
    let c = &client;
    install_gadgets(c, &ns).await;
    let gadgets = format!("/apis/tables.example.dev/v1/namespaces/{ns}/gadgets");
    let full = json!({
        "count": 3, "ratio": 2.5, "on": true, "tags": ["2026-01-01", "b", "c"],
        "items": [{ "n": 1 }, { "n": 2, "tag": "t" }, { "n": 3 }],
        "obj": { "b": [1, 2], "a": "<x&y>" },
    });
    create(c, &gadgets, gadget("full", full)).await;
    status(
        c,
        &format!("{gadgets}/full"),
        json!({
            "since": "2026-01-01T00:00:00Z",
            "conditions": [
                { "type": "Synced", "status": "True", "reason": "Done" },
                { "type": "Ready", "status": "False", "reason": "Waiting" },
            ],
        }),
    )
    .await;
    create(c, &gadgets, gadget("bare", json!({ "ratio": 4 }))).await;
    create(c, &widgets(&ns), widget("w", 1, "red")).await;

    let mut t = Transcript::new(client.clone());
    table(&mut t, "gadgets", &gadgets).await;
    table(
        &mut t,
        "gadget",
        &format!("{gadgets}/full?includeObject=None"),
    )
    .await;
    table(
        &mut t,
        "widgets (no printer columns)",
        &format!("{}?includeObject=None", widgets(&ns)),
    )
    .await;
    t
}

#[tokio::test]
async fn custom_resource_tables_match() {
    run("custom_resource_tables_match", &[], custom_resources).await;
}

/// A CRD named after its one printer column (`column` JSON) and `versions` versions with those columns on
/// the first only (or on its only one).
fn crd_with_column(plural: &str, column: Value, versions: usize) -> Value {
    let open = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
    let versions: Vec<Value> = (0..versions)
        .map(|i| {
            let columns = if i == 0 { json!([column]) } else { json!([]) };
            json!({
                "name": format!("v{}", i + 1), "served": true, "storage": i == 0,
                "schema": { "openAPIV3Schema": open }, "additionalPrinterColumns": columns,
            })
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{plural}.refused.example.dev") },
        "spec": {
            "group": "refused.example.dev", "scope": "Namespaced",
            "names": { "plural": plural, "kind": "Refused" }, "versions": versions,
        },
    })
}

async fn refused_columns(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let column = |name: &str, type_: &str, path: &str| json!({ "name": name, "type": type_, "jsonPath": path });
    let mut bad_format = column("A", "string", ".spec.a");
    bad_format["format"] = json!("weird");
    let cases = [
        ("dollars", column("A", "string", "$.spec.a"), 1),
        ("twoversions", column("A", "string", "$.spec.a"), 2),
        ("types", column("A", "bogus", ".spec.a"), 1),
        ("formats", bad_format, 1),
        ("names", column("", "string", ".spec.a"), 1),
        ("paths", column("A", "string", ""), 1),
    ];
    for (plural, column, versions) in cases {
        let crd = crd_with_column(plural, column, versions);
        t.post(&format!("refused {plural}"), crds, &crd).await;
    }
    t
}

#[tokio::test]
async fn invalid_printer_columns_are_refused() {
    run("invalid_printer_columns_are_refused", &[], refused_columns).await;
}
