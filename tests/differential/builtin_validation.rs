//! Built-in validation, rule by rule (`kubewright_apiserver`'s `validation/builtin`): for each rule a valid
//! control, an invalid create and a forbidden update, on both servers, compared by code, reason, message and
//! causes (field, reason, message in order). The Job template's immutability is also tried through every
//! write: update, JSON, merge, strategic merge and apply patches, and a dry run.
//!
//! Answers are summarized: an accepted write is its kind and name (the objects differ where this scenario does
//! not look, such as the Job selector kube-apiserver generates), a refused one its `Status`.

use kube::Client;
use serde_json::{Value, json};

use crate::support::{APPLY, Deviation, JSON_PATCH, MERGE, STRATEGIC, Transcript, run};

/// What a rule's answer is compared by.
fn summary(body: &Value) -> Value {
    if body["kind"] == "Status" {
        let causes: Vec<Value> = body["details"]["causes"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|c| json!({"field": c["field"], "reason": c["reason"], "message": c["message"]}))
                    .collect()
            })
            .unwrap_or_default();
        json!({"code": body["code"], "reason": body["reason"], "message": body["message"], "causes": causes})
    } else {
        json!({"accepted": body["kind"], "name": body["metadata"]["name"]})
    }
}

pub(crate) fn summarize(t: &mut Transcript) {
    if let Some(body) = t.last_answer_mut() {
        *body = summary(body);
    }
}

fn container(name: &str) -> Value {
    json!({"name": name, "image": "nginx:1.27"})
}

fn pod_template(labels: Value, restart: Option<&str>, containers: Value) -> Value {
    let mut spec = json!({"containers": containers});
    if let Some(r) = restart {
        spec["restartPolicy"] = json!(r);
    }
    json!({"metadata": {"labels": labels}, "spec": spec})
}

fn workload(kind: &str, name: &str, selector: Value, template: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": selector}, "template": template},
    })
}

/// One rule: where its objects live, a valid object, an invalid one, and a patch of the valid one the rule
/// refuses (a merge patch, unless the case says otherwise).
pub(crate) struct Case {
    pub(crate) name: &'static str,
    pub(crate) collection: fn(&str) -> String,
    pub(crate) valid: Value,
    pub(crate) invalid: Option<Value>,
    pub(crate) forbidden: Option<Value>,
}

pub(crate) fn core(resource: &'static str) -> impl Fn(&str) -> String {
    move |ns| format!("/api/v1/namespaces/{ns}/{resource}")
}

fn cases() -> Vec<Case> {
    let app = json!({"app": "a"});
    vec![
        Case {
            name: "configmap keys and labels",
            collection: |ns| core("configmaps")(ns),
            valid: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a.b_c-d": "x"}}),
            invalid: Some(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cm-bad", "labels": {"tier": "-front"}, "annotations": {"bad key": "v"}},
                "data": {"a b": "x"}, "binaryData": {"..x": "eQ=="}})),
            forbidden: Some(json!({"metadata": {"labels": {"bad/key/x": "v"}}})),
        },
        Case {
            name: "immutable configmap",
            collection: |ns| core("configmaps")(ns),
            valid: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"}, "immutable": true, "data": {"a": "x"}}),
            invalid: None,
            forbidden: Some(json!({"data": {"a": "y"}, "immutable": false})),
        },
        Case {
            name: "secret type is immutable",
            collection: |ns| core("secrets")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "eA=="}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {"a b": "eA=="}}),
            ),
            forbidden: Some(json!({"type": "kubernetes.io/basic-auth"})),
        },
        Case {
            name: "immutable secret",
            collection: |ns| core("secrets")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "frozen"}, "immutable": true, "data": {"a": "eA=="}}),
            invalid: None,
            forbidden: Some(json!({"data": {"a": "eQ=="}})),
        },
        Case {
            name: "deployment selector and containers",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            valid: workload(
                "Deployment",
                "d",
                app.clone(),
                pod_template(app.clone(), None, json!([container("web")])),
            ),
            invalid: Some(workload(
                "Deployment",
                "d-bad",
                app.clone(),
                pod_template(
                    json!({"app": "b"}),
                    Some("Never"),
                    json!([
                        {"name": "Web_1", "image": "nginx", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}},
                        {"name": "side"},
                        container("side"),
                    ]),
                ),
            )),
            forbidden: Some(
                json!({"spec": {"selector": {"matchLabels": {"app": "a", "v": "2"}}, "template": {"metadata": {"labels": {"v": "2"}}}}}),
            ),
        },
        Case {
            name: "deployment strategy and counts",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            valid: workload("Deployment", "rolling", app.clone(), pod_template(app.clone(), None, json!([container("web")])))
                .tap(|d| d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "50%"}})),
            invalid: Some(workload("Deployment", "rolling-bad", app.clone(), pod_template(app.clone(), None, json!([container("web")])))
                .tap(|d| {
                    d["spec"]["replicas"] = json!(-1);
                    d["spec"]["minReadySeconds"] = json!(30);
                    d["spec"]["progressDeadlineSeconds"] = json!(30);
                    d["spec"]["strategy"] = json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "150%"}});
                })),
            forbidden: Some(json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}})),
        },
        Case {
            name: "poddisruptionbudget",
            collection: |ns| format!("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"),
            valid: json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "a"}}}}),
            invalid: Some(json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb-bad", "labels": {"a": "-"}},
                "spec": {"minAvailable": "150%", "unhealthyPodEvictionPolicy": "Sometimes"}})),
            forbidden: Some(json!({"spec": {"minAvailable": "half", "maxUnavailable": -1}})),
        },
        Case {
            name: "replicaset selector",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            valid: workload(
                "ReplicaSet",
                "rs",
                app.clone(),
                pod_template(app.clone(), None, json!([container("web")])),
            ),
            invalid: Some(workload(
                "ReplicaSet",
                "rs-bad",
                app.clone(),
                pod_template(json!({"app": "b"}), None, json!([container("web")])),
            )),
            forbidden: Some(
                json!({"spec": {"selector": {"matchLabels": {"app": "a", "v": "2"}}, "template": {"metadata": {"labels": {"v": "2"}}}}}),
            ),
        },
        Case {
            name: "daemonset selector",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/daemonsets"),
            valid: workload(
                "DaemonSet",
                "ds",
                app.clone(),
                pod_template(app.clone(), None, json!([container("web")])),
            ),
            invalid: Some(workload(
                "DaemonSet",
                "ds-bad",
                app.clone(),
                pod_template(
                    json!({"app": "b"}),
                    Some("OnFailure"),
                    json!([container("web")]),
                ),
            )),
            forbidden: Some(
                json!({"spec": {"selector": {"matchLabels": {"app": "a", "v": "2"}}, "template": {"metadata": {"labels": {"v": "2"}}}}}),
            ),
        },
        Case {
            name: "statefulset forbidden updates",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/statefulsets"),
            valid: workload(
                "StatefulSet",
                "ss",
                app.clone(),
                pod_template(app.clone(), None, json!([container("web")])),
            )
            .tap(|s| s["spec"]["serviceName"] = json!("ss")),
            invalid: Some(
                workload(
                    "StatefulSet",
                    "ss.bad",
                    app.clone(),
                    pod_template(json!({"app": "b"}), None, json!([container("web")])),
                )
                .tap(|s| s["spec"]["serviceName"] = json!("Not_A_Label")),
            ),
            forbidden: Some(json!({"spec": {"serviceName": "other", "replicas": 2}})),
        },
        Case {
            name: "job restart policy and template",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/jobs"),
            valid: json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                "spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}}),
            invalid: Some(
                json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j-bad"},
                "spec": {"template": pod_template(json!({}), None, json!([container("work"), container("work")]))}}),
            ),
            forbidden: Some(
                json!({"spec": {"template": {"spec": {"containers": [{"name": "work", "image": "nginx:1.28"}]}}}}),
            ),
        },
        Case {
            name: "cronjob restart policy",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
            valid: json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": pod_template(json!({}), Some("OnFailure"), json!([container("work")]))}}}}),
            invalid: Some(
                json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "a-cron-job-name-that-is-longer-than-fifty-two-characters"},
                "spec": {"schedule": "61 * * * *", "jobTemplate": {"spec": {"template": pod_template(json!({}), None, json!([container("work")]))}}}}),
            ),
            forbidden: Some(
                json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Always"}}}}}}),
            ),
        },
        Case {
            name: "cronjob schedule",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
            valid: json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "hourly"},
                "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}}}}),
            invalid: Some(
                json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "fields"},
                "spec": {"schedule": "x 5-2 * JAN-FOO */0", "jobTemplate": {"spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}}}}),
            ),
            forbidden: Some(json!({"spec": {"schedule": "CRON_TZ=UTC 0 * * * * *"}})),
        },
        Case {
            name: "cronjob descriptor",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
            valid: json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "every"},
                "spec": {"schedule": "@every 1h30m", "jobTemplate": {"spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}}}}),
            invalid: Some(
                json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "often"},
                "spec": {"schedule": "@often", "jobTemplate": {"spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}}}}),
            ),
            forbidden: Some(json!({"spec": {"schedule": "0 0 31 2-1 *"}})),
        },
        Case {
            name: "rolebinding roleRef",
            collection: |ns| {
                format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings")
            },
            valid: json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                "subjects": [{"kind": "ServiceAccount", "name": "default"}]}),
            invalid: Some(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb%bad"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}}),
            ),
            forbidden: Some(json!({"roleRef": {"name": "writer"}})),
        },
        Case {
            name: "role rules",
            collection: |ns| format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"),
            valid: json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "reader"},
                "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}),
            invalid: Some(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "bad"},
                "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}]}),
            ),
            forbidden: Some(json!({"rules": [{"verbs": ["get"]}]})),
        },
        Case {
            name: "clusterrolebinding subjects",
            collection: |_| "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_string(),
            valid: json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "builtin-validation-crb"},
                "roleRef": {"kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"}]}),
            invalid: Some(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "builtin-validation-crb-bad"},
                "roleRef": {"apiGroup": "example.com", "kind": "Role", "name": "view"},
                "subjects": [{"kind": "ServiceAccount", "name": "Default"}, {"kind": "Robot", "name": "r2"}, {"kind": "User", "name": ""}]}),
            ),
            forbidden: Some(json!({"roleRef": {"name": "edit"}})),
        },
        Case {
            name: "lease",
            collection: |ns| format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"),
            valid: json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "leader"},
                "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0}}),
            invalid: Some(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "bad"},
                "spec": {"leaseDurationSeconds": 0, "leaseTransitions": -1}})),
            forbidden: Some(json!({"spec": {"leaseDurationSeconds": -5}})),
        },
        Case {
            name: "persistentvolumeclaim spec",
            collection: |ns| core("persistentvolumeclaims")(ns),
            valid: json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
            invalid: None,
            forbidden: Some(json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}})),
        },
        Case {
            name: "pod containers",
            collection: |ns| core("pods")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container("web")]}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p-bad"},
                "spec": {"containers": [{"name": "a.b"}], "restartPolicy": "Sometimes"}}),
            ),
            forbidden: Some(
                json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.28", "workingDir": "/srv"}]}}),
            ),
        },
        Case {
            name: "service name",
            collection: |ns| core("services")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}}),
            ),
            forbidden: None,
        },
        Case {
            name: "service ports and cluster IP",
            collection: |ns| core("services")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "https", "port": 443}]}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web-bad"},
                "spec": {"type": "Weird", "sessionAffinity": "Sometimes", "selector": {"app": "-web"}, "ports": [
                    {"port": 80, "targetPort": "Not_A_Port", "protocol": "HTTP"},
                    {"name": "http", "port": 70000, "nodePort": 30080},
                    {"name": "http", "port": 80, "targetPort": 0},
                ]}}),
            ),
            forbidden: Some(json!({"spec": {"clusterIP": "10.0.200.200"}})),
        },
        Case {
            name: "service ip families",
            collection: |ns| core("services")(ns),
            // A cluster IP asked for, so that the messages naming it agree.
            valid: json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fam"}, "spec": {"clusterIP": "10.0.0.213", "ports": [{"port": 80}]}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless"},
                "spec": {"clusterIP": "None", "ports": [{"port": 80}, {"port": 80}]}}),
            ),
            forbidden: Some(json!({"spec": {"ipFamilies": ["IPv6"]}})),
        },
        Case {
            name: "serviceaccount labels",
            collection: |ns| core("serviceaccounts")(ns),
            valid: json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "labels": {"example.com/tier": "front_1"}}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-bad",
                "labels": {"tier": "a b"}, "annotations": {"example.com/": "x"}}}),
            ),
            forbidden: Some(json!({"metadata": {"annotations": {"a/b/c": "x"}}})),
        },
    ]
}

trait Tap: Sized {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for Value {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

/// Each case's valid control, invalid create and forbidden update, summarized.
pub(crate) async fn run_cases(t: &mut Transcript, ns: &str, cases: Vec<Case>) {
    for case in cases {
        let path = (case.collection)(ns);
        t.post(&format!("{}: valid", case.name), &path, &case.valid)
            .await;
        summarize(t);
        if let Some(invalid) = &case.invalid {
            t.post(&format!("{}: invalid create", case.name), &path, invalid)
                .await;
            summarize(t);
        }
        if let Some(patch) = &case.forbidden {
            let name = case.valid["metadata"]["name"].as_str().expect("a name");
            t.patch(
                &format!("{}: forbidden update", case.name),
                &format!("{path}/{name}"),
                MERGE,
                patch,
            )
            .await;
            summarize(t);
        }
    }
}

async fn rules(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, cases()).await;
    // Cluster-scoped objects outlive the scenario's namespace on the shared control plane.
    t.delete(
        "delete the cluster role binding",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/builtin-validation-crb",
    )
    .await;
    summarize(&mut t);
    t
}

/// The Job's template is kube-apiserver's internal `PodTemplateSpec`, which Go prints with its own field
/// names: the message shows the value differently (the field, reason and the rest of the message agree).
const INTERNAL_VALUES: Deviation = Deviation {
    name: "immutable struct values are printed as JSON, not as kube-apiserver's internal types",
    paths: &[
        "job restart policy and template: forbidden update:/body/message",
        "job restart policy and template: forbidden update:/body/causes/0/message",
    ],
};

/// kube-apiserver ends the message with a diff of the two specs.
const PVC_DIFF: Deviation = Deviation {
    name: "the immutable spec message of a PersistentVolumeClaim or a Pod has no diff",
    paths: &[
        "persistentvolumeclaim spec: forbidden update:/body/message",
        "persistentvolumeclaim spec: forbidden update:/body/causes/0/message",
        "pod containers: forbidden update:/body/message",
        "pod containers: forbidden update:/body/causes/0/message",
    ],
};

#[tokio::test]
async fn builtin_rules_refuse_alike() {
    run(
        "builtin_rules_refuse_alike",
        &[INTERNAL_VALUES, PVC_DIFF],
        rules,
    )
    .await;
}

/// A changed Job template, written every way a client can: each is refused, naming `spec.template`.
async fn every_write(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": pod_template(json!({}), Some("Never"), json!([container("work")]))}});
    t.post("create", &jobs, &job).await;
    summarize(&mut t);
    let path = format!("{jobs}/j");
    let mut current = t.get("get", &path).await;
    summarize(&mut t);
    current["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    t.put("update", &path, &current).await;
    summarize(&mut t);
    t.patch(
        "json patch",
        &path,
        JSON_PATCH,
        &json!([{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}]),
    )
    .await;
    summarize(&mut t);
    let change = json!({"spec": {"template": {"spec": {"containers": [{"name": "work", "image": "nginx:1.28"}]}}}});
    t.patch("merge patch", &path, MERGE, &change).await;
    summarize(&mut t);
    t.patch("strategic merge patch", &path, STRATEGIC, &change)
        .await;
    summarize(&mut t);
    t.patch(
        "merge patch, dry run",
        &format!("{path}?dryRun=All"),
        MERGE,
        &change,
    )
    .await;
    summarize(&mut t);
    let applied = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "nginx:1.28"}]}}}});
    t.patch(
        "apply",
        &format!("{path}?fieldManager=ctl&force=true"),
        APPLY,
        &applied,
    )
    .await;
    summarize(&mut t);
    t
}

/// A Service written again without the cluster IP it was given keeps it; a headless one stays headless; a
/// suspended Job that never started may change its template's scheduling directives, and nothing else.
async fn kept_and_allowed(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let services = format!("/api/v1/namespaces/{ns}/services");
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"ports": [{"port": 80}]}});
    t.post("create service", &services, &service).await;
    summarize(&mut t);
    let mut current = t.get("get service", &format!("{services}/web")).await;
    summarize(&mut t);
    let current_ip = current["spec"]["clusterIP"].clone();
    for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        current["spec"]
            .as_object_mut()
            .expect("a spec")
            .remove(field);
    }
    current["spec"]["ports"][0]["port"] = json!(8080);
    t.put(
        "update without the cluster IP",
        &format!("{services}/web"),
        &current,
    )
    .await;
    summarize(&mut t);
    let kept = t
        .get("the cluster IP is kept", &format!("{services}/web"))
        .await;
    summarize(&mut t);
    let same = kept["spec"]["clusterIP"] == current_ip
        && kept["spec"]["clusterIPs"] == json!([current_ip]);
    t.note("the same cluster IP", json!(same));
    t.note(
        "the same IP families",
        json!([kept["spec"]["ipFamilies"], kept["spec"]["ipFamilyPolicy"]]),
    );
    let headless = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
        "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"port": 5432}]}});
    t.post("create headless service", &services, &headless)
        .await;
    summarize(&mut t);
    let created = t
        .get("get headless service", &format!("{services}/db"))
        .await;
    summarize(&mut t);
    t.note("headless clusterIPs", created["spec"]["clusterIPs"].clone());
    t.patch(
        "patch headless service",
        &format!("{services}/db"),
        MERGE,
        &json!({"spec": {"ports": [{"port": 5433}]}}),
    )
    .await;
    summarize(&mut t);

    // A Service created with a POST, then applied by the same manager with its port changed: the POST's
    // port is owned by the manager's `Update` entry, so the apply keeps it beside the new one, and two ports
    // named `http` are refused (the runtime's WebApp example meets this when its port changes).
    let created = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "posted"},
        "spec": {"ports": [{"name": "http", "port": 8080}]}});
    t.post(
        "create service by post",
        &format!("{services}?fieldManager=web"),
        &created,
    )
    .await;
    summarize(&mut t);
    let applied = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "posted"},
        "spec": {"ports": [{"name": "http", "port": 9090}]}});
    t.patch(
        "apply a changed port",
        &format!("{services}/posted?fieldManager=web&force=true"),
        APPLY,
        &applied,
    )
    .await;
    summarize(&mut t);

    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "held"},
        "spec": {"suspend": true, "template": pod_template(json!({}), Some("Never"), json!([container("work")]))}});
    t.post("create suspended job", &jobs, &job).await;
    summarize(&mut t);
    t.patch(
        "scheduling directives of a suspended job",
        &format!("{jobs}/held"),
        MERGE,
        &json!({"spec": {"template": {
            "metadata": {"labels": {"pool": "b"}, "annotations": {"note": "x"}},
            "spec": {"nodeSelector": {"pool": "b"}, "tolerations": [{"key": "k", "operator": "Exists"}]},
        }}}),
    )
    .await;
    summarize(&mut t);
    t.patch(
        "image of a suspended job",
        &format!("{jobs}/held"),
        MERGE,
        &json!({"spec": {"template": {"spec": {"containers": [{"name": "work", "image": "nginx:1.28"}]}}}}),
    )
    .await;
    summarize(&mut t);
    t
}

#[tokio::test]
async fn allocated_values_are_kept_and_scheduling_directives_may_change() {
    run(
        "allocated_values_are_kept_and_scheduling_directives_may_change",
        &[INTERNAL_VALUES_SUSPENDED],
        kept_and_allowed,
    )
    .await;
}

const INTERNAL_VALUES_SUSPENDED: Deviation = Deviation {
    name: "immutable struct values are printed as JSON, not as kube-apiserver's internal types",
    paths: &[
        "image of a suspended job:/body/message",
        "image of a suspended job:/body/causes/0/message",
    ],
};

#[tokio::test]
async fn a_job_template_is_immutable_through_every_write() {
    let messages = Deviation {
        name: "immutable struct values are printed as JSON, not as kube-apiserver's internal types",
        paths: &["*:/body/message", "*:/body/causes/0/message"],
    };
    run(
        "a_job_template_is_immutable_through_every_write",
        &[messages],
        every_write,
    )
    .await;
}
