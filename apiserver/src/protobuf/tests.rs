//! Protobuf bodies encoded with `k8s-pb`, as client-go encodes them, decoded into JSON.

use std::collections::BTreeMap;

use k8s_pb::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus, DeploymentStrategy};
use k8s_pb::api::core::v1::{
    ConfigMap, Container, PodSpec, PodTemplateSpec, ResourceRequirements, Secret, Service,
    ServicePort, ServiceSpec, Volume,
};
use k8s_pb::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::json;

use super::{ProtobufError, decode, is_protobuf};

fn envelope(api_version: &str, kind: &str, object: &impl Message) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

/// What apimachinery encodes for an unset `metav1.Time`: an empty message.
fn zero_time() -> Option<Time> {
    Some(Time::default())
}

#[test]
fn times_are_rfc3339_and_the_zero_time_is_unset() {
    use super::meta::time;
    assert_eq!(time(Time::default()), None);
    let go_zero = Time {
        seconds: Some(-62_135_596_800),
        nanos: Some(0),
    };
    assert_eq!(time(go_zero), None);
    let t = Time {
        seconds: Some(1_767_225_600),
        nanos: Some(0),
    };
    assert_eq!(time(t), Some(json!("2026-01-01T00:00:00Z")));
}

/// Metadata as client-go encodes it: Go writes its non-pointer fields even when they are zero.
fn meta(name: &str) -> Option<ObjectMeta> {
    Some(ObjectMeta {
        name: Some(name.into()),
        generate_name: Some(String::new()),
        generation: Some(0),
        creation_timestamp: zero_time(),
        ..Default::default()
    })
}

#[test]
fn the_media_type_is_recognized_with_parameters() {
    assert!(is_protobuf("application/vnd.kubernetes.protobuf"));
    assert!(is_protobuf(
        "application/vnd.kubernetes.protobuf; charset=utf-8"
    ));
    assert!(!is_protobuf("application/json"));
}

#[test]
fn a_config_map_as_kubectl_create_configmap_sends_it() {
    let cm = ConfigMap {
        metadata: meta("settings"),
        data: BTreeMap::from([("a".into(), "1".into())]),
        binary_data: BTreeMap::from([("b".into(), vec![0xff, 0])]),
        immutable: None,
    };
    let value = decode(&envelope("v1", "ConfigMap", &cm)).expect("decodes");
    assert_eq!(
        value,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings"},
            "data": {"a": "1"},
            "binaryData": {"b": "/wA="},
        })
    );
}

#[test]
fn secret_data_is_base64() {
    let secret = Secret {
        metadata: meta("s"),
        data: BTreeMap::from([("password".into(), b"s3cr3t".to_vec())]),
        r#type: Some("Opaque".into()),
        ..Default::default()
    };
    let value = decode(&envelope("v1", "Secret", &secret)).expect("decodes");
    assert_eq!(value["data"], json!({"password": "czNjcjN0"}));
    assert_eq!(value["type"], "Opaque");
}

#[test]
fn a_deployment_keeps_empty_structs_and_drops_zeros_and_status() {
    let deployment = Deployment {
        metadata: meta("web"),
        spec: Some(DeploymentSpec {
            replicas: Some(0),
            paused: Some(false),
            selector: Some(LabelSelector {
                match_labels: BTreeMap::from([("app".into(), "web".into())]),
                ..Default::default()
            }),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: BTreeMap::from([("app".into(), "web".into())]),
                    creation_timestamp: zero_time(),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: Some("nginx".into()),
                        image: Some("nginx:1.27".into()),
                        resources: Some(ResourceRequirements::default()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            strategy: Some(DeploymentStrategy::default()),
            ..Default::default()
        }),
        status: Some(DeploymentStatus::default()),
    };
    let value = decode(&envelope("apps/v1", "Deployment", &deployment)).expect("decodes");
    assert_eq!(
        value,
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "resources": {}}]},
                },
                "strategy": {},
            },
        })
    );
}

#[test]
fn target_ports_are_ints_or_strings() {
    let port = |port: i32, target: IntOrString| ServicePort {
        port: Some(port),
        target_port: Some(target),
        ..Default::default()
    };
    let service = Service {
        metadata: meta("web"),
        spec: Some(ServiceSpec {
            ports: vec![
                port(
                    80,
                    IntOrString {
                        r#type: Some(0),
                        int_val: Some(8080),
                        str_val: Some(String::new()),
                    },
                ),
                port(
                    81,
                    IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("http".into()),
                    },
                ),
            ],
            ..Default::default()
        }),
        status: None,
    };
    let value = decode(&envelope("v1", "Service", &service)).expect("decodes");
    assert_eq!(
        value["spec"]["ports"],
        json!([{"port": 80, "targetPort": 8080}, {"port": 81, "targetPort": "http"}])
    );
}

#[test]
fn a_field_the_mapping_does_not_carry_is_read_by_the_schema_not_dropped() {
    let deployment = Deployment {
        metadata: meta("web"),
        spec: Some(DeploymentSpec {
            template: Some(PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    volumes: vec![Volume {
                        name: Some("v".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let value = decode(&envelope("apps/v1", "Deployment", &deployment)).expect("decodes");
    assert_eq!(
        value["spec"]["template"]["spec"]["volumes"],
        json!([{ "name": "v" }])
    );
}

#[test]
fn unknown_kinds_and_bad_envelopes_are_errors() {
    let err =
        decode(&envelope("example.com/v1", "Widget", &ConfigMap::default())).expect_err("refused");
    assert!(matches!(err, ProtobufError::UnknownKind { .. }), "{err}");
    // A kind without a per-kind mapping is read by its message, and refused when the body does not fit it.
    let endpoints = decode(&envelope("v1", "Endpoints", &ConfigMap::default())).expect("decodes");
    assert_eq!(endpoints["kind"], "Endpoints");
    let cm = ConfigMap {
        data: [("a".to_string(), "b".to_string())].into(),
        ..Default::default()
    };
    let err = decode(&envelope("v1", "Endpoints", &cm))
        .expect_err("ConfigMap's data is no Endpoints field");
    assert!(matches!(err, ProtobufError::Undecodable { .. }), "{err}");
    let err = decode(b"{\"kind\":\"ConfigMap\"}").expect_err("no magic");
    assert!(matches!(err, ProtobufError::Magic) && err.is_malformed());
    let err = decode(b"k8s\0\x0a\xff").expect_err("truncated");
    assert!(matches!(err, ProtobufError::Decode { .. }) && err.is_malformed());
}

#[test]
fn pointer_fields_keep_their_zeros() {
    use k8s_pb::api::scheduling::v1::PriorityClass;
    let class = PriorityClass {
        metadata: meta("low"),
        value: Some(0),
        global_default: Some(false),
        description: Some(String::new()),
        preemption_policy: None,
    };
    let value =
        decode(&envelope("scheduling.k8s.io/v1", "PriorityClass", &class)).expect("decodes");
    assert_eq!(
        value,
        json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "low"},
            "value": 0,
        })
    );
}

#[test]
fn a_status_write_keeps_the_status_the_create_path_leaves_out() {
    let deployment = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "web" },
        "status": { "replicas": 2, "readyReplicas": 1, "observedGeneration": 3 },
    });
    let body = super::encode(&deployment).expect("encodes");
    assert!(
        super::decode(&body)
            .expect("decodes")
            .get("status")
            .is_none()
    );
    let status = super::decode_status(&body).expect("decodes");
    assert_eq!(status["status"]["replicas"], 2);
    assert_eq!(status["status"]["readyReplicas"], 1);
    assert_eq!(status["status"]["observedGeneration"], 3);
}
