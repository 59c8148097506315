use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::*;

mod v1 {
    use super::*;
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.dev", version = "v1", kind = "Box", namespaced)]
    pub struct BoxSpec {
        pub size: i64,
    }
}

mod v2 {
    use super::*;
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.dev", version = "v2", kind = "Box", namespaced)]
    pub struct BoxSpec {
        pub width: i64,
        pub height: i64,
    }
}

mod v3 {
    use super::*;
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.dev", version = "v3", kind = "Box", namespaced)]
    pub struct BoxSpec {
        pub area: i64,
    }
}

/// v1's size is a square's side; v2's height keeps v1's answer when the box is not square, in an
/// annotation.
impl TryFrom<v1::Box> for v2::Box {
    type Error = String;
    fn try_from(old: v1::Box) -> Result<Self, String> {
        if old.spec.size < 0 {
            return Err(format!("size {} is negative", old.spec.size));
        }
        let spec = v2::BoxSpec {
            width: old.spec.size,
            height: old.spec.size,
        };
        Ok(v2::Box::new("", spec))
    }
}

/// A conversion that carries the metadata over (and so decides the annotations) when it has something to
/// keep, and one that builds new metadata (leaving the input's) otherwise.
impl TryFrom<v2::Box> for v1::Box {
    type Error = String;
    fn try_from(new: v2::Box) -> Result<Self, String> {
        let spec = v1::BoxSpec {
            size: new.spec.width,
        };
        if new.spec.width != new.spec.height {
            let mut metadata = new.metadata;
            metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(
                    "example.dev/height".to_string(),
                    new.spec.height.to_string(),
                );
            return Ok(v1::Box { metadata, spec });
        }
        Ok(v1::Box::new("", spec))
    }
}

fn versions() -> Versions<v2::Box> {
    Versions::<v2::Box>::new()
        .storage("v2")
        .version::<v1::Box>()
        .version_with::<v3::Box, _, _, _, _>(
            |_| -> Result<v2::Box, &str> { panic!("v3 is not readable") },
            |b| -> Result<v3::Box, &str> {
                Ok(v3::Box::new(
                    "",
                    v3::BoxSpec {
                        area: b.spec.width * b.spec.height,
                    },
                ))
            },
        )
        .deprecated("v1", "example.dev/v1 Box is deprecated")
}

fn v1_box(size: i64) -> Value {
    json!({
        "apiVersion": "example.dev/v1", "kind": "Box",
        "metadata": {"name": "b", "namespace": "ns", "uid": "u-1", "resourceVersion": "7", "labels": {"a": "b"}},
        "spec": {"size": size},
    })
}

#[test]
fn the_merged_crd_serves_every_version_and_stores_one() {
    let crd = versions().crd().unwrap();
    let v: Vec<(&str, bool, bool, Option<bool>)> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.served, v.storage, v.deprecated))
        .collect();
    assert_eq!(v.len(), 3);
    assert!(v.contains(&("v2", true, true, None)));
    assert!(v.contains(&("v1", true, false, Some(true))));
    assert!(v.contains(&("v3", true, false, None)));
    assert!(crd.spec.conversion.is_none());
}

#[test]
fn a_declaration_without_one_storage_version_is_refused() {
    let none = Versions::<v2::Box>::new().version::<v1::Box>();
    assert!(matches!(none.crd(), Err(VersionsError::NoStorage { .. })));
    let unknown = Versions::<v2::Box>::new().storage("v9");
    assert_eq!(
        unknown.crd().unwrap_err().to_string(),
        "Box: version v9 is not declared (declared: v2)"
    );
    let twice = Versions::<v2::Box>::new()
        .storage("v2")
        .version::<v1::Box>()
        .version::<v1::Box>();
    assert!(matches!(twice.crd(), Err(VersionsError::Twice { .. })));
    let deprecated = Versions::<v2::Box>::new()
        .storage("v2")
        .deprecated("v1", "");
    assert!(matches!(
        deprecated.crd(),
        Err(VersionsError::Unknown { .. })
    ));
}

#[test]
fn objects_convert_through_the_hub_keeping_their_identity() {
    let v = versions();
    let v2 = v.convert(v1_box(3), "example.dev/v2").unwrap();
    assert_eq!(v2["apiVersion"], "example.dev/v2");
    assert_eq!(v2["spec"], json!({"width": 3, "height": 3}));
    // The conversion wrote empty metadata: the input's is kept, labels included.
    assert_eq!(v2["metadata"], v1_box(3)["metadata"]);
    // Spoke to spoke goes through the hub.
    let v3 = v.convert(v1_box(3), "example.dev/v3").unwrap();
    assert_eq!(v3["spec"], json!({"area": 9}));
    // What v1 cannot express goes into an annotation, which the conversion may set.
    let mut tall = v2.clone();
    tall["spec"]["height"] = json!(5);
    let back = v.convert(tall, "example.dev/v1").unwrap();
    assert_eq!(back["metadata"]["annotations"]["example.dev/height"], "5");
    assert_eq!(back["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(back["metadata"]["uid"], "u-1");
    // The same version is returned as it is.
    assert_eq!(v.convert(v1_box(3), "example.dev/v1").unwrap(), v1_box(3));
}

#[test]
fn a_failed_or_panicking_conversion_is_an_error_naming_both_versions() {
    let v = versions();
    assert_eq!(
        v.convert(v1_box(-1), "example.dev/v2")
            .unwrap_err()
            .to_string(),
        "converting from example.dev/v1 to example.dev/v2: size -1 is negative"
    );
    let mut v3 = v1_box(1);
    v3["apiVersion"] = json!("example.dev/v3");
    v3["spec"] = json!({"area": 1});
    assert_eq!(
        v.convert(v3, "example.dev/v2").unwrap_err().to_string(),
        "converting from example.dev/v3 to example.dev/v2: the conversion panicked: v3 is not readable"
    );
    assert!(matches!(
        v.convert(v1_box(1), "example.dev/v7"),
        Err(ConversionError::UnknownVersion { .. })
    ));
    let mut unreadable = v1_box(1);
    unreadable["spec"]["size"] = json!("big");
    assert!(matches!(
        v.convert(unreadable, "example.dev/v2"),
        Err(ConversionError::Read { .. })
    ));
}

#[test]
fn a_review_converts_every_object_or_fails_naming_the_first_that_cannot() {
    let v = versions();
    let review = |objects: Vec<Value>| {
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "r-1", "desiredAPIVersion": "example.dev/v2", "objects": objects},
        });
        let out = v.review(&serde_json::to_vec(&body).unwrap());
        serde_json::from_slice::<Value>(&out).unwrap()
    };
    let ok = review(vec![v1_box(1), v1_box(2)]);
    assert_eq!(ok["kind"], "ConversionReview");
    assert_eq!(ok["response"]["uid"], "r-1");
    assert_eq!(ok["response"]["result"]["status"], "Success");
    assert_eq!(ok["response"]["convertedObjects"][1]["spec"]["width"], 2);
    let failed = review(vec![v1_box(1), v1_box(-2)]);
    assert_eq!(failed["response"]["uid"], "r-1");
    assert_eq!(failed["response"]["result"]["status"], "Failure");
    assert_eq!(
        failed["response"]["result"]["message"],
        "ns/b: converting from example.dev/v1 to example.dev/v2: size -2 is negative"
    );
    let garbage: Value = serde_json::from_slice(&v.review(b"{")).unwrap();
    assert_eq!(garbage["response"]["result"]["status"], "Failure");
    assert_eq!(v.path(), "/convert/example.dev/boxes");
}

#[test]
fn a_crd_with_several_versions_points_at_the_webhook() {
    use crate::admission::ClientConfig;
    let crd = versions().crd().unwrap();
    let service = ClientConfig::Service {
        namespace: "ops".into(),
        name: "box-webhook".into(),
        port: 443,
    };
    let pointed = webhook_conversion(crd, &service, "/convert/example.dev/boxes", "");
    let json = serde_json::to_value(&pointed.spec.conversion).unwrap();
    assert_eq!(
        json,
        json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {"namespace": "ops", "name": "box-webhook", "path": "/convert/example.dev/boxes", "port": 443}},
                "conversionReviewVersions": ["v1"],
            },
        })
    );
    let single = Versions::<v2::Box>::new().storage("v2").crd().unwrap();
    let url = ClientConfig::Url("https://127.0.0.1:9443".into());
    assert!(
        webhook_conversion(single, &url, "/x", "PEM")
            .spec
            .conversion
            .is_none()
    );
}
