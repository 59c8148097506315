//! Behaviours of kube-apiserver that Kubernetes' API-machinery e2e specs meet (`cargo xtask
//! e2e-apimachinery`): the health endpoints' check lists; bodies without `apiVersion` or `kind`.

use kube::Client;
use serde_json::{Value, json};

use crate::support::{Transcript, configmaps, run, widgets};

async fn health(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    for path in [
        "/healthz",
        "/healthz?verbose",
        "/livez?verbose=1",
        "/readyz?verbose=true",
        "/livez?verbose&exclude=etcd&exclude=nope",
        "/readyz?exclude=etcd",
        "/healthz/etcd",
        "/readyz/shutdown",
        "/livez/poststarthook/rbac/bootstrap-roles",
        "/livez/nope",
    ] {
        t.get(&format!("GET {path}"), path).await;
    }
    t
}

#[tokio::test]
async fn health_endpoints_list_their_checks() {
    run("health_endpoints_list_their_checks", &[], health).await;
}

/// `body` without the fields named.
fn without(mut body: Value, fields: &[&str]) -> Value {
    for f in fields {
        body.as_object_mut().map(|o| o.remove(*f));
    }
    body
}

async fn typeless_bodies(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let cm = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}});
    t.post("configmap without both", &cms, &without(cm("a"), &["apiVersion", "kind"])).await;
    t.post("configmap without kind", &cms, &without(cm("b"), &["kind"])).await;
    t.post("configmap without apiVersion", &cms, &without(cm("c"), &["apiVersion"])).await;
    let mut other = cm("d");
    other["apiVersion"] = json!("v2");
    t.post("configmap of another version", &cms, &other).await;
    let mut updated = without(t.get("get a", &format!("{cms}/a")).await, &["apiVersion", "kind"]);
    updated["data"]["k"] = json!("w");
    t.put("update without both", &format!("{cms}/a"), &updated).await;
    let ws = widgets(&ns);
    let w = |name: &str| json!({"apiVersion": "diff.example.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"replicas": 1, "color": "red"}});
    t.post("widget without both", &ws, &without(w("a"), &["apiVersion", "kind"])).await;
    t.post("widget without kind", &ws, &without(w("b"), &["kind"])).await;
    t.post("widget without apiVersion", &ws, &without(w("c"), &["apiVersion"])).await;
    let mut other = w("d");
    other["apiVersion"] = json!("diff.example.dev/v2");
    t.post("widget of another version", &ws, &other).await;
    t
}

#[tokio::test]
async fn a_body_without_its_type_takes_it_from_the_url() {
    run("a_body_without_its_type_takes_it_from_the_url", &[], typeless_bodies).await;
}
