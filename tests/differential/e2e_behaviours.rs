//! Behaviours of kube-apiserver that Kubernetes' API-machinery e2e specs meet (`cargo xtask
//! e2e-apimachinery`): the health endpoints' check lists; bodies without `apiVersion` or `kind`; duplicate
//! keys of a create or update; a
//! namespace's `status` and `finalize` subresources; an invalid `timeout` parameter.

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{
    BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS, STATUS_WRITE_METADATA_OWNERSHIP,
};
use crate::support::{MERGE, Transcript, configmaps, run, widgets};

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

async fn timeouts(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    for timeout in [
        "invalid",
        "5",
        "1e3s",
        "%201s",
        "1x",
        "1h1m",
        ".5s",
        "1.s",
        "-0",
        "0",
        "",
        "99999999999h",
    ] {
        t.get(
            &format!("list, timeout {timeout:?}"),
            &format!("{cms}?timeout={timeout}"),
        )
        .await;
    }
    t.get("discovery, invalid timeout", "/apis?timeout=bad")
        .await;
    t.get("version, invalid timeout", "/version?timeout=bad")
        .await;
    t.get("health, invalid timeout", "/healthz?timeout=bad")
        .await;
    t.post(
        "create, invalid timeout",
        &format!("{cms}?timeout=1y"),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}}),
    )
    .await;
    t.get("get of what it did not create", &format!("{cms}/t"))
        .await;
    t
}

/// A `timeout` query parameter Go cannot read as a duration is refused with 400 on every request but a
/// watch, before the request is carried out.
#[tokio::test]
async fn an_invalid_timeout_is_a_bad_request() {
    run("an_invalid_timeout_is_a_bad_request", &[], timeouts).await;
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
    t.post(
        "configmap without both",
        &cms,
        &without(cm("a"), &["apiVersion", "kind"]),
    )
    .await;
    t.post("configmap without kind", &cms, &without(cm("b"), &["kind"]))
        .await;
    t.post(
        "configmap without apiVersion",
        &cms,
        &without(cm("c"), &["apiVersion"]),
    )
    .await;
    let mut other = cm("d");
    other["apiVersion"] = json!("v2");
    t.post("configmap of another version", &cms, &other).await;
    let mut updated = without(
        t.get("get a", &format!("{cms}/a")).await,
        &["apiVersion", "kind"],
    );
    updated["data"]["k"] = json!("w");
    t.put("update without both", &format!("{cms}/a"), &updated)
        .await;
    let ws = widgets(&ns);
    let w = |name: &str| json!({"apiVersion": "diff.example.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"replicas": 1, "color": "red"}});
    t.post(
        "widget without both",
        &ws,
        &without(w("a"), &["apiVersion", "kind"]),
    )
    .await;
    t.post("widget without kind", &ws, &without(w("b"), &["kind"]))
        .await;
    t.post(
        "widget without apiVersion",
        &ws,
        &without(w("c"), &["apiVersion"]),
    )
    .await;
    let mut other = w("d");
    other["apiVersion"] = json!("diff.example.dev/v2");
    t.post("widget of another version", &ws, &other).await;
    t
}

#[tokio::test]
async fn a_body_without_its_type_takes_it_from_the_url() {
    run(
        "a_body_without_its_type_takes_it_from_the_url",
        &[],
        typeless_bodies,
    )
    .await;
}

async fn namespace_subresources(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let path = format!("/api/v1/namespaces/{ns}");
    t.get("get status", &format!("{path}/status")).await;
    let condition = json!({"type": "StatusPatch", "status": "True", "reason": "E2E", "message": "patched", "lastTransitionTime": "2026-01-01T00:00:00Z"});
    t.patch(
        "patch status with an annotation",
        &format!("{path}/status"),
        MERGE,
        &json!({"metadata": {"annotations": {"patched-status": "yes"}}, "spec": {"finalizers": []}, "status": {"conditions": [condition]}}),
    )
    .await;
    let mut status = t.get("get status again", &format!("{path}/status")).await;
    status["metadata"]["labels"]["through-status"] = json!("put");
    if let Some(conditions) = status["status"]["conditions"].as_array_mut() {
        conditions.push(json!({"type": "StatusUpdate", "status": "True", "reason": "E2E", "message": "updated", "lastTransitionTime": "2026-01-01T00:00:00Z"}));
    }
    t.put("update status", &format!("{path}/status"), &status)
        .await;
    let mut main = t.get("get", &path).await;
    main["spec"]["finalizers"] = json!(["kubernetes", "example.com/main"]);
    main["metadata"]["annotations"]["through-main"] = json!("put");
    t.put("update with other finalizers", &path, &main).await;
    let mut finalize = t.get("get before finalize", &path).await;
    finalize["spec"]["finalizers"] = json!(["kubernetes", "example.com/finalize"]);
    finalize["metadata"]["annotations"]["through-finalize"] = json!("put");
    finalize["status"]["phase"] = json!("Terminating");
    t.put("finalize", &format!("{path}/finalize"), &finalize)
        .await;
    finalize = t.get("get after finalize", &path).await;
    finalize["spec"]["finalizers"] = json!(["kubernetes"]);
    t.put("finalize again", &format!("{path}/finalize"), &finalize)
        .await;
    t.get("get finalize", &format!("{path}/finalize")).await;
    t.patch(
        "patch finalize",
        &format!("{path}/finalize"),
        MERGE,
        &json!({"spec": {}}),
    )
    .await;
    t
}

#[tokio::test]
async fn namespace_status_keeps_metadata_and_finalize_writes_finalizers() {
    run(
        "namespace_status_keeps_metadata_and_finalize_writes_finalizers",
        &[STATUS_WRITE_METADATA_OWNERSHIP],
        namespace_subresources,
    )
    .await;
}

async fn duplicate_keys(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client).with_warnings();
    let cms = configmaps(&ns);
    let body = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","name":"{name}"}},"data":{{"a":"1","a":"2"}},"unknownField":1}}"#
        )
        .into_bytes()
    };
    let json = "application/json";
    for mode in ["Strict", "Warn", "Ignore"] {
        let name = mode.to_lowercase();
        t.send_bytes(
            &format!("create under {mode}"),
            "POST",
            &format!("{cms}?fieldValidation={mode}"),
            json,
            json,
            Some(body(&name)),
        )
        .await;
    }
    t.send_bytes(
        "update under Strict",
        "PUT",
        &format!("{cms}/warn?fieldValidation=Strict"),
        json,
        json,
        Some(body("warn")),
    )
    .await;
    // Unknown and duplicate fields interleaved: reported in document order.
    let deployment = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"x"},"labels":{"app":"x"}},"spec":{"unknownField":"foo","replicas":2,"replicas":3,"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"nginx","bogus":1,"name":"c"}]}}},"zzz":1}"#;
    for mode in ["Strict", "Warn"] {
        t.send_bytes(
            &format!("a Deployment's unknown and duplicate fields under {mode}"),
            "POST",
            &format!(
                "{}?fieldValidation={mode}&dryRun=All",
                crate::support::deployments(&ns)
            ),
            json,
            json,
            Some(deployment.to_vec()),
        )
        .await;
    }
    let ws = widgets(&ns);
    let widget = br#"{"apiVersion":"diff.example.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":1,"replicas":2,"color":"red"}}"#;
    t.send_bytes(
        "widget under Strict",
        "POST",
        &format!("{ws}?fieldValidation=Strict"),
        json,
        json,
        Some(widget.to_vec()),
    )
    .await;
    t
}

#[tokio::test]
async fn duplicate_keys_of_a_create_are_reported() {
    run(
        "duplicate_keys_of_a_create_are_reported",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        duplicate_keys,
    )
    .await;
}
