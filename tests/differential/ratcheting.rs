//! CRD validation ratcheting (the API-machinery e2e specs `CRDValidationRatcheting`): an object stored
//! under a loose schema, then updated under a stricter one. OpenAPI schema errors (`enum`, `maxLength`,
//! `maximum`) under values the update leaves unchanged are ratcheted: a property, an item of a map list
//! correlated by its key, a set or atomic list left whole; CEL rule errors on the items of a set or an
//! atomic list the update changes are not (their items do not correlate), those under a changed value
//! neither.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::support::{MERGE, Transcript, run};

const CRD_NAME: &str = "ratchets.ratchet.example.dev";

fn crd(spec: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": "ratchet.example.dev", "scope": "Namespaced",
            "names": {"kind": "Ratchet", "plural": "ratchets", "singular": "ratchet"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": spec}
            }}}]
        }
    })
}

fn loose() -> Value {
    json!({"type": "object", "properties": {
        "color": {"type": "string"},
        "size": {"type": "integer"},
        "other": {"type": "string"},
        "nested": {"type": "object", "properties": {"name": {"type": "string"}, "count": {"type": "integer"}}},
        "setArray": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "atomicArray": {"type": "array", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "protocol": {"type": "string"}, "port": {"type": "integer"}}}}
    }})
}

fn strict() -> Value {
    let not_foo = json!([{"rule": "self != 'foo'"}]);
    json!({"type": "object", "properties": {
        "color": {"type": "string", "enum": ["red", "blue"]},
        "size": {"type": "integer", "maximum": 10},
        "other": {"type": "string"},
        "nested": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}, "count": {"type": "integer"}}},
        "setArray": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "string", "x-kubernetes-validations": not_foo}},
        "atomicArray": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": not_foo}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "protocol": {"type": "string", "enum": ["TCP", "UDP"]},
                "port": {"type": "integer"}}}}
    }})
}

fn api(client: &Client, ns: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("ratchet.example.dev", "v1", "Ratchet");
    Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&gvk, "ratchets"),
    )
}

/// Creates or replaces the CRD with `spec` as its spec's schema, and waits (bounded) until a dry-run
/// create shows it in force (`strict`: a color outside the enum is refused).
async fn install(client: &Client, ns: &str, spec: Value, strict: bool) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let wanted: CustomResourceDefinition = serde_json::from_value(crd(spec)).expect("a CRD");
    match crds.get_opt(CRD_NAME).await.expect("the CRD is read") {
        None => {
            crds.create(&PostParams::default(), &wanted)
                .await
                .expect("the CRD is created");
        }
        Some(_) => {
            crds.patch(
                CRD_NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": wanted.spec})),
            )
            .await
            .expect("the CRD is updated");
        }
    }
    let probe: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "ratchet.example.dev/v1", "kind": "Ratchet", "metadata": {"name": "probe"},
        "spec": {"color": "green"}
    }))
    .expect("an object");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let api = api(client, ns);
    for _ in 0..400 {
        match api.create(&dry, &probe).await {
            Ok(_) if !strict => return,
            Err(kube::Error::Api(ref s)) if strict && s.code == 422 => return,
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Ratchet CRD (strict: {strict}) is not served");
}

fn stored(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "ratchet.example.dev/v1", "kind": "Ratchet", "metadata": {"name": name}, "spec": spec})
}

async fn ratcheting(client: Client, ns: String) -> Transcript {
    install(&client, &ns, loose(), false).await;
    let mut t = Transcript::new(client.clone()).with_warnings();
    let list = format!("/apis/ratchet.example.dev/v1/namespaces/{ns}/ratchets");
    // One object per kind of failure, so that no refused update also carries another object's ratcheted
    // rule warnings (kube-apiserver sends those with a 422 too, the in-memory server only with a success).
    let schema_spec = json!({
        "color": "green", "size": 20, "other": "a", "nested": {"name": "toolong", "count": 1},
        "ports": [{"name": "a", "protocol": "SCTP", "port": 1}, {"name": "b", "protocol": "TCP", "port": 2}]
    });
    t.post("create r", &list, &stored("r", schema_spec)).await;
    t.post(
        "create s",
        &list,
        &stored("s", json!({"setArray": ["foo", "bar"]})),
    )
    .await;
    t.post(
        "create a",
        &list,
        &stored("a", json!({"atomicArray": ["foo", "bar"]})),
    )
    .await;
    install(&client, &ns, strict(), true).await;
    let label = json!({"metadata": {"labels": {"a": "b"}}});
    for (label, name, patch) in [
        ("a label only", "r", label.clone()),
        ("another field", "r", json!({"spec": {"other": "b"}})),
        (
            "a nested sibling",
            "r",
            json!({"spec": {"nested": {"count": 2}}}),
        ),
        (
            "a map list item's other field",
            "r",
            json!({"spec": {"ports": [{"name": "a", "protocol": "SCTP", "port": 5}, {"name": "b", "protocol": "TCP", "port": 2}]}}),
        ),
        (
            "the enum value changed",
            "r",
            json!({"spec": {"color": "pink"}}),
        ),
        (
            "the maximum value changed",
            "r",
            json!({"spec": {"size": 30}}),
        ),
        (
            "the nested value changed",
            "r",
            json!({"spec": {"nested": {"name": "longer"}}}),
        ),
        (
            "a map list item's invalid field changed",
            "r",
            json!({"spec": {"ports": [{"name": "a", "protocol": "QUIC", "port": 1}, {"name": "b", "protocol": "TCP", "port": 2}]}}),
        ),
        ("a set left whole", "s", label.clone()),
        (
            "a set item added",
            "s",
            json!({"spec": {"setArray": ["foo", "bar", "baz"]}}),
        ),
        ("an atomic list left whole", "a", label.clone()),
        (
            "an atomic list item added",
            "a",
            json!({"spec": {"atomicArray": ["foo", "bar", "baz"]}}),
        ),
    ] {
        t.patch(
            &format!("update {name}: {label}"),
            &format!("{list}/{name}"),
            MERGE,
            &patch,
        )
        .await;
    }
    for name in ["r", "s", "a"] {
        t.get(&format!("stored {name}"), &format!("{list}/{name}"))
            .await;
        t.delete(&format!("delete {name}"), &format!("{list}/{name}"))
            .await;
    }
    t
}

/// Schema errors on unchanged correlatable values are ratcheted; rule errors on the items of a changed set
/// or atomic list are not.
#[tokio::test]
async fn crd_validation_ratchets_as_kube_apiserver_does() {
    run(
        "crd_validation_ratchets_as_kube_apiserver_does",
        &[],
        ratcheting,
    )
    .await;
}
