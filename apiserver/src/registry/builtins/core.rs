//! The core group (`/api/v1`): namespaces, pods, services, config, storage claims, quotas and the rest.

use k8s_openapi::api::core::v1 as core;

use super::typed::builtin;
use crate::registry::resource_type::ResourceType;

/// The core kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    vec![
        builtin::<core::Namespace>()
            .short_names(&["ns"])
            .with_status()
            .without_delete_collection()
            .field_selector("status.phase", "status.phase"),
        builtin::<core::ConfigMap>().short_names(&["cm"]),
        builtin::<core::Secret>().field_selector("type", "type"),
        builtin::<core::Service>()
            .short_names(&["svc"])
            .with_status()
            .in_category("all"),
        builtin::<core::ServiceAccount>().short_names(&["sa"]),
        builtin::<core::Pod>()
            .short_names(&["po"])
            .with_status()
            .with_generation()
            .in_category("all")
            .field_selector("spec.nodeName", "spec.nodeName")
            .field_selector("spec.serviceAccountName", "spec.serviceAccountName")
            .field_selector("status.phase", "status.phase")
            .field_selector("status.podIP", "status.podIP"),
        events(),
        builtin::<core::Endpoints>().short_names(&["ep"]),
        builtin::<core::PersistentVolumeClaim>()
            .short_names(&["pvc"])
            .with_status(),
        builtin::<core::PersistentVolume>()
            .short_names(&["pv"])
            .with_status(),
        builtin::<core::Node>().short_names(&["no"]).with_status(),
        builtin::<core::LimitRange>().short_names(&["limits"]),
        builtin::<core::ResourceQuota>()
            .short_names(&["quota"])
            .with_status(),
        builtin::<core::PodTemplate>().with_generation(),
        builtin::<core::ReplicationController>()
            .short_names(&["rc"])
            .with_status()
            .with_generation()
            .with_scale(None)
            .in_category("all"),
    ]
}

/// Core Events, with the field selectors kube-apiserver supports on them.
fn events() -> ResourceType {
    let mut events = builtin::<core::Event>().short_names(&["ev"]);
    for (field, path) in [
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        (
            "involvedObject.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source.component"),
        ("type", "type"),
    ] {
        events = events.field_selector(field, path);
    }
    events
}
