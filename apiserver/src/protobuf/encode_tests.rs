//! Objects encoded from JSON, decoded back with `k8s-pb`: Go's zero values, pointers, maps, specials.

use k8s_pb::api::apps::v1::Deployment;
use k8s_pb::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{Status, WatchEvent};
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::json;

use super::{ProtobufError, encode, watch_event};

fn unwrap_envelope(bytes: &[u8]) -> (String, String, Vec<u8>) {
    let rest = bytes.strip_prefix(b"k8s\0").expect("the magic");
    let unknown = Unknown::decode(rest).expect("a runtime.Unknown");
    let type_meta = unknown.type_meta.expect("typeMeta");
    assert_eq!(unknown.content_encoding.as_deref(), Some(""));
    assert_eq!(unknown.content_type.as_deref(), Some(""));
    (
        type_meta.api_version.unwrap_or_default(),
        type_meta.kind.unwrap_or_default(),
        unknown.raw.unwrap_or_default(),
    )
}

#[test]
fn a_config_map_carries_gos_zero_values_and_sorted_maps() {
    let bytes = encode(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "c", "namespace": "default", "creationTimestamp": "2026-01-02T03:04:05Z",
                      "labels": { "b": "2", "a": "1" } },
        "data": { "k": "v" },
    }))
    .expect("encodes");
    let (api_version, kind, raw) = unwrap_envelope(&bytes);
    assert_eq!((api_version.as_str(), kind.as_str()), ("v1", "ConfigMap"));
    let cm = ConfigMap::decode(raw.as_slice()).expect("a ConfigMap");
    let meta = cm.metadata.expect("metadata");
    assert_eq!(meta.name.as_deref(), Some("c"));
    // Go writes every non-pointer field: empty strings and zero numbers are there.
    assert_eq!(meta.generate_name.as_deref(), Some(""));
    assert_eq!(meta.uid.as_deref(), Some(""));
    assert_eq!(meta.generation, Some(0));
    // Pointers only when set.
    assert_eq!(meta.deletion_grace_period_seconds, None);
    assert_eq!(cm.immutable, None);
    let created = meta.creation_timestamp.expect("creationTimestamp");
    assert_eq!(
        (created.seconds, created.nanos),
        (Some(1_767_323_045), Some(0))
    );
    assert_eq!(cm.data.get("k").map(String::as_str), Some("v"));
    // Maps are written sorted, as Go writes them: what prost writes back is the same.
    assert_eq!(
        ConfigMap::decode(raw.as_slice())
            .unwrap()
            .encode_to_vec()
            .len(),
        raw.len()
    );
}

#[test]
fn secrets_bytes_are_decoded_from_base64() {
    let bytes = encode(&json!({
        "apiVersion": "v1", "kind": "Secret", "metadata": { "name": "s" },
        "type": "Opaque", "data": { "k": "dmFsdWU=" },
    }))
    .expect("encodes");
    let secret = Secret::decode(unwrap_envelope(&bytes).2.as_slice()).expect("a Secret");
    assert_eq!(secret.data.get("k").map(Vec::as_slice), Some(&b"value"[..]));
}

#[test]
fn inline_structs_int_or_strings_and_quantities() {
    let bytes = encode(&json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p" },
        "spec": {
            "containers": [{
                "name": "c", "image": "nginx",
                "resources": { "limits": { "cpu": "500m" } },
                "readinessProbe": { "httpGet": { "port": "http", "path": "/" } },
            }],
            "volumes": [{ "name": "v", "emptyDir": {} }],
        },
    }))
    .expect("encodes");
    let pod = Pod::decode(unwrap_envelope(&bytes).2.as_slice()).expect("a Pod");
    let spec = pod.spec.expect("spec");
    let container = &spec.containers[0];
    let limits = &container.resources.as_ref().expect("resources").limits;
    assert_eq!(limits["cpu"].string.as_deref(), Some("500m"));
    let probe = container.readiness_probe.as_ref().expect("a probe");
    let handler = probe.handler.as_ref().expect("the inline ProbeHandler");
    let port = handler
        .http_get
        .as_ref()
        .expect("httpGet")
        .port
        .as_ref()
        .expect("port");
    assert_eq!(
        (port.r#type, port.str_val.as_deref()),
        (Some(1), Some("http"))
    );
    let source = spec.volumes[0]
        .volume_source
        .as_ref()
        .expect("the inline VolumeSource");
    assert!(source.empty_dir.is_some());
}

#[test]
fn a_field_the_message_lacks_is_an_error_not_dropped() {
    let err = encode(&json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "d" },
        "spec": { "replicas": 1, "surprise": true },
    }))
    .expect_err("refused");
    assert!(matches!(err, ProtobufError::Unencodable { .. }), "{err}");
    let err = encode(&json!({ "apiVersion": "example.com/v1", "kind": "Widget" }))
        .expect_err("no message");
    assert!(matches!(err, ProtobufError::UnknownKind { .. }), "{err}");
    let ok = encode(&json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "d" }, "spec": { "replicas": 0 },
    }))
    .expect("encodes");
    let d = Deployment::decode(unwrap_envelope(&ok).2.as_slice()).expect("a Deployment");
    // A pointer set to zero stays set.
    assert_eq!(d.spec.expect("spec").replicas, Some(0));
}

#[test]
fn a_status_is_meta_v1s_whatever_its_api_version() {
    let bytes = encode(&json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "nope", "reason": "NotFound", "code": 404,
        "details": { "name": "x", "kind": "configmaps" },
    }))
    .expect("encodes");
    let (api_version, kind, raw) = unwrap_envelope(&bytes);
    assert_eq!((api_version.as_str(), kind.as_str()), ("v1", "Status"));
    let status = Status::decode(raw.as_slice()).expect("a Status");
    assert_eq!(status.code, Some(404));
    assert_eq!(status.details.expect("details").name.as_deref(), Some("x"));
}

#[test]
fn watch_events_are_length_prefixed_with_the_envelope_inside() {
    let frame = watch_event(
        "ADDED",
        &json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "c" } }),
    )
    .expect("encodes");
    let len = u32::from_be_bytes(frame[..4].try_into().expect("four bytes")) as usize;
    assert_eq!(len, frame.len() - 4);
    let event = WatchEvent::decode(&frame[4..]).expect("a WatchEvent");
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let raw = event.object.and_then(|o| o.raw).expect("the object");
    assert_eq!(unwrap_envelope(&raw).1, "ConfigMap");
}

#[test]
fn what_is_encoded_decodes_back_to_the_same_json_for_kinds_without_a_mapping() {
    let ingress = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": { "name": "web", "labels": { "a": "b" } },
        "spec": { "rules": [{ "host": "web.example.dev", "http": { "paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": { "service": { "name": "web", "port": { "number": 80 } } },
        }] } }] },
    });
    let decoded = super::decode(&encode(&ingress).expect("encodes")).expect("decodes");
    let mut expected = ingress.clone();
    // Go's JSON of the decoded object: the zero creationTimestamp is null.
    expected["metadata"]["creationTimestamp"] = json!(null);
    assert_eq!(decoded, expected);
}

#[test]
fn fields_the_pod_mapping_does_not_carry_are_read_by_the_schema() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p" },
        "spec": {
            "containers": [{
                "name": "c", "image": "nginx", "resources": {},
                "readinessProbe": { "httpGet": { "port": 8080, "path": "/" }, "periodSeconds": 5 },
                "volumeMounts": [{ "name": "v", "mountPath": "/data" }],
            }],
            "volumes": [{ "name": "v", "emptyDir": { "sizeLimit": "1Gi" } }],
        },
    });
    let decoded = super::decode(&encode(&pod).expect("encodes")).expect("decodes");
    assert_eq!(decoded["spec"]["volumes"], pod["spec"]["volumes"]);
    assert_eq!(
        decoded["spec"]["containers"][0]["readinessProbe"],
        pod["spec"]["containers"][0]["readinessProbe"]
    );
    assert_eq!(
        decoded["spec"]["containers"][0]["volumeMounts"],
        pod["spec"]["containers"][0]["volumeMounts"]
    );
    assert_eq!(decoded.get("status"), None);
}

#[test]
fn crds_and_api_services_decode_back_to_what_was_encoded() {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": { "name": "gizmos.example.dev" },
        "spec": {
            "group": "example.dev", "scope": "Namespaced",
            "names": { "plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList" },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": { "type": "object", "properties": {
                    "spec": { "type": "object", "properties": {
                        "size": { "type": "integer", "minimum": 0.0, "default": 1 },
                        "tags": { "type": "array", "items": { "type": "string" } },
                        "extra": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
                        "mode": { "type": "string", "enum": ["a", "b"] },
                    }, "x-kubernetes-validations": [{ "rule": "self.size < 10", "message": "too big" }] },
                } } },
                "subresources": { "status": {}, "scale": { "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size" } },
            }],
        },
    });
    let decoded = super::decode(&encode(&crd).expect("encodes")).expect("decodes");
    assert_eq!(decoded["spec"]["names"], crd["spec"]["names"]);
    let version = &decoded["spec"]["versions"][0];
    assert_eq!(
        version["subresources"],
        crd["spec"]["versions"][0]["subresources"]
    );
    assert_eq!(version["schema"], crd["spec"]["versions"][0]["schema"]);

    let api_service = json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": { "name": "v1.example.dev" },
        "spec": { "group": "example.dev", "version": "v1", "groupPriorityMinimum": 100,
                  "versionPriority": 10, "service": { "namespace": "ns", "name": "api", "port": 443 } },
    });
    let decoded = super::decode(&encode(&api_service).expect("encodes")).expect("decodes");
    assert_eq!(decoded["spec"], api_service["spec"]);
}
