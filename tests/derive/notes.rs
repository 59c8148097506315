//! A kind with two versions declared with `#[version(..)]` (`examples::notes`): the merged CRD, the
//! conversion through the hub, and an installation whose CRD sends the API server to the operator's
//! conversion webhook.

use examples::notes::{TITLE, app, v1, v2};
use kube::CustomResourceExt;
use kubewright::conversion::ErasedConversion;
use serde_json::{Value, json};

#[test]
fn the_derive_declares_both_versions_with_v2_stored_and_v1_deprecated() {
    let crd = v2::Note::versions().crd().unwrap();
    let versions: Vec<Value> = crd
        .spec
        .versions
        .iter()
        .map(|v| {
            json!([
                v.name,
                v.served,
                v.storage,
                v.deprecated,
                v.deprecation_warning
            ])
        })
        .collect();
    assert!(
        versions.contains(&json!(["v2", true, true, null, null])),
        "{versions:?}"
    );
    assert!(
        versions.contains(&json!([
            "v1",
            true,
            false,
            true,
            "versions.example.dev/v1 Note is deprecated; use v2"
        ])),
        "{versions:?}"
    );
    // The schemas are each version's own.
    let v1_schema = serde_json::to_value(&v1::Note::crd().spec.versions[0].schema).unwrap();
    let merged_v1 = crd.spec.versions.iter().find(|v| v.name == "v1").unwrap();
    assert_eq!(serde_json::to_value(&merged_v1.schema).unwrap(), v1_schema);
}

#[test]
fn a_v2_title_survives_a_round_trip_through_v1() {
    let versions = v2::Note::versions();
    let new = json!({
        "apiVersion": "versions.example.dev/v2", "kind": "Note",
        "metadata": {"name": "n", "namespace": "default", "uid": "u", "resourceVersion": "3"},
        "spec": {"lines": ["a", "b"], "title": "shopping"},
    });
    let old = versions
        .convert(new.clone(), "versions.example.dev/v1")
        .unwrap();
    assert_eq!(old["spec"], json!({"text": "a\nb"}));
    assert_eq!(old["metadata"]["annotations"][TITLE], "shopping");
    assert_eq!(old["metadata"]["uid"], "u");
    let back = versions.convert(old, "versions.example.dev/v2").unwrap();
    // The annotation is consumed: v2 holds the title itself (an empty annotation map is left).
    assert_eq!(back["spec"], new["spec"]);
    assert_eq!(back["metadata"]["annotations"], json!({}));
}

#[test]
fn the_installation_points_the_crd_at_the_webhook_service_with_cert_manager() {
    let manifests = app().installation();
    let objects = manifests.objects().unwrap();
    let crd = objects
        .iter()
        .find(|o| o["kind"] == "CustomResourceDefinition")
        .unwrap();
    assert_eq!(crd["metadata"]["name"], "notes.versions.example.dev");
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "default/note-operator-webhook"
    );
    assert_eq!(
        crd["spec"]["conversion"],
        json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {
                    "namespace": "default", "name": "note-operator-webhook",
                    "path": "/convert/versions.example.dev/notes", "port": 443,
                }},
                "conversionReviewVersions": ["v1"],
            },
        })
    );
    // The Deployment serves the webhook behind its Service, with cert-manager's certificate.
    let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
    for kind in ["Service", "Issuer", "Certificate"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    let deployment = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
    let args = &deployment["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(
        args.as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().starts_with("--webhook-bind-address=")),
        "{args}"
    );
    // No admission webhooks: no configurations.
    assert!(!kinds.contains(&"ValidatingWebhookConfiguration"));
    assert_eq!(
        v2::Note::versions().path(),
        "/convert/versions.example.dev/notes"
    );
}
