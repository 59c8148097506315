//! Rules of pod templates and workloads beyond `builtin_validation`'s: pod and container security contexts,
//! and label selectors' syntax in the `apps` workloads, Jobs and PodDisruptionBudgets, each with a valid
//! control, an invalid create and a forbidden update, on both servers.

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::{Case, core, run_cases};
use crate::support::{Transcript, run};

fn deployment(name: &str, pod_spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}}})
}

fn security_cases() -> Vec<Case> {
    vec![
        Case {
            name: "security contexts",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            valid: deployment(
                "sec",
                json!({"securityContext": {"runAsUser": 1000, "fsGroup": 2000, "supplementalGroups": [3000],
                        "sysctls": [{"name": "net.ipv4.ip_local_port_range", "value": "1024 65000"}],
                        "seccompProfile": {"type": "RuntimeDefault"}, "fsGroupChangePolicy": "OnRootMismatch"},
                    "containers": [{"name": "web", "image": "nginx:1.27", "securityContext": {
                        "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true,
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/a.json"},
                        "appArmorProfile": {"type": "RuntimeDefault"}}}]}),
            ),
            invalid: Some(deployment(
                "sec-bad",
                json!({"hostNetwork": true, "hostPID": true, "shareProcessNamespace": true,
                "securityContext": {"runAsUser": -1, "runAsGroup": 2147483648i64, "fsGroup": -5,
                    "supplementalGroups": [1, -1],
                    "sysctls": [{"name": "Bad Name", "value": "1"}, {"name": "", "value": "1"},
                        {"name": "net.core.somaxconn", "value": "1"}, {"name": "net.core.somaxconn", "value": "2"}],
                    "fsGroupChangePolicy": "Sometimes", "seccompProfile": {"type": "Nope"},
                    "appArmorProfile": {"type": "Localhost"}, "supplementalGroupsPolicy": "Loose",
                    "seLinuxChangePolicy": "Whatever",
                    "windowsOptions": {"gmsaCredentialSpecName": "Bad_Name", "runAsUserName": "a\\b\\c"}},
                "containers": [
                    {"name": "a", "image": "nginx:1.27", "securityContext": {"runAsUser": -2, "procMount": "Weird",
                        "seccompProfile": {"type": "RuntimeDefault", "localhostProfile": "x"},
                        "appArmorProfile": {"type": "Unconfined", "localhostProfile": "y"}}},
                    {"name": "b", "image": "nginx:1.27", "securityContext": {"procMount": "Unmasked",
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "/abs/../p"},
                        "appArmorProfile": {"type": "Localhost", "localhostProfile": " padded"}}},
                ]}),
            )),
            forbidden: Some(
                json!({"spec": {"template": {"spec": {"securityContext": {"runAsGroup": -1}}}}}),
            ),
        },
        Case {
            name: "privilege escalation",
            collection: |ns| core("pods")(ns),
            valid: json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "priv"},
                "spec": {"containers": [{"name": "a", "image": "nginx:1.27",
                    "securityContext": {"privileged": true}}]}}),
            invalid: Some(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "priv-bad"},
                "spec": {"hostIPC": true, "securityContext": {"sysctls": [{"name": "kernel/shmmax", "value": "1"}]},
                    "containers": [{"name": "a", "image": "nginx:1.27",
                    "securityContext": {"privileged": true, "allowPrivilegeEscalation": false,
                        "capabilities": {"add": ["CAP_SYS_ADMIN"]}}}]}}),
            ),
            forbidden: None,
        },
    ]
}

async fn security(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, security_cases()).await;
    t
}

#[tokio::test]
async fn security_context_rules_refuse_alike() {
    run("security_context_rules_refuse_alike", &[], security).await;
}

fn bad_expressions() -> Value {
    json!([
        {"key": "bad key", "operator": "In", "values": []},
        {"key": "tier", "operator": "Exists", "values": ["x"]},
        {"key": "t", "operator": "Has"},
        {"key": "u", "operator": "NotIn", "values": ["-bad"]},
    ])
}

fn workload(kind: &str, name: &str, selector: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
        "spec": {"selector": selector,
            "template": {"metadata": {"labels": {"app": "a", "tier": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

fn selector_cases() -> Vec<Case> {
    let good = json!({"matchLabels": {"app": "a"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]});
    let bad = json!({"matchLabels": {"app": "a"}, "matchExpressions": bad_expressions()});
    let changed = json!({"spec": {"selector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}}});
    vec![
        Case {
            name: "deployment selector syntax",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/deployments"),
            valid: workload("Deployment", "sel", good.clone()),
            invalid: Some(workload("Deployment", "sel-bad", bad.clone())),
            forbidden: Some(changed.clone()),
        },
        Case {
            name: "replicaset selector syntax",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            valid: workload("ReplicaSet", "sel", good.clone()),
            invalid: Some(workload("ReplicaSet", "sel-bad", bad.clone())),
            forbidden: Some(changed.clone()),
        },
        Case {
            name: "statefulset selector syntax",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/statefulsets"),
            valid: workload("StatefulSet", "sel", good.clone()),
            invalid: Some(workload("StatefulSet", "sel-bad", bad.clone())),
            forbidden: Some(changed.clone()),
        },
        Case {
            name: "daemonset selector syntax",
            collection: |ns| format!("/apis/apps/v1/namespaces/{ns}/daemonsets"),
            valid: workload("DaemonSet", "sel", good.clone()),
            invalid: Some(workload("DaemonSet", "sel-bad", bad.clone())),
            forbidden: Some(changed.clone()),
        },
        Case {
            name: "job manual selector syntax",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/jobs"),
            valid: json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "sel"},
                "spec": {"manualSelector": true, "selector": good.clone(),
                    "template": {"metadata": {"labels": {"app": "a", "tier": "web"}},
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox:1.36"}]}}}}),
            invalid: Some(
                json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "sel-bad"},
                "spec": {"manualSelector": true, "selector": bad.clone(),
                    "template": {"metadata": {"labels": {"app": "a", "tier": "web"}},
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox:1.36"}]}}}}),
            ),
            forbidden: Some(changed),
        },
        Case {
            name: "poddisruptionbudget selector syntax",
            collection: |ns| format!("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"),
            valid: json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "sel"},
                "spec": {"minAvailable": 1, "selector": good}}),
            invalid: Some(
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "sel-bad"},
                "spec": {"minAvailable": 1, "selector": bad}}),
            ),
            forbidden: Some(
                json!({"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}}}),
            ),
        },
    ]
}

async fn selectors(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, selector_cases()).await;
    t
}

#[tokio::test]
async fn selector_rules_refuse_alike() {
    run("selector_rules_refuse_alike", &[], selectors).await;
}

fn cron_job(name: &str, time_zone: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
        "spec": {"schedule": "0 * * * *", "timeZone": time_zone, "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox:1.36"}]}}}}}})
}

fn time_zone_cases() -> Vec<Case> {
    vec![
        Case {
            name: "cronjob time zone",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
            valid: cron_job("tz", "Europe/Berlin"),
            invalid: Some(cron_job("tz-bad", "Mars/Olympus_Mons")),
            forbidden: Some(json!({"spec": {"timeZone": "Local"}})),
        },
        Case {
            name: "cronjob time zone syntax",
            collection: |ns| format!("/apis/batch/v1/namespaces/{ns}/cronjobs"),
            valid: cron_job("tz2", "UTC"),
            invalid: Some(cron_job("tz2-bad", "-bad/..")),
            forbidden: Some(json!({"spec": {"timeZone": ""}})),
        },
    ]
}

async fn time_zones(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, time_zone_cases()).await;
    t
}

#[tokio::test]
async fn cron_job_time_zones_refuse_alike() {
    run("cron_job_time_zones_refuse_alike", &[], time_zones).await;
}
