//! `matchPolicy` of admission webhooks on both servers, with a CRD served in two versions (`v1beta1` and
//! `v1`, the storage version, no conversion webhook) and webhooks whose answers the scenario writes
//! (`hook_server.rs`). Webhooks whose rules name one version, with `matchPolicy: Equivalent` (the default)
//! or `Exact`, meet creates and updates through either version: an `Equivalent` webhook is called for the
//! other version too and sees the object (and old object) converted to the version it named, with `kind` and
//! `resource` of that version and `requestKind`/`requestResource` of the request; an `Exact` one is not
//! called. Each webhook tells what it saw in a warning (the validating ones answer one after the other),
//! and the mutating ones write it into the object (through a patch of the version they saw). The first
//! mutating webhook also removes `spec.color`, which the schema defaults: the next one sees it defaulted
//! again.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::hook_server::{DELAY, HookServer, uninstall, with_patch};
use crate::support::{Transcript, run};

/// The webhooks: name (also the path), whether it mutates, `matchPolicy`, the version its rule names.
const HOOKS: &[(&str, bool, &str, &str)] = &[
    ("m-equivalent", true, "Equivalent", "v1"),
    ("m-exact", true, "Exact", "v1"),
    ("v-equivalent", false, "Equivalent", "v1"),
    ("v-exact", false, "Exact", "v1"),
    ("v-beta", false, "Equivalent", "v1beta1"),
];

fn crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"color": {"type": "string", "default": "red"}}},
    }}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.policy.example.dev"},
        "spec": {
            "group": "policy.example.dev", "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema},
            ],
        },
    })
}

fn things(version: &str, ns: &str) -> String {
    format!("/apis/policy.example.dev/{version}/namespaces/{ns}/things")
}

fn thing(version: &str, name: &str, case: &str) -> Value {
    json!({
        "apiVersion": format!("policy.example.dev/{version}"), "kind": "Thing",
        "metadata": {"name": name, "labels": {"case": case}},
        "spec": {"size": 1},
    })
}

/// What a webhook saw: the request's kinds and resources and the objects' apiVersions.
fn seen(request: &Value) -> String {
    let gvk = |v: &Value| {
        format!(
            "{}/{}/{}",
            v["group"].as_str().unwrap_or_default(),
            v["version"].as_str().unwrap_or_default(),
            v.get("kind")
                .or(v.get("resource"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        )
    };
    format!(
        "kind {}, resource {}, requestKind {}, requestResource {}, object {}, oldObject {}, color {}",
        gvk(&request["kind"]),
        gvk(&request["resource"]),
        gvk(&request["requestKind"]),
        gvk(&request["requestResource"]),
        request["object"]["apiVersion"].as_str().unwrap_or("-"),
        request["oldObject"]["apiVersion"].as_str().unwrap_or("-"),
        request["object"]["spec"]["color"].as_str().unwrap_or("-"),
    )
}

fn answer(path: &str, request: &Value) -> Value {
    let name = path.trim_start_matches('/');
    match request["object"]["metadata"]["labels"]["case"].as_str() {
        Some("mprobe") if name.starts_with("m-") => {
            return json!({"allowed": false, "status": {"message": "probed", "code": 409}});
        }
        Some("vprobe") if name.starts_with("v-") => {
            return json!({"allowed": false, "status": {"message": "probed", "code": 400}});
        }
        Some("vprobe") => return json!({"allowed": true}),
        _ => {}
    }
    let text = format!("{name} saw {}", seen(request));
    let response = json!({"allowed": true, "warnings": [text]});
    if name.starts_with("m-") {
        let mut patch = vec![json!({"op": "add", "path": format!("/spec/{name}"), "value": text})];
        // The first removes the defaulted color: the next sees it defaulted again.
        if name == "m-equivalent" {
            patch.push(json!({"op": "remove", "path": "/spec/color"}));
        }
        let patch = Value::Array(patch);
        return with_patch(response, &patch);
    }
    // kube-apiserver calls validating webhooks side by side and writes their warnings as they answer: each
    // answers later than the one before it, so that the warnings come in the webhooks' order.
    let mut response = response;
    let place = HOOKS.iter().filter(|h| !h.1).position(|h| h.0 == name);
    response[DELAY] = json!(300 * place.unwrap_or_default());
    response
}

/// Installs the CRD and the configurations for `ns`; waits (bounded) until both versions are served and
/// the webhooks are in force.
async fn install(client: &Client, server: &HookServer, ns: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds
        .create(
            &PostParams::default(),
            &serde_json::from_value(crd()).expect("a CRD"),
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("the Thing CRD: {e}"),
    }
    let hook = |(name, _, policy, version): &(&str, bool, &str, &str)| {
        json!({
            "name": format!("{name}.policy.example.dev"),
            "clientConfig": server.client_config(&format!("/{name}")),
            "rules": [{"apiGroups": ["policy.example.dev"], "apiVersions": [version],
                       "resources": ["things"], "operations": ["CREATE", "UPDATE"]}],
            "matchPolicy": policy,
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 10,
        })
    };
    let of = |mutating: bool| -> Vec<Value> {
        HOOKS.iter().filter(|h| h.1 == mutating).map(hook).collect()
    };
    let name = format!("policy-{ns}");
    let m: MutatingWebhookConfiguration =
        serde_json::from_value(json!({"metadata": {"name": name}, "webhooks": of(true)}))
            .expect("a configuration");
    let v: ValidatingWebhookConfiguration =
        serde_json::from_value(json!({"metadata": {"name": name}, "webhooks": of(false)}))
            .expect("a configuration");
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &m)
        .await
        .expect("the mutating configuration is created");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &v)
        .await
        .expect("the validating configuration is created");
    // In force when probes through either version reach the mutating webhooks (which refuse `mprobe`) and
    // the validating ones (which refuse `vprobe`).
    let probe = |version: &str, case: &str| {
        let request = http::Request::post(format!("{}?dryRun=All", things(version, ns)))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&thing(version, "probe", case)).expect("JSON"))
            .expect("a request");
        let client = client.clone();
        async move {
            match client.request::<Value>(request).await {
                Err(kube::Error::Api(s)) => s.code,
                _ => 0,
            }
        }
    };
    for _ in 0..400 {
        let mut codes = Vec::new();
        for version in ["v1", "v1beta1"] {
            codes.push(probe(version, "mprobe").await);
            codes.push(probe(version, "vprobe").await);
        }
        if codes == [409, 400, 409, 400] {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the webhooks are not in force");
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let server = HookServer::start(Arc::new(answer)).await;
    install(&client, &server, &ns).await;
    server.take();
    let mut t = Transcript::new(client.clone()).with_warnings();
    let calls = |t: &mut Transcript, label: &str| {
        let mut called: Vec<String> = server.take().into_iter().map(|r| r.path).collect();
        called.sort();
        t.note(&format!("{label}: the webhooks called"), json!(called));
    };
    for version in ["v1beta1", "v1"] {
        let label = format!("a create through {version}");
        let created = t
            .post(&label, &things(version, &ns), &thing(version, version, "x"))
            .await;
        calls(&mut t, &label);
        let mut updated = created.clone();
        updated["spec"]["size"] = json!(2);
        let label = format!("an update through {version}");
        t.put(
            &label,
            &format!("{}/{version}", things(version, &ns)),
            &updated,
        )
        .await;
        calls(&mut t, &label);
    }
    for version in ["v1beta1", "v1"] {
        t.get(
            &format!("the list through {version}"),
            &things(version, &ns),
        )
        .await;
    }
    uninstall(&client, &format!("policy-{ns}")).await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_match_policy() {
    run("webhook_match_policy", &[], scenario).await;
}
