//! Rules of pod templates and workloads beyond `builtin_validation`'s: pod and container security contexts,
//! each with a valid control, an invalid create and a forbidden update, on both servers.

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
