//! Protobuf request bodies beyond creates, as client-go's typed clients send them, compared between the
//! servers (status, `Content-Type` and body, protobuf answers read by `protobuf_wire.rs`):
//!
//! - `DeleteOptions` in protobuf, in the envelope of the client's own group-version (`v1`, `apps/v1`) or
//!   `meta.k8s.io/v1`: foreground propagation (the object kept with its finalizer), a uid precondition that
//!   does not match (409), a dry run, a delete-collection; malformed ones (a truncated message, a wrong wire
//!   type, another kind in the envelope, options `ValidateDeleteOptions` refuses); the same options as YAML,
//!   JSON naming another kind, and a body in a media type not read (415);
//! - a Deployment's `status` written in protobuf, and its `scale` (an `autoscaling/v1` Scale), and a custom
//!   resource's `scale` in protobuf (apiextensions-apiserver reads it);
//! - a CustomResourceDefinition created from protobuf, and deleted with protobuf `DeleteOptions`.

use k8s_pb::apimachinery::pkg::apis::meta::v1::{DeleteOptions, Preconditions};
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use kube::Client;
use kubewright::testing::apiserver::encode_protobuf;
use prost::Message;
use serde_json::{Value, json};

use crate::protobuf::{PB, PB_JSON, exchange, json_body};
use crate::support::{Transcript, deployment, deployments, run, widget, widgets};

/// The envelope client-go writes around `DeleteOptions` (or any raw message).
fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut bytes = b"k8s\0".to_vec();
    bytes.extend(unknown.encode_to_vec());
    bytes
}

fn options(api_version: &str, options: DeleteOptions) -> Option<(&'static str, Vec<u8>)> {
    Some((
        PB,
        envelope(api_version, "DeleteOptions", options.encode_to_vec()),
    ))
}

fn policy(policy: &str) -> DeleteOptions {
    DeleteOptions {
        propagation_policy: Some(policy.into()),
        ..Default::default()
    }
}

fn encoded(object: &Value) -> Option<(&'static str, Vec<u8>)> {
    Some((
        PB,
        encode_protobuf(object).expect("a built-in kind encodes"),
    ))
}

async fn create_configmap(c: &Client, cms: &str, name: &str) {
    let cm = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": name, "labels": { "pb": "del" } } });
    exchange(c, "POST", cms, "application/json", json_body(&cm)).await;
}

/// The managedFields of a Deployment differ in shape (`BUILTIN_MANAGED_FIELDS_SHAPE` of `main.rs`).
const DELETE_DEVIATIONS: &[crate::support::Deviation] = &[crate::support::Deviation {
    name: "BUILTIN_MANAGED_FIELDS_SHAPE",
    paths: &[
        "a deployment (apps/v1 envelope):/body/body/object/metadata/managedFields/*/fieldsV1*",
    ],
}];

#[tokio::test]
async fn protobuf_delete_options() {
    run(
        "protobuf_delete_options",
        DELETE_DEVIATIONS,
        |client, ns| async move {
            let c = client.clone();
            let mut t = Transcript::new(client);
            let cms = format!("/api/v1/namespaces/{ns}/configmaps");
            let item = |name: &str| format!("{cms}/{name}");

            create_configmap(&c, &cms, "fg").await;
            t.note(
                "foreground (v1 envelope)",
                exchange(
                    &c,
                    "DELETE",
                    &item("fg"),
                    PB_JSON,
                    options("v1", policy("Foreground")),
                )
                .await,
            );
            t.note(
                "foreground: kept",
                exchange(&c, "GET", &item("fg"), "application/json", None).await,
            );
            let release = Some((
                "application/merge-patch+json",
                br#"{"metadata":{"finalizers":null}}"#.to_vec(),
            ));
            t.note(
                "foreground: finalizer removed",
                exchange(&c, "PATCH", &item("fg"), "application/json", release).await,
            );

            create_configmap(&c, &cms, "pre").await;
            let mismatch = DeleteOptions {
                preconditions: Some(Preconditions {
                    uid: Some("not-the-uid".into()),
                    resource_version: None,
                }),
                ..Default::default()
            };
            t.note(
                "precondition mismatch",
                exchange(&c, "DELETE", &item("pre"), PB_JSON, options("v1", mismatch)).await,
            );
            let dry = DeleteOptions {
                dry_run: vec!["All".into()],
                ..Default::default()
            };
            t.note(
                "dry run (meta.k8s.io/v1 envelope)",
                exchange(
                    &c,
                    "DELETE",
                    &item("pre"),
                    "application/json",
                    options("meta.k8s.io/v1", dry),
                )
                .await,
            );
            t.note(
                "dry run: kept",
                exchange(&c, "GET", &item("pre"), "application/json", None).await,
            );

            let malformed: [(&str, Vec<u8>); 6] = [
                (
                    "truncated",
                    envelope("v1", "DeleteOptions", b"\x22\x0aFore".to_vec()),
                ),
                (
                    "wrong wire type",
                    envelope("v1", "DeleteOptions", b"\x0a\x01x".to_vec()),
                ),
                (
                    "illegal tag",
                    envelope("v1", "DeleteOptions", b"\x00\x01".to_vec()),
                ),
                ("another kind", envelope("v1", "ConfigMap", Vec::new())),
                (
                    "a meta kind",
                    envelope("meta.k8s.io/v1", "ListOptions", Vec::new()),
                ),
                ("truncated envelope", b"k8s\0\x0a\x05ab".to_vec()),
            ];
            for (label, body) in malformed {
                t.note(
                    label,
                    exchange(
                        &c,
                        "DELETE",
                        &item("pre"),
                        "application/json",
                        Some((PB, body)),
                    )
                    .await,
                );
            }
            let refused = DeleteOptions {
                orphan_dependents: Some(true),
                propagation_policy: Some("Sometimes".into()),
                dry_run: vec!["Nope".into()],
                ..Default::default()
            };
            t.note(
                "refused options",
                exchange(
                    &c,
                    "DELETE",
                    &item("pre"),
                    "application/json",
                    options("v1", refused),
                )
                .await,
            );
            let yaml = Some((
                "application/yaml",
                b"propagationPolicy: Foreground\ndryRun: [All]\n".to_vec(),
            ));
            t.note(
                "yaml options",
                exchange(&c, "DELETE", &item("pre"), "application/json", yaml).await,
            );
            let other = json_body(&json!({ "apiVersion": "v1", "kind": "ConfigMap" }));
            t.note(
                "json naming another kind",
                exchange(&c, "DELETE", &item("pre"), "application/json", other).await,
            );
            let text = Some(("text/plain", b"propagationPolicy=Orphan".to_vec()));
            t.note(
                "media type not read",
                exchange(&c, "DELETE", &item("pre"), "application/json", text).await,
            );
            t.note(
                "unknown field skipped",
                exchange(
                    &c,
                    "DELETE",
                    &item("pre"),
                    PB_JSON,
                    Some((
                        PB,
                        envelope("v1", "DeleteOptions", b"\xa2\x06\x01x".to_vec()),
                    )),
                )
                .await,
            );

            create_configmap(&c, &cms, "c1").await;
            create_configmap(&c, &cms, "c2").await;
            t.note(
                "delete collection",
                exchange(
                    &c,
                    "DELETE",
                    &format!("{cms}?labelSelector=pb%3Ddel"),
                    PB_JSON,
                    options("v1", policy("Background")),
                )
                .await,
            );
            t.note(
                "collection gone",
                exchange(
                    &c,
                    "GET",
                    &format!("{cms}?labelSelector=pb%3Ddel"),
                    "application/json",
                    None,
                )
                .await,
            );

            let deps = deployments(&ns);
            exchange(
                &c,
                "POST",
                &deps,
                "application/json",
                json_body(&deployment("gone")),
            )
            .await;
            t.note(
                "a deployment (apps/v1 envelope)",
                exchange(
                    &c,
                    "DELETE",
                    &format!("{deps}/gone"),
                    PB_JSON,
                    options("apps/v1", policy("Orphan")),
                )
                .await,
            );
            t
        },
    )
    .await;
}

#[tokio::test]
async fn protobuf_subresource_writes() {
    run("protobuf_subresources", DEVIATIONS, |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        let deps = deployments(&ns);
        let web = format!("{deps}/web");
        exchange(&c, "POST", &deps, "application/json", json_body(&deployment("web"))).await;
        let mut current = exchange(&c, "GET", &web, "application/json", None).await["body"].clone();
        current["status"] = json!({
            "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [{
                "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z",
            }],
        });
        t.note(
            "status (protobuf)",
            exchange(&c, "PUT", &format!("{web}/status"), PB_JSON, encoded(&current)).await,
        );
        t.note("status: read back", exchange(&c, "GET", &web, "application/json", None).await);
        // A status of zero values: what the write sets, not what the create path leaves out.
        let mut zero = exchange(&c, "GET", &web, "application/json", None).await["body"].clone();
        zero["status"] = json!({});
        t.note(
            "zero status (protobuf)",
            exchange(&c, "PUT", &format!("{web}/status"), "application/json", encoded(&zero)).await,
        );

        let scale = json!({
            "apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": { "name": "web", "namespace": ns }, "spec": { "replicas": 3 },
        });
        t.note(
            "scale (protobuf)",
            exchange(&c, "PUT", &format!("{web}/scale"), PB_JSON, encoded(&scale)).await,
        );
        t.note("scale: read back", exchange(&c, "GET", &web, "application/json", None).await);
        let wrong = Some((PB, envelope("apps/v1", "Scale", Vec::new())));
        t.note("scale of another kind", exchange(&c, "PUT", &format!("{web}/scale"), "application/json", wrong).await);

        let ws = widgets(&ns);
        exchange(&c, "POST", &ws, "application/json", json_body(&widget("w", 1, "red"))).await;
        let scale = json!({
            "apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": { "name": "w", "namespace": ns }, "spec": { "replicas": 4 },
        });
        t.note(
            "custom resource scale (protobuf)",
            exchange(&c, "PUT", &format!("{ws}/w/scale"), "application/json", encoded(&scale)).await,
        );
        t.note("custom resource: read back", exchange(&c, "GET", &format!("{ws}/w"), "application/json", None).await);
        t.note(
            "custom resource delete (protobuf options)",
            exchange(&c, "DELETE", &format!("{ws}/w"), "application/json", options("diff.example.dev/v1", DeleteOptions::default())).await,
        );
        t
    })
    .await;
}

/// The managedFields of a Deployment differ in shape (`BUILTIN_MANAGED_FIELDS_SHAPE` of `main.rs`).
const DEVIATIONS: &[crate::support::Deviation] = &[crate::support::Deviation {
    name: "BUILTIN_MANAGED_FIELDS_SHAPE",
    paths: &[
        "status (protobuf):/body/body/object/metadata/managedFields/*/fieldsV1*",
        "status: read back:/body/body/metadata/managedFields/*/fieldsV1*",
        // The status entry owns the empty `status` struct in memory (kube-apiserver, owning nothing, drops it).
        "zero status (protobuf):/body/body/metadata/managedFields/*",
        "scale: read back:/body/body/metadata/managedFields/*",
    ],
}];

#[tokio::test]
async fn protobuf_custom_resource_definitions() {
    run("protobuf_crds", &[], |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        let group = format!("{ns}.example.dev");
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": { "name": format!("gizmos.{group}") },
            "spec": {
                "group": group, "scope": "Namespaced",
                "names": { "plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList" },
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": { "openAPIV3Schema": { "type": "object", "properties": {
                        "spec": { "type": "object", "properties": {
                            "size": { "type": "integer", "minimum": 0, "default": 1 },
                            "tags": { "type": "array", "items": { "type": "string" }, "x-kubernetes-list-type": "set" },
                            "extra": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
                        }, "x-kubernetes-validations": [{ "rule": "self.size < 10", "message": "too big" }] },
                    } } },
                    "subresources": { "status": {}, "scale": { "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size" } },
                    "additionalPrinterColumns": [{ "name": "Size", "type": "integer", "jsonPath": ".spec.size" }],
                }],
            },
        });
        let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        let created = exchange(&c, "POST", path, PB_JSON, encoded(&crd)).await;
        // The spec as sent, with kube-apiserver's defaults inside the versions: `spec.conversion`, which the
        // in-memory server does not default for JSON bodies either, is not a protobuf matter.
        let spec = &created["body"]["object"]["spec"];
        t.note(
            "create (protobuf)",
            json!({
                "status": created["status"],
                "group": spec["group"], "names": spec["names"], "scope": spec["scope"],
                "versions": spec["versions"],
            }),
        );
        t.note(
            "delete (protobuf options)",
            exchange(&c, "DELETE", &format!("{path}/gizmos.{group}"), "application/json", options("apiextensions.k8s.io/v1", DeleteOptions::default())).await["status"].clone(),
        );
        t
    })
    .await;
}
