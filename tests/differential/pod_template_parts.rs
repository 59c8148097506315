//! Built-in validation of the pod template's parts (`kubewright_apiserver`'s `validation/builtin/container.rs`
//! and `volumes.rs`): container ports, environment variables, volumes and volume mounts, probes. Each rule
//! has a valid control (a Deployment), an invalid Pod create breaking it several ways at once (every cause in
//! one 422, in kube-apiserver's order), and a forbidden update of the Deployment's template; both servers'
//! answers are compared by code, reason, message and causes.

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::summarize;
use crate::support::{MERGE, Transcript, run};

/// One rule: a valid container and pod-spec extras, an invalid pair, and a container the update sets.
struct Case {
    name: &'static str,
    valid: (Value, Value),
    invalid: (Value, Value),
    forbidden: Value,
}

fn container(extra: &Value) -> Value {
    let mut c = json!({"name": "web", "image": "nginx:1.27"});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(extra.clone());
    }
    c
}

fn spec(c: &Value, extra: &Value) -> Value {
    let mut spec = json!({"containers": [container(c)]});
    if let (Some(s), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(extra.clone());
    }
    spec
}

fn deployment(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": spec}}})
}

fn pod(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

fn cases() -> Vec<Case> {
    let none = json!({});
    vec![
        Case {
            name: "container ports",
            valid: (
                json!({"ports": [{"name": "http", "containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}),
                none.clone(),
            ),
            invalid: (
                json!({"ports": [
                    {"name": "HTTP_x", "containerPort": 0},
                    {"name": "http", "containerPort": 70000, "hostPort": -1, "protocol": "ICMP"},
                    {"name": "http", "containerPort": 80},
                    {"name": "-a--very-long-port-name", "containerPort": 81},
                ]}),
                none.clone(),
            ),
            forbidden: json!({"ports": [{"name": "1234", "containerPort": 80}]}),
        },
        Case {
            name: "environment variables",
            valid: (
                json!({"env": [
                    {"name": "A.b-c", "value": "x"},
                    {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                ]}),
                none.clone(),
            ),
            invalid: (
                json!({"env": [
                    {"name": ""},
                    {"name": "A=B", "value": "x"},
                    {"name": "C", "valueFrom": {}},
                    {"name": "D", "value": "v", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    {"name": "E", "valueFrom": {"configMapKeyRef": {"name": "C!", "key": "a b"}, "secretKeyRef": {"name": "s", "key": ""}}},
                ]}),
                none.clone(),
            ),
            forbidden: json!({"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}, "secretKeyRef": {"name": "s", "key": "k"}}}]}),
        },
        Case {
            name: "volumes and mounts",
            valid: (
                json!({"volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "cfg", "mountPath": "/cfg", "subPath": "a/b"}]}),
                json!({"volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c", "items": [{"key": "k", "path": "k.txt"}]}}, {"name": "plain"}]}),
            ),
            invalid: (
                json!({"volumeMounts": [
                    {"name": "data", "mountPath": "/d"},
                    {"name": "two", "mountPath": "/d"},
                    {"name": "", "mountPath": "/x"},
                    {"name": "data", "mountPath": "/e", "subPath": "/abs/../x", "subPathExpr": "$(POD)"},
                ]}),
                json!({"volumes": [
                    {"name": "data", "emptyDir": {}},
                    {"name": "Bad_Name", "emptyDir": {}},
                    {"name": "two", "emptyDir": {}, "secret": {"secretName": "s"}, "downwardAPI": {}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": ""}},
                    {"name": "cm", "configMap": {"name": "", "defaultMode": 1000, "items": [{"key": "", "path": "..x", "mode": -1}]}},
                    {"name": "host", "hostPath": {"path": "/a/../b"}},
                ]}),
            ),
            forbidden: json!({"volumeMounts": [{"name": "missing", "mountPath": "/m"}]}),
        },
        Case {
            name: "probes",
            valid: (
                json!({
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
                    "readinessProbe": {"tcpSocket": {"port": "http"}, "successThreshold": 3},
                    "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
                    "ports": [{"name": "http", "containerPort": 8080}],
                }),
                none.clone(),
            ),
            invalid: (
                json!({
                    "livenessProbe": {"httpGet": {"port": 0, "scheme": "FTP"}, "tcpSocket": {"port": "http"}, "periodSeconds": -1, "successThreshold": 2},
                    "readinessProbe": {"exec": {"command": []}, "terminationGracePeriodSeconds": 5, "timeoutSeconds": -3},
                    "startupProbe": {"grpc": {"port": 70000}, "terminationGracePeriodSeconds": 0},
                }),
                none.clone(),
            ),
            forbidden: json!({"livenessProbe": {"tcpSocket": {"port": "Bad--Name"}, "successThreshold": 5}}),
        },
    ]
}

async fn rules(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    for (i, case) in cases().into_iter().enumerate() {
        let name = format!("parts-{i}");
        let valid = deployment(&name, spec(&case.valid.0, &case.valid.1));
        t.post(&format!("{}: valid", case.name), &deployments, &valid)
            .await;
        summarize(&mut t);
        let invalid = pod(&name, spec(&case.invalid.0, &case.invalid.1));
        t.post(&format!("{}: invalid create", case.name), &pods, &invalid)
            .await;
        summarize(&mut t);
        // A merge patch replaces the container list: the template's one container becomes the forbidden one.
        let patch =
            json!({"spec": {"template": {"spec": {"containers": [container(&case.forbidden)]}}}});
        t.patch(
            &format!("{}: forbidden update", case.name),
            &format!("{deployments}/{name}"),
            MERGE,
            &patch,
        )
        .await;
        summarize(&mut t);
    }
    t
}

#[tokio::test]
async fn pod_template_parts_refuse_alike() {
    run("pod_template_parts_refuse_alike", &[], rules).await;
}

/// A StatefulSet's mounts may name its volume claim templates (kube-apiserver validates its template with a
/// volume per claim); a mount naming neither a volume nor a claim is refused.
async fn claim_mounts(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let sets = format!("/apis/apps/v1/namespaces/{ns}/statefulsets");
    for (name, mount) in [("claimed", "data"), ("unclaimed", "logs")] {
        let set = json!({
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name},
            "spec": {
                "serviceName": name,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{
                        "name": "db", "image": "postgres:16",
                        "volumeMounts": [{"name": mount, "mountPath": "/var/lib/data"}],
                    }]},
                },
                "volumeClaimTemplates": [{
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }],
            },
        });
        t.post(&format!("a mount of {mount}"), &sets, &set).await;
        summarize(&mut t);
    }
    t
}

#[tokio::test]
async fn stateful_set_mounts_may_name_claim_templates() {
    run(
        "stateful_set_mounts_may_name_claim_templates",
        &[],
        claim_mounts,
    )
    .await;
}
