//! Media types neither server speaks: CBOR is behind kube-apiserver 1.35's alpha `CBORServingAndStorage`
//! feature gate (off by default), so a CBOR body is refused with 415 and a CBOR-only `Accept` with 406, while
//! an `Accept` that also names JSON gets JSON; the embedded server answers alike.

use kube::Client;
use serde_json::json;

use crate::support::{Transcript, configmap, configmaps, run, widget, widgets};

const CBOR: &str = "application/cbor";

async fn cbor(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cm = configmap("c", json!({"a": "1"}));
    t.send(
        "create with a CBOR body",
        "POST",
        &configmaps(&ns),
        CBOR,
        Some(&cm),
    )
    .await;
    t.post("create", &configmaps(&ns), &cm).await;
    let path = format!("{}/c", configmaps(&ns));
    t.send_accepting("get accepting CBOR only", "GET", &path, CBOR, "", None)
        .await;
    t.send_accepting(
        "list accepting CBOR only",
        "GET",
        &configmaps(&ns),
        CBOR,
        "",
        None,
    )
    .await;
    t.send_accepting(
        "get accepting CBOR, else JSON",
        "GET",
        &path,
        "application/cbor, application/json;q=0.5",
        "",
        None,
    )
    .await;
    t.send(
        "merge patch with a CBOR body",
        "PATCH",
        &path,
        CBOR,
        Some(&json!({"data": {"b": "2"}})),
    )
    .await;
    t.send_accepting(
        "watch accepting CBOR sequences only",
        "GET",
        &format!("{}?watch=true&timeoutSeconds=1", configmaps(&ns)),
        "application/cbor-seq",
        "",
        None,
    )
    .await;
    t.get("unchanged", &path).await;

    // A custom resource: served by apiextensions-apiserver's own handler, not go-restful's routes.
    let w = widget("w", 1, "red");
    t.send(
        "create a widget with a CBOR body",
        "POST",
        &widgets(&ns),
        CBOR,
        Some(&w),
    )
    .await;
    t.post("create a widget", &widgets(&ns), &w).await;
    let wpath = format!("{}/w", widgets(&ns));
    t.send_accepting(
        "get a widget accepting CBOR only",
        "GET",
        &wpath,
        CBOR,
        "",
        None,
    )
    .await;
    t.send_accepting(
        "list widgets accepting CBOR only",
        "GET",
        &widgets(&ns),
        CBOR,
        "",
        None,
    )
    .await;
    t.send(
        "merge patch a widget with a CBOR body",
        "PATCH",
        &wpath,
        CBOR,
        Some(&json!({"spec": {"replicas": 2}})),
    )
    .await;
    t.send_accepting(
        "watch widgets accepting CBOR sequences only",
        "GET",
        &format!("{}?watch=true&timeoutSeconds=1", widgets(&ns)),
        "application/cbor-seq",
        "",
        None,
    )
    .await;
    t
}

#[tokio::test]
async fn cbor_is_refused_as_kube_apiserver_refuses_it_with_its_feature_gate_off() {
    run(
        "cbor_is_refused_as_kube_apiserver_refuses_it_with_its_feature_gate_off",
        &[],
        cbor,
    )
    .await;
}
