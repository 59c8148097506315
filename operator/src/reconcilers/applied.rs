//! The object a child step writes, as the JSON it sends: with its `apiVersion` and `kind`, which the API server
//! requires and a typed object may not print.

use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::json_text::JsonText;

/// Sets `object`'s `apiVersion` and `kind` to `C`'s.
pub(super) fn set_type<C: Resource<DynamicType = ()>>(object: &mut Value) {
    set_type_to(object, &C::api_version(&()), &C::kind(&()));
}

fn set_type_to(object: &mut Value, api_version: &str, kind: &str) {
    object["apiVersion"] = Value::String(api_version.to_owned());
    object["kind"] = Value::String(kind.to_owned());
}

/// `desired` as the JSON text an apply sends, with its `apiVersion` and `kind`: printed once, never held as a
/// `Value`. k8s-openapi's kinds and kube's derived ones print both first; any other object (a `DynamicObject`
/// without them, say) gets them through a `Value`.
pub(super) fn applied_text<C: Resource<DynamicType = ()> + Serialize>(
    desired: &C,
) -> Result<JsonText> {
    typed_text(desired, &C::api_version(&()), &C::kind(&()))
}

fn typed_text(object: &impl Serialize, api_version: &str, kind: &str) -> Result<JsonText> {
    let text = JsonText::of(object)?;
    if starts_with_type(text.as_str(), api_version, kind) {
        return Ok(text);
    }
    let mut value: Value = serde_json::from_str(text.as_str())?;
    set_type_to(&mut value, api_version, kind);
    Ok(value.into())
}

/// Whether the JSON object `text` starts with this `apiVersion` and `kind` (in that order, as k8s-openapi
/// prints them). A version or kind that JSON escapes never matches, and gets the longer way.
fn starts_with_type(text: &str, api_version: &str, kind: &str) -> bool {
    text.strip_prefix(r#"{"apiVersion":""#)
        .and_then(|r| r.strip_prefix(api_version))
        .and_then(|r| r.strip_prefix(r#"","kind":""#))
        .and_then(|r| r.strip_prefix(kind))
        .and_then(|r| r.strip_prefix('"'))
        .is_some_and(|r| r.starts_with(',') || r.starts_with('}'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{ApiResource, DynamicObject, ObjectMeta};

    #[test]
    fn a_typed_child_is_applied_as_it_prints() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let text = applied_text(&cm).unwrap();
        assert_eq!(text.as_str(), serde_json::to_string(&cm).unwrap());
        assert_eq!(text["kind"], "ConfigMap");
    }

    #[test]
    fn an_object_that_does_not_print_its_type_first_gets_it() {
        let mut dynamic = DynamicObject::new("a", &ApiResource::erase::<ConfigMap>(&()));
        dynamic.types = None;
        let text = typed_text(&dynamic, "v1", "ConfigMap").unwrap();
        assert_eq!(text["apiVersion"], "v1");
        assert_eq!(text["kind"], "ConfigMap");
        assert_eq!(text["metadata"]["name"], "a");
        // Another kind's type is replaced.
        let text = typed_text(
            &DynamicObject::new("a", &ApiResource::erase::<ConfigMap>(&())),
            "v1",
            "Secret",
        )
        .unwrap();
        assert_eq!(text["kind"], "Secret");
    }

    #[test]
    fn only_the_exact_type_first_is_taken_as_it_is() {
        let ok = |t: &str| starts_with_type(t, "apps/v1", "Deployment");
        assert!(ok(r#"{"apiVersion":"apps/v1","kind":"Deployment"}"#));
        assert!(ok(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}"#
        ));
        assert!(!ok(r#"{"apiVersion":"apps/v1","kind":"DeploymentX"}"#));
        assert!(!ok(r#"{"apiVersion":"apps/v1beta1","kind":"Deployment"}"#));
        assert!(!ok(r#"{"kind":"Deployment","apiVersion":"apps/v1"}"#));
        assert!(!ok(r#"{"metadata":{}}"#));
    }
}
