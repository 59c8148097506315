//! The WebApp's two versions (`examples::webapp::v1` and the `v2` hub, of both operators): the conversions
//! lose nothing either way (property tests), what `v1` cannot express travels in its annotation, and an
//! annotation no conversion wrote is refused with a clear message.

use examples::webapp::v1::{self, V2_FIELDS};
use examples::webapp::{Port, Scale, WebAppStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::ObjectMeta;
use kubewright::conversion::Versions;
use proptest::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The versions of both operators: the same CRD, each with its own hub type and conversions.
fn check_both(object: &Value) -> Result<(), String> {
    examples::webapp::versions()
        .check_round_trip(object)
        .map_err(|e| format!("webapp-by-hand: {e}"))?;
    examples::webapp_derive::WebApp::versions()
        .check_round_trip(object)
        .map_err(|e| format!("webapp: {e}"))
}

/// The annotation's value as documented: the kept fields, in this order, each only when set.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Kept {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_surge: Option<IntOrString>,
    #[serde(skip_serializing_if = "Option::is_none")]
    port_name: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    more_ports: Vec<Port>,
}

fn metadata(annotations: Option<BTreeMap<String, String>>) -> ObjectMeta {
    ObjectMeta {
        name: Some("web".into()),
        namespace: Some("default".into()),
        uid: Some("u".into()),
        resource_version: Some("7".into()),
        generation: Some(2),
        annotations,
        ..Default::default()
    }
}

fn max_surge() -> impl Strategy<Value = Option<IntOrString>> {
    proptest::option::of(prop_oneof![
        (0..10i32).prop_map(IntOrString::Int),
        (0..100u8).prop_map(|p| IntOrString::String(format!("{p}%"))),
    ])
}

fn port() -> impl Strategy<Value = Port> {
    ("[a-z]{0,6}", 1..65536i32).prop_map(|(name, port)| Port { name, port })
}

/// Annotations users put on objects, other than [`V2_FIELDS`]: none, or a few.
fn annotations() -> impl Strategy<Value = Option<BTreeMap<String, String>>> {
    proptest::option::of(proptest::collection::btree_map(
        "example\\.dev/[a-z]{1,5}",
        "[a-z0-9 ]{0,6}",
        1..3,
    ))
}

fn status() -> impl Strategy<Value = Option<WebAppStatus>> {
    proptest::option::of(
        (proptest::option::of(0..5i64), proptest::option::of(0..3i32)).prop_map(
            |(observed_generation, available_replicas)| WebAppStatus {
                observed_generation,
                deployment: Some("web".into()),
                available_replicas,
                ..Default::default()
            },
        ),
    )
}

/// A `v1` WebApp a user may have written, or one read from `v2` (with the annotation, as a conversion writes
/// it: the first port's name and more ports only when it has a port).
fn any_v1() -> impl Strategy<Value = Value> {
    (
        (
            "[a-z:.0-9]{1,12}",
            0..=50i32,
            proptest::option::of(1..65536i32),
        ),
        proptest::option::of("[a-z-]{1,8}"),
        max_surge(),
        proptest::option::of("[a-z]{0,6}".prop_filter("http is the default name", |n| n != "http")),
        proptest::collection::vec(port(), 0..3),
        annotations(),
        status(),
    )
        .prop_map(
            |(
                (image, replicas, port),
                config_map,
                max_surge,
                port_name,
                more_ports,
                mut annotations,
                status,
            )| {
                let (port_name, more_ports) = match port {
                    Some(_) => (port_name, more_ports),
                    None => (None, Vec::new()),
                };
                if max_surge.is_some() || port_name.is_some() || !more_ports.is_empty() {
                    let kept = Kept {
                        max_surge,
                        port_name,
                        more_ports,
                    };
                    annotations
                        .get_or_insert_with(Default::default)
                        .insert(V2_FIELDS.into(), serde_json::to_string(&kept).unwrap());
                }
                let app = v1::WebApp {
                    metadata: metadata(annotations),
                    spec: v1::WebAppSpec {
                        image,
                        replicas,
                        port,
                        config_map,
                    },
                    status,
                };
                serde_json::to_value(app).unwrap()
            },
        )
}

/// Any `v2` WebApp.
fn any_v2() -> impl Strategy<Value = Value> {
    (
        ("[a-z:.0-9]{1,12}", 0..=50i32, max_surge()),
        proptest::collection::vec(port(), 0..4),
        proptest::option::of("[a-z-]{1,8}"),
        annotations(),
        status(),
    )
        .prop_map(
            |((image, replicas, max_surge), ports, config_map, annotations, status)| {
                let app = examples::webapp::WebApp {
                    metadata: metadata(annotations),
                    spec: examples::webapp::WebAppSpec {
                        image,
                        scale: Scale {
                            replicas,
                            max_surge,
                        },
                        ports,
                        config_map,
                    },
                    status,
                };
                serde_json::to_value(app).unwrap()
            },
        )
}

proptest! {
    /// Any `v1` WebApp converts to `v2` and back to an equal object.
    #[test]
    fn any_v1_webapp_survives_v2(app in any_v1()) {
        prop_assert_eq!(check_both(&app), Ok(()));
    }

    /// Any `v2` WebApp converts to `v1` and back to an equal object: what `v1` cannot express travels in
    /// its annotation.
    #[test]
    fn any_v2_webapp_survives_v1(app in any_v2()) {
        prop_assert_eq!(check_both(&app), Ok(()));
    }
}

fn versions() -> Versions<examples::webapp_derive::WebApp> {
    examples::webapp_derive::WebApp::versions()
}

#[test]
fn what_v1_cannot_express_is_kept_in_its_annotation() {
    let new = json!({
        "apiVersion": "example.dev/v2", "kind": "WebApp",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "image": "nginx:1.27",
            "scale": {"replicas": 3, "maxSurge": "50%"},
            "ports": [{"name": "web", "port": 80}, {"name": "metrics", "port": 9090}],
        },
    });
    let old = versions().convert(new.clone(), "example.dev/v1").unwrap();
    assert_eq!(
        old["spec"],
        json!({"image": "nginx:1.27", "replicas": 3, "port": 80})
    );
    assert_eq!(
        old["metadata"]["annotations"],
        json!({V2_FIELDS: r#"{"maxSurge":"50%","portName":"web","morePorts":[{"name":"metrics","port":9090}]}"#})
    );
    assert_eq!(
        versions().convert(old.clone(), "example.dev/v2").unwrap(),
        new
    );

    // A patch at v1 of the port and the replicas changes the first port and the scale, and keeps the rest.
    let mut patched = old;
    patched["spec"]["port"] = json!(8000);
    patched["spec"]["replicas"] = json!(5);
    let back = versions().convert(patched, "example.dev/v2").unwrap();
    assert_eq!(
        back["spec"],
        json!({
            "image": "nginx:1.27",
            "scale": {"replicas": 5, "maxSurge": "50%"},
            "ports": [{"name": "web", "port": 8000}, {"name": "metrics", "port": 9090}],
        })
    );
    assert!(back["metadata"].get("annotations").is_none(), "{back}");

    // A v2 WebApp v1 expresses whole reads at v1 without the annotation.
    let plain = json!({
        "apiVersion": "example.dev/v2", "kind": "WebApp",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"team": "a"}},
        "spec": {"image": "nginx:1.27", "scale": {"replicas": 1}, "ports": [{"name": "http", "port": 8080}]},
    });
    let old = versions().convert(plain, "example.dev/v1").unwrap();
    assert_eq!(old["metadata"]["annotations"], json!({"team": "a"}));
    assert_eq!(old["spec"]["port"], 8080);
}

#[test]
fn an_annotation_no_conversion_wrote_is_refused_with_the_reason() {
    let old = |annotation: &str, port: Option<i32>| {
        let mut app = json!({
            "apiVersion": "example.dev/v1", "kind": "WebApp",
            "metadata": {"name": "web", "namespace": "default", "annotations": {V2_FIELDS: annotation}},
            "spec": {"image": "nginx:1.27", "replicas": 1},
        });
        if let Some(p) = port {
            app["spec"]["port"] = json!(p);
        }
        app
    };
    let err = versions()
        .convert(old("not json", Some(80)), "example.dev/v2")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "converting from example.dev/v1 to example.dev/v2: annotation example.dev/v2-fields does not read:"
        ),
        "{err}"
    );
    let err = versions()
        .convert(old(r#"{"portName":"web"}"#, None), "example.dev/v2")
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("annotation example.dev/v2-fields names ports but spec.port is not set"),
        "{err}"
    );
    // maxSurge alone needs no port.
    let new = versions()
        .convert(old(r#"{"maxSurge":2}"#, None), "example.dev/v2")
        .unwrap();
    assert_eq!(new["spec"]["scale"], json!({"replicas": 1, "maxSurge": 2}));
    assert!(new["spec"].get("ports").is_none(), "{new}");
}
