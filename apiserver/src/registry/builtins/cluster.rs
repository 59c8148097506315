//! Cluster machinery: RBAC, storage, scheduling, coordination, certificates, API priority and fairness,
//! dynamic resource allocation (`resource.k8s.io`) and `events.k8s.io` Events.

use k8s_openapi::api::{
    certificates::v1 as certificates, coordination::v1 as coordination, events::v1 as events,
    flowcontrol::v1 as flowcontrol, rbac::v1 as rbac, resource::v1 as resource,
    scheduling::v1 as scheduling, storage::v1 as storage,
};

use super::typed::builtin;
use crate::registry::resource_type::{Conversion, ResourceType};

/// The cluster machinery kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    vec![
        builtin::<rbac::Role>(),
        builtin::<rbac::RoleBinding>(),
        builtin::<rbac::ClusterRole>(),
        builtin::<rbac::ClusterRoleBinding>(),
        builtin::<storage::CSIDriver>(),
        builtin::<storage::CSINode>(),
        builtin::<storage::CSIStorageCapacity>(),
        builtin::<storage::StorageClass>().short_names(&["sc"]),
        builtin::<storage::VolumeAttachment>().with_status(),
        builtin::<storage::VolumeAttributesClass>().short_names(&["vac"]),
        builtin::<scheduling::PriorityClass>()
            .short_names(&["pc"])
            .with_generation(),
        builtin::<coordination::Lease>(),
        builtin::<certificates::CertificateSigningRequest>()
            .short_names(&["csr"])
            .with_status(),
        builtin::<flowcontrol::FlowSchema>()
            .with_status()
            .with_generation(),
        builtin::<flowcontrol::PriorityLevelConfiguration>()
            .with_status()
            .with_generation(),
        builtin::<resource::DeviceClass>().with_generation(),
        builtin::<resource::ResourceClaim>().with_status(),
        builtin::<resource::ResourceClaimTemplate>(),
        builtin::<resource::ResourceSlice>().with_generation(),
        events_v1(),
    ]
}

/// `events.k8s.io/v1` Events: served over core Events, with their field selectors renamed.
fn events_v1() -> ResourceType {
    let mut t = builtin::<events::Event>().short_names(&["ev"]);
    t.storage = (String::new(), "events".into());
    t.storage_version = "v1".into();
    t.conversion = Conversion::EventsV1;
    for (field, path) in [
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("reason", "reason"),
        ("reportingController", "reportingComponent"),
        ("type", "type"),
    ] {
        t = t.field_selector(field, path);
    }
    t
}
