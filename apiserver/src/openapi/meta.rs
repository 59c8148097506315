//! The `meta.k8s.io` types every group-version document publishes beside its kinds (the bodies and answers of
//! deletes, watches, patches, lists and discovery; the scale subresource's `Scale`), marked with the kinds
//! kube-apiserver marks them with, and `WatchEvent` described as kube-openapi describes it.

use serde_json::{Map, Value, json};

/// The group-versions of kube-apiserver 1.35's scheme, served or not, in its order: each registers
/// `DeleteOptions` and `WatchEvent`, and kube-apiserver's schemas of these two name them all.
const SCHEME_GROUP_VERSIONS: &[(&str, &str)] = &[
    ("", "v1"),
    ("admission.k8s.io", "v1"),
    ("admission.k8s.io", "v1beta1"),
    ("admissionregistration.k8s.io", "v1"),
    ("admissionregistration.k8s.io", "v1alpha1"),
    ("admissionregistration.k8s.io", "v1beta1"),
    ("apiextensions.k8s.io", "v1"),
    ("apiextensions.k8s.io", "v1beta1"),
    ("apiregistration.k8s.io", "v1"),
    ("apiregistration.k8s.io", "v1beta1"),
    ("apps", "v1"),
    ("apps", "v1beta1"),
    ("apps", "v1beta2"),
    ("authentication.k8s.io", "v1"),
    ("authentication.k8s.io", "v1alpha1"),
    ("authentication.k8s.io", "v1beta1"),
    ("authorization.k8s.io", "v1"),
    ("authorization.k8s.io", "v1beta1"),
    ("autoscaling", "v1"),
    ("autoscaling", "v2"),
    ("autoscaling", "v2beta1"),
    ("autoscaling", "v2beta2"),
    ("batch", "v1"),
    ("batch", "v1beta1"),
    ("certificates.k8s.io", "v1"),
    ("certificates.k8s.io", "v1alpha1"),
    ("certificates.k8s.io", "v1beta1"),
    ("coordination.k8s.io", "v1"),
    ("coordination.k8s.io", "v1alpha2"),
    ("coordination.k8s.io", "v1beta1"),
    ("discovery.k8s.io", "v1"),
    ("discovery.k8s.io", "v1beta1"),
    ("events.k8s.io", "v1"),
    ("events.k8s.io", "v1beta1"),
    ("extensions", "v1beta1"),
    ("flowcontrol.apiserver.k8s.io", "v1"),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"),
    ("imagepolicy.k8s.io", "v1alpha1"),
    ("internal.apiserver.k8s.io", "v1alpha1"),
    ("networking.k8s.io", "v1"),
    ("networking.k8s.io", "v1beta1"),
    ("node.k8s.io", "v1"),
    ("node.k8s.io", "v1alpha1"),
    ("node.k8s.io", "v1beta1"),
    ("policy", "v1"),
    ("policy", "v1beta1"),
    ("rbac.authorization.k8s.io", "v1"),
    ("rbac.authorization.k8s.io", "v1alpha1"),
    ("rbac.authorization.k8s.io", "v1beta1"),
    ("resource.k8s.io", "v1"),
    ("resource.k8s.io", "v1alpha3"),
    ("resource.k8s.io", "v1beta1"),
    ("resource.k8s.io", "v1beta2"),
    ("scheduling.k8s.io", "v1"),
    ("scheduling.k8s.io", "v1alpha1"),
    ("scheduling.k8s.io", "v1beta1"),
    ("storage.k8s.io", "v1"),
    ("storage.k8s.io", "v1alpha1"),
    ("storage.k8s.io", "v1beta1"),
    ("storagemigration.k8s.io", "v1beta1"),
];

/// Marks the shared types in `defs` (those present) as kube-apiserver marks them.
pub(super) fn mark(defs: &mut Map<String, Value>) {
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
    for kind in ["DeleteOptions", "WatchEvent"] {
        let gvks: Vec<Value> = SCHEME_GROUP_VERSIONS
            .iter()
            .map(|(group, version)| json!({ "group": group, "kind": kind, "version": version }))
            .collect();
        set_gvk(defs, &format!("{META}.{kind}"), Value::Array(gvks));
    }
    for kind in [
        "Status",
        "APIResourceList",
        "APIGroup",
        "APIGroupList",
        "APIVersions",
    ] {
        set_gvk(
            defs,
            &format!("{META}.{kind}"),
            json!([{ "group": "", "kind": kind, "version": "v1" }]),
        );
    }
    set_gvk(
        defs,
        "io.k8s.api.autoscaling.v1.Scale",
        json!([{ "group": "autoscaling", "kind": "Scale", "version": "v1" }]),
    );
    watch_event_description(defs.get_mut(&format!("{META}.WatchEvent")));
}

/// The groups of kube-apiserver's scheme that apiextensions-apiserver's does not have: a custom resource's
/// document marks `DeleteOptions` with the versions of the others.
const NOT_IN_APIEXTENSIONS_SCHEME: &[&str] = &[
    "admission.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "imagepolicy.k8s.io",
];

/// Marks the shared types of a custom resource's document (`defs`) as apiextensions-apiserver marks them.
pub(super) fn mark_custom(defs: &mut Map<String, Value>) {
    const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
    let gvks: Vec<Value> = SCHEME_GROUP_VERSIONS
        .iter()
        .filter(|(group, _)| !NOT_IN_APIEXTENSIONS_SCHEME.contains(group))
        .map(|(group, version)| json!({ "group": group, "kind": "DeleteOptions", "version": version }))
        .collect();
    set_gvk(defs, &format!("{META}.DeleteOptions"), Value::Array(gvks));
    set_gvk(
        defs,
        &format!("{META}.Status"),
        json!([{ "group": "", "kind": "Status", "version": "v1" }]),
    );
    set_gvk(
        defs,
        "io.k8s.api.autoscaling.v1.Scale",
        json!([{ "group": "autoscaling", "kind": "Scale", "version": "v1" }]),
    );
}

fn set_gvk(defs: &mut Map<String, Value>, name: &str, gvks: Value) {
    if let Some(Value::Object(schema)) = defs.get_mut(name) {
        schema.insert("x-kubernetes-group-version-kind".into(), gvks);
    }
}

/// k8s-openapi gives `WatchEvent` one description with the paragraph about `object` in it; kube-openapi
/// gives that paragraph to `object`.
fn watch_event_description(schema: Option<&mut Value>) {
    let Some(Value::Object(schema)) = schema else {
        return;
    };
    let Some(text) = schema.get("description").and_then(Value::as_str) else {
        return;
    };
    let Some((own, object)) = text.split_once("\n\n") else {
        return;
    };
    let (own, object) = (own.to_string(), object.trim_end().to_string());
    schema.insert("description".into(), Value::String(own));
    if let Some(Value::Object(field)) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("object"))
    {
        let reference = field.remove("$ref");
        field.insert("description".into(), Value::String(object));
        if let Some(reference) = reference {
            field.insert("allOf".into(), json!([{ "$ref": reference }]));
        }
    }
}
