//! Protobuf answers (`Accept: application/vnd.kubernetes.protobuf`), compared between the servers: the
//! status, the `Content-Type`, and the body decoded with `k8s-pb` and read field by field
//! (`protobuf_wire.rs`), for
//!
//! - a ConfigMap created from a protobuf body (as kubectl's typed clients send it), read back with the
//!   typed clients' `Accept` (protobuf, then JSON) and with protobuf only, listed, and as
//!   `PartialObjectMetadata`;
//! - a Deployment created from JSON (defaults, an int-or-string, a zero-valued status) and its `scale`;
//!   a Secret (`bytes` map values);
//! - errors as `metav1.Status`: 404, 409, 422;
//! - a watch (`application/vnd.kubernetes.protobuf;stream=watch`, length-prefixed `WatchEvent` frames)
//!   with ADDED, MODIFIED and DELETED events;
//! - a custom resource: `406` with protobuf only, JSON when JSON is accepted too, its errors in protobuf,
//!   its `PartialObjectMetadata` in protobuf;
//! - a Table asked for in protobuf only: `406`, in JSON.

use std::time::Duration;

use http_body_util::BodyExt;
use k8s_pb::api::core::v1 as corev1;
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use kube::Client;
use prost::Message;
use serde_json::{Value, json};

use crate::protobuf_wire;
use crate::support::{Deviation, Transcript, is_periodic_bookmark, run};

pub const PB: &str = "application/vnd.kubernetes.protobuf";
pub const PB_JSON: &str = "application/vnd.kubernetes.protobuf, application/json";
const TABLE_PB: &str = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
const METADATA_PB: &str =
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";

/// The managedFields of a Deployment differ in shape (`BUILTIN_MANAGED_FIELDS_SHAPE` of `main.rs`).
const DEVIATIONS: &[Deviation] = &[Deviation {
    name: "BUILTIN_MANAGED_FIELDS_SHAPE",
    paths: &["create deployment:/body/body/object/metadata/managedFields/0/fieldsV1*"],
}];

/// A request's answer as the transcript records it: status, `Content-Type`, and the body (protobuf
/// decoded, JSON parsed).
pub async fn exchange(
    client: &Client,
    method: &str,
    path: &str,
    accept: &str,
    body: Option<(&str, Vec<u8>)>,
) -> Value {
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", accept);
    let bytes = match body {
        Some((content_type, bytes)) => {
            request = request.header("content-type", content_type);
            bytes
        }
        None => Vec::new(),
    };
    let request = request
        .body(kube::client::Body::from(bytes))
        .expect("a request");
    let response = client
        .send(request)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    json!({ "status": status, "contentType": content_type, "body": view(&content_type, &bytes) })
}

fn header<B>(response: &http::Response<B>, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default()
}

fn view(content_type: &str, bytes: &[u8]) -> Value {
    if content_type.starts_with(PB) {
        protobuf_wire::envelope(bytes)
    } else {
        serde_json::from_slice(bytes)
            .unwrap_or_else(|_| json!(String::from_utf8_lossy(bytes).into_owned()))
    }
}

/// A ConfigMap as kubectl's typed client sends it: the envelope around `k8s-pb`'s message.
fn configmap_protobuf(name: &str) -> Vec<u8> {
    let cm = corev1::ConfigMap {
        metadata: Some(ObjectMeta {
            name: Some(name.into()),
            labels: [("pb".to_string(), "yes".to_string())].into(),
            ..Default::default()
        }),
        data: [
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), String::new()),
        ]
        .into(),
        ..Default::default()
    };
    let envelope = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
        }),
        raw: Some(cm.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut bytes = b"k8s\0".to_vec();
    bytes.extend(envelope.encode_to_vec());
    bytes
}

pub fn json_body(v: &Value) -> Option<(&'static str, Vec<u8>)> {
    Some(("application/json", serde_json::to_vec(v).expect("JSON")))
}

/// Opens a protobuf watch from `rv` and reads its frames up to the first DELETED event.
async fn watch(client: &Client, path: &str) -> Value {
    let request = http::Request::get(path)
        .header("accept", PB)
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("a watch");
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let mut body = response.into_body();
    let mut buffer = Vec::new();
    let mut events = Vec::new();
    let read = async {
        while !events.iter().any(|e: &Value| e["type"] == "DELETED") {
            let Some(frame) = body.frame().await else {
                break;
            };
            if let Ok(data) = frame.expect("a watch frame").into_data() {
                buffer.extend_from_slice(&data);
            }
            let complete = protobuf_wire::complete_frames(&buffer);
            events.extend(protobuf_wire::watch_events(&buffer[..complete]));
            buffer.drain(..complete);
        }
    };
    if tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .is_err()
    {
        panic!("no DELETED event within a minute ({status}, {content_type}): {events:?}");
    }
    json!({ "status": status, "contentType": content_type, "events": events })
}

#[tokio::test]
async fn protobuf_answers() {
    run("protobuf", DEVIATIONS, |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        let cms = format!("/api/v1/namespaces/{ns}/configmaps");
        let body = || Some((PB, configmap_protobuf("pb")));
        t.note(
            "create configmap (protobuf body)",
            exchange(&c, "POST", &cms, PB_JSON, body()).await,
        );
        t.note(
            "get (protobuf, json)",
            exchange(&c, "GET", &format!("{cms}/pb"), PB_JSON, None).await,
        );
        t.note(
            "get (protobuf only)",
            exchange(&c, "GET", &format!("{cms}/pb"), PB, None).await,
        );
        let list = format!("{cms}?labelSelector=pb%3Dyes");
        t.note("list", exchange(&c, "GET", &list, PB, None).await);
        t.note(
            "metadata",
            exchange(&c, "GET", &format!("{cms}/pb"), METADATA_PB, None).await,
        );
        t.note(
            "table in protobuf only",
            exchange(&c, "GET", &format!("{cms}/pb"), TABLE_PB, None).await,
        );
        t.note(
            "conflict",
            exchange(&c, "POST", &cms, PB_JSON, body()).await,
        );
        t.note(
            "not found",
            exchange(&c, "GET", &format!("{cms}/missing"), PB_JSON, None).await,
        );
        let invalid =
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "Bad_Name" } });
        t.note(
            "invalid",
            exchange(&c, "POST", &cms, PB_JSON, json_body(&invalid)).await,
        );

        let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
        let deployment = crate::support::deployment("web");
        t.note(
            "create deployment",
            exchange(&c, "POST", &deployments, PB_JSON, json_body(&deployment)).await,
        );
        let scale = format!("{deployments}/web/scale");
        t.note("scale", exchange(&c, "GET", &scale, PB_JSON, None).await);
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "s" },
            "type": "Opaque", "data": { "k": "dmFsdWU=", "empty": "" },
        });
        let secrets = format!("/api/v1/namespaces/{ns}/secrets");
        t.note(
            "create secret",
            exchange(&c, "POST", &secrets, PB, json_body(&secret)).await,
        );

        // A watch from before three writes of a labelled ConfigMap.
        let listed = exchange(
            &c,
            "GET",
            &format!("{cms}?labelSelector=w%3Dyes"),
            "application/json",
            None,
        )
        .await;
        let rv = listed["body"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let watched = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": "watched", "labels": { "w": "yes" } }, "data": { "x": "1" },
        });
        exchange(&c, "POST", &cms, "application/json", json_body(&watched)).await;
        let patch = Some((
            "application/merge-patch+json",
            br#"{"data":{"x":"2"}}"#.to_vec(),
        ));
        exchange(
            &c,
            "PATCH",
            &format!("{cms}/watched"),
            "application/json",
            patch,
        )
        .await;
        t.note(
            "delete (protobuf)",
            exchange(&c, "DELETE", &format!("{cms}/watched"), PB, None).await,
        );
        let path = format!("{cms}?watch=true&labelSelector=w%3Dyes&resourceVersion={rv}");
        t.note("watch", watch(&c, &path).await);

        let widgets = crate::support::widgets(&ns);
        let widget = crate::support::widget("w", 1, "red");
        exchange(&c, "POST", &widgets, "application/json", json_body(&widget)).await;
        t.note(
            "custom resource, protobuf only",
            exchange(&c, "GET", &format!("{widgets}/w"), PB, None).await,
        );
        t.note(
            "custom resource, protobuf or json",
            exchange(&c, "GET", &format!("{widgets}/w"), PB_JSON, None).await,
        );
        t.note(
            "custom resource not found",
            exchange(&c, "GET", &format!("{widgets}/nope"), PB_JSON, None).await,
        );
        t.note(
            "custom resource metadata",
            exchange(&c, "GET", &format!("{widgets}/w"), METADATA_PB, None).await,
        );
        t.note(
            "custom resource watch, protobuf only",
            exchange(
                &c,
                "GET",
                &format!("{widgets}?watch=true&timeoutSeconds=1"),
                PB,
                None,
            )
            .await,
        );
        t
    })
    .await;
}

/// A metadata-only streamed list, in JSON and in protobuf: its objects and its initial-events-end bookmark
/// are `PartialObjectMetadata` (the bookmark's resourceVersion, which any write in the cluster moves, left
/// out, and so are periodic bookmarks, which kube-apiserver sends when its timer fires).
#[tokio::test]
async fn metadata_streamed_lists() {
    run("protobuf_metadata_watch", &[], |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        let cms = format!("/api/v1/namespaces/{ns}/configmaps");
        let cm = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "m", "labels": { "m": "yes" } } });
        exchange(&c, "POST", &cms, "application/json", json_body(&cm)).await;
        let path = format!(
            "{cms}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersionMatch=NotOlderThan&labelSelector=m%3Dyes"
        );
        let json_accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        for (label, accept) in [("json", json_accept), ("protobuf", METADATA_PB)] {
            let request = http::Request::get(&path)
                .header("accept", accept)
                .body(kube::client::Body::from(Vec::new()))
                .expect("a request");
            let response = c.send(request).await.expect("a watch");
            let content_type = header(&response, "content-type");
            let bytes = response.into_body().collect().await.expect("the watch").to_bytes();
            let mut events: Vec<Value> = if content_type.starts_with(PB) {
                protobuf_wire::watch_events(&bytes)
            } else {
                bytes
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(|l| serde_json::from_slice(l).expect("a JSON event"))
                    .collect()
            };
            events.retain(|e| !is_periodic_bookmark(e));
            for event in &mut events {
                if event["type"] == "BOOKMARK" {
                    for pointer in ["/object/metadata", "/object/object/metadata"] {
                        if let Some(m) = event.pointer_mut(pointer).and_then(Value::as_object_mut) {
                            m.remove("resourceVersion");
                        }
                    }
                }
            }
            t.note(label, json!({ "contentType": content_type, "events": events }));
        }
        t
    })
    .await;
}

/// Protobuf bodies the per-kind mapping does not carry, read by the messages of the schema: an Ingress and
/// a Pod with volumes and probes, each created from protobuf and its twin from JSON, the created objects
/// compared on each server (names, uids, times and managers aside) and between the servers.
#[tokio::test]
async fn protobuf_bodies_of_any_kind() {
    run("protobuf_bodies", &[], |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        let ingress = json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": { "name": "NAME", "annotations": { "a": "b" } },
            "spec": { "rules": [{ "host": "web.example.dev", "http": { "paths": [{
                "path": "/", "pathType": "Prefix",
                "backend": { "service": { "name": "web", "port": { "number": 80 } } },
            }] } }] },
        });
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "NAME" },
            "spec": {
                "containers": [{
                    "name": "c", "image": "nginx:1",
                    "readinessProbe": { "httpGet": { "port": 8080, "path": "/" }, "periodSeconds": 5 },
                    "volumeMounts": [{ "name": "v", "mountPath": "/data" }],
                }],
                "volumes": [{ "name": "v", "emptyDir": { "sizeLimit": "1Gi" } }],
            },
        });
        let ingresses = format!("/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses");
        let pods = format!("/api/v1/namespaces/{ns}/pods");
        for (kind, collection, object) in [("ingress", ingresses, ingress), ("pod", pods, pod)] {
            let mut from_pb = object.clone();
            from_pb["metadata"]["name"] = json!(format!("{kind}-pb"));
            let mut from_json = object.clone();
            from_json["metadata"]["name"] = json!(format!("{kind}-json"));
            let body = Some((PB, encoded(&from_pb)));
            let pb = exchange(&c, "POST", &collection, "application/json", body).await;
            let js = exchange(&c, "POST", &collection, "application/json", json_body(&from_json)).await;
            let (a, b) = (comparable(&pb["body"]), comparable(&js["body"]));
            t.note(
                &format!("{kind} from protobuf"),
                json!({ "status": pb["status"], "kind": pb["body"]["kind"] }),
            );
            t.note(&format!("{kind}: as from JSON"), json!(if a == b { json!(true) } else { json!([a, b]) }));
        }
        t
    })
    .await;
}

/// A JSON object in the envelope, encoded with the in-memory server's encoder's twin: `k8s-pb` messages.
fn encoded(object: &Value) -> Vec<u8> {
    use k8s_pb::api::networking::v1::{
        HttpIngressPath, HttpIngressRuleValue, Ingress, IngressBackend, IngressRule,
        IngressRuleValue, IngressServiceBackend, IngressSpec, ServiceBackendPort,
    };
    let name = object["metadata"]["name"].as_str().map(str::to_string);
    let (api_version, kind, raw) = if object["kind"] == "Ingress" {
        let ingress = Ingress {
            metadata: Some(ObjectMeta {
                name,
                annotations: [("a".to_string(), "b".to_string())].into(),
                ..Default::default()
            }),
            spec: Some(IngressSpec {
                rules: vec![IngressRule {
                    host: Some("web.example.dev".into()),
                    ingress_rule_value: Some(IngressRuleValue {
                        http: Some(HttpIngressRuleValue {
                            paths: vec![HttpIngressPath {
                                path: Some("/".into()),
                                path_type: Some("Prefix".into()),
                                backend: Some(IngressBackend {
                                    service: Some(IngressServiceBackend {
                                        name: Some("web".into()),
                                        port: Some(ServiceBackendPort {
                                            number: Some(80),
                                            ..Default::default()
                                        }),
                                    }),
                                    ..Default::default()
                                }),
                            }],
                        }),
                    }),
                }],
                ..Default::default()
            }),
            status: None,
        };
        ("networking.k8s.io/v1", "Ingress", ingress.encode_to_vec())
    } else {
        let pod = corev1::Pod {
            metadata: Some(ObjectMeta {
                name,
                ..Default::default()
            }),
            spec: Some(corev1::PodSpec {
                containers: vec![corev1::Container {
                    name: Some("c".into()),
                    image: Some("nginx:1".into()),
                    readiness_probe: Some(corev1::Probe {
                        handler: Some(corev1::ProbeHandler {
                            http_get: Some(corev1::HttpGetAction {
                                port: Some(k8s_pb::apimachinery::pkg::util::intstr::IntOrString {
                                    r#type: Some(0),
                                    int_val: Some(8080),
                                    str_val: Some(String::new()),
                                }),
                                path: Some("/".into()),
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        period_seconds: Some(5),
                        ..Default::default()
                    }),
                    volume_mounts: vec![corev1::VolumeMount {
                        name: Some("v".into()),
                        mount_path: Some("/data".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                volumes: vec![corev1::Volume {
                    name: Some("v".into()),
                    volume_source: Some(corev1::VolumeSource {
                        empty_dir: Some(corev1::EmptyDirVolumeSource {
                            size_limit: Some(k8s_pb::apimachinery::pkg::api::resource::Quantity {
                                string: Some("1Gi".into()),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                }],
                ..Default::default()
            }),
            status: None,
        };
        ("v1", "Pod", pod.encode_to_vec())
    };
    let envelope = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut bytes = b"k8s\0".to_vec();
    bytes.extend(envelope.encode_to_vec());
    bytes
}

/// A created object without what differs between two creates: name, uid, resourceVersion, times, the
/// managedFields' manager (the user agent's).
pub fn comparable(object: &Value) -> Value {
    let mut o = object.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in [
            "name",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
        ] {
            meta.remove(key);
        }
    }
    o
}

/// One minimal object of each kind the embedded cluster added for Kubernetes 1.35 (`builtin_objects`, but
/// `ASYNC_STATUS`),
/// created from JSON and read back in protobuf only and in JSON: on both servers, every kind answers in
/// protobuf, `k8s-pb` decodes it, and it carries what the JSON answer carries (zero values aside, which Go
/// writes in protobuf and leaves out of JSON). The objects themselves are compared by the other scenarios
/// (the in-memory server applies fewer defaults, `kinds.rs`).
#[tokio::test]
async fn every_built_in_kind_answers_protobuf() {
    run("protobuf_kinds", &[], |client, ns| async move {
        let c = client.clone();
        let mut t = Transcript::new(client);
        for minimal in tests::builtin_objects::all() {
            let mut object = minimal.object.clone();
            if !minimal.collection.contains("{ns}") {
                // Cluster-scoped names are shared by every test of the control plane.
                object["metadata"]["name"] = json!(format!("{}-{ns}", minimal.name()));
            }
            let kind = object["kind"].as_str().unwrap_or_default().to_string();
            if ASYNC_STATUS.contains(&kind.as_str()) {
                continue;
            }
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let collection = minimal.collection_in(&ns);
            let item = format!("{collection}/{name}");
            exchange(
                &c,
                "POST",
                &collection,
                "application/json",
                json_body(&object),
            )
            .await;
            let pb = exchange(&c, "GET", &item, PB, None).await;
            let js = exchange(&c, "GET", &item, "application/json", None).await;
            let mut from_pb = pb["body"]["object"].clone();
            let mut from_json = js["body"].clone();
            if let Some(o) = from_json.as_object_mut() {
                o.remove("apiVersion");
                o.remove("kind");
            }
            drop_zeros(&mut from_pb);
            drop_zeros(&mut from_json);
            t.note(
                &kind,
                json!({
                    "status": pb["status"],
                    "contentType": pb["contentType"],
                    "typeMeta": pb["body"]["typeMeta"],
                    "k8s-pb": pb["body"]["k8s-pb"],
                    "carries the JSON": if from_pb == from_json { json!(true) } else {
                        json!({ "protobuf": from_pb, "json": from_json })
                    },
                }),
            );
            let delete = format!("{item}?propagationPolicy=Background");
            exchange(&c, "DELETE", &delete, "application/json", None).await;
        }
        t
    })
    .await;
}

/// The kinds whose status kube-apiserver's own priority-and-fairness controller writes after a create: on the
/// real server the two reads could see different objects, and the write moves the resourceVersion other
/// scenarios compare (`streamed_lists`). Left out.
const ASYNC_STATUS: [&str; 2] = ["FlowSchema", "PriorityLevelConfiguration"];

/// Leaves out zero values (`""`, `0`, `false`, `null`, empty objects and lists), recursively.
pub fn drop_zeros(v: &mut Value) {
    let zero = |v: &Value| match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    };
    match v {
        Value::Object(o) => {
            o.values_mut().for_each(drop_zeros);
            o.retain(|_, v| !zero(v));
        }
        Value::Array(a) => a.iter_mut().for_each(drop_zeros),
        _ => {}
    }
}
