//! Ingress and IngressClass rules (`networking.k8s.io/v1`): hosts, paths and path types, backends, default
//! backend, TLS, class name and annotation; an IngressClass's controller and parameters. Each with a valid
//! control, an invalid create and a forbidden update, on both servers.

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::{Case, run_cases, summarize};
use crate::support::{Transcript, run};

fn ingress(name: &str, annotations: Value, spec: Value) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": name, "annotations": annotations}, "spec": spec})
}

fn service(name: &str, port: Value) -> Value {
    json!({"service": {"name": name, "port": port}})
}

fn path(path_type: Option<&str>, path: &str, backend: Value) -> Value {
    let mut p = json!({"path": path, "backend": backend});
    if let Some(t) = path_type {
        p["pathType"] = json!(t);
    }
    p
}

fn cases() -> Vec<Case> {
    let web = service("web", json!({"number": 80}));
    let valid = ingress(
        "ing",
        json!({}),
        json!({"ingressClassName": "nginx",
            "defaultBackend": service("fallback", json!({"name": "http"})),
            "rules": [
                {"host": "example.com", "http": {"paths": [
                    path(Some("Prefix"), "/app", web.clone()),
                    path(Some("Exact"), "/exact", service("web", json!({"name": "http"}))),
                    path(Some("ImplementationSpecific"), "", web.clone()),
                ]}},
                {"host": "*.example.com", "http": {"paths": [path(Some("Prefix"), "/", web.clone())]}},
                {"http": {"paths": [path(Some("Exact"), "/r", json!({"resource":
                    {"apiGroup": "example.dev", "kind": "Bucket", "name": "assets"}}))]}},
            ],
            "tls": [{"hosts": ["example.com", "*.example.com"], "secretName": "tls-cert"}, {"hosts": []}]}),
    );
    let invalid = ingress(
        "ing-bad",
        json!({"kubernetes.io/ingress.class": "other"}),
        json!({"ingressClassName": "Bad_Class",
            "defaultBackend": {},
            "rules": [
                {"host": "10.0.0.1", "http": {"paths": []}},
                {"host": "*.*.example.com", "http": {"paths": [
                    path(None, "/a", web.clone()),
                    path(Some("Exact"), "relative//a/./b/../%2f/..", web.clone()),
                    path(Some("Prefix"), "/end/.", web.clone()),
                    path(Some("ImplementationSpecific"), "rel", web.clone()),
                    path(Some("Regex"), "/x", web.clone()),
                ]}},
                {"host": "Bad_Host", "http": {"paths": [
                    path(Some("Prefix"), "/s", json!({"resource": {"kind": "K", "name": "n"},
                        "service": {"name": "s", "port": {"number": 80}}})),
                    path(Some("Prefix"), "/t", service("", json!({"name": "http", "number": 80}))),
                    path(Some("Prefix"), "/u", service("9svc", json!({"name": "Bad_Port"}))),
                    path(Some("Prefix"), "/v", service("svc", json!({"number": 70000}))),
                    path(Some("Prefix"), "/w", service("svc", json!({}))),
                    path(Some("Prefix"), "/y", json!({"resource": {"apiGroup": "Bad_Group", "kind": "a/b", "name": ""}})),
                ]}},
            ],
            "tls": [{"hosts": ["*", "UPPER.example.com"], "secretName": "Bad_Secret"}]}),
    );
    let empty = ingress("ing-empty", json!({}), json!({}));
    let class = |name: &str, spec: Value| {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": name}, "spec": spec})
    };
    vec![
        Case {
            name: "ingress rules",
            collection: |ns| format!("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses"),
            valid,
            invalid: Some(invalid),
            forbidden: Some(
                json!({"spec": {"rules": [{"host": "a..b", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web"}}}]}}],
                "tls": [{"secretName": "Bad"}]}}),
            ),
        },
        Case {
            name: "ingress without rules or default backend",
            collection: |ns| format!("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses"),
            valid: ingress(
                "ing-default",
                json!({}),
                json!({"defaultBackend": service("web", json!({"number": 8080}))}),
            ),
            invalid: Some(empty),
            forbidden: Some(json!({"spec": {"defaultBackend": null}})),
        },
        Case {
            name: "ingress class",
            collection: |_| "/apis/networking.k8s.io/v1/ingressclasses".into(),
            valid: class(
                "ingress-validation-ic",
                json!({"controller": "example.dev/ingress",
                    "parameters": {"apiGroup": "example.dev", "kind": "Params", "name": "p"}}),
            ),
            invalid: Some(class(
                "ingress-validation-ic-bad",
                json!({"controller": "Bad_Domain/a b",
                    "parameters": {"kind": "", "name": "n", "scope": "Namespace"}}),
            )),
            forbidden: Some(json!({"spec": {"controller": "example.dev/other",
                "parameters": {"scope": "Elsewhere", "namespace": "x"}}})),
        },
        Case {
            name: "ingress class parameters",
            collection: |_| "/apis/networking.k8s.io/v1/ingressclasses".into(),
            valid: class(
                "ingress-validation-ic2",
                json!({"controller": "example.dev/ns",
                    "parameters": {"kind": "Params", "name": "p", "scope": "Namespace", "namespace": "default"}}),
            ),
            invalid: Some(class(
                "ingress-validation-ic2-bad",
                json!({"controller": "nodomain",
                    "parameters": {"kind": "P", "name": "n", "scope": "Cluster", "namespace": "x"}}),
            )),
            forbidden: Some(json!({"spec": {"parameters": {"namespace": null}}})),
        },
    ]
}

async fn rules(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, cases()).await;
    // Cluster-scoped objects outlive the scenario's namespace on the shared control plane.
    for name in ["ingress-validation-ic", "ingress-validation-ic2"] {
        t.delete(
            &format!("delete ingress class {name}"),
            &format!("/apis/networking.k8s.io/v1/ingressclasses/{name}"),
        )
        .await;
        summarize(&mut t);
    }
    t
}

#[tokio::test]
async fn ingress_rules_refuse_alike() {
    run("ingress_rules_refuse_alike", &[], rules).await;
}
