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
    // The annotation is consumed: v2 holds the title itself.
    assert_eq!(back, new);
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

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn v1_note(text: String, title: Option<String>) -> Value {
        let mut note = json!({
            "apiVersion": "versions.example.dev/v1", "kind": "Note",
            "metadata": {"name": "n", "namespace": "default", "uid": "u", "resourceVersion": "1"},
            "spec": {"text": text},
        });
        if let Some(t) = title {
            note["metadata"]["annotations"] = json!({ TITLE: t });
        }
        note
    }

    proptest! {
        /// Any v1 Note v2 can read converts to v2 and back to an equal object.
        #[test]
        fn any_v1_note_survives_v2(text in "[^!][a-z\n ]{0,20}|", title in proptest::option::of("[a-z]{0,8}")) {
            let versions = v2::Note::versions();
            versions.check_round_trip(&v1_note(text, title)).unwrap();
        }

        /// Any v2 Note v1 can express (lines without newlines, not one empty line, none starting with `!`)
        /// converts to v1 and back to an equal object.
        #[test]
        fn any_expressible_v2_note_survives_v1(
            lines in proptest::collection::vec("[a-z ]{0,6}", 0..5)
                .prop_filter("one empty line reads as none", |l| l != &[String::new()]),
            title in proptest::option::of("[a-z]{0,8}"),
        ) {
            let mut note = json!({
                "apiVersion": "versions.example.dev/v2", "kind": "Note",
                "metadata": {"name": "n", "namespace": "default", "uid": "u", "resourceVersion": "1"},
                "spec": {"lines": lines},
            });
            if let Some(t) = title {
                note["spec"]["title"] = json!(t);
            }
            v2::Note::versions().check_round_trip(&note).unwrap();
        }
    }
}

#[test]
fn a_lossy_conversion_and_a_drifted_crd_are_caught_by_the_checks() {
    let versions = v2::Note::versions();
    // One empty line and no lines both read as an empty text at v1: the check names the change.
    let note = json!({
        "apiVersion": "versions.example.dev/v2", "kind": "Note",
        "metadata": {"name": "n"},
        "spec": {"lines": [""]},
    });
    let lossy = versions.check_round_trip(&note).unwrap_err().to_string();
    assert!(lossy.contains("versions.example.dev/v2 -> versions.example.dev/v1 -> versions.example.dev/v2 is not lossless"), "{lossy}");
    assert!(lossy.contains("/spec/lines/0"), "{lossy}");

    versions.check_crd(&versions.crd().unwrap()).unwrap();
    let mut drifted = versions.crd().unwrap();
    drifted.spec.versions.retain(|v| v.name == "v2");
    let mut schema = serde_json::to_value(&drifted.spec.versions[0].schema).unwrap();
    schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["title"] =
        json!({"type": "integer"});
    drifted.spec.versions[0].schema = serde_json::from_value(schema).unwrap();
    let problems = versions.check_crd(&drifted).unwrap_err().to_string();
    assert!(problems.contains("version v1 is missing"), "{problems}");
    assert!(
        problems.contains("version v2: the schema differs"),
        "{problems}"
    );
}
