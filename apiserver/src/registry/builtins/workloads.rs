//! Workloads and what scales or guards them: `apps`, `batch`, `autoscaling` and `policy`.

use k8s_openapi::api::{apps::v1 as apps, autoscaling, batch::v1 as batch, policy::v1 as policy};

use super::typed::builtin;
use crate::registry::resource_type::{Conversion, ResourceType};

/// The workload kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    let scaled = |t: ResourceType, short: &str| {
        t.short_names(&[short])
            .with_status()
            .with_generation()
            .with_scale(Some("status.selector"))
            .in_category("all")
    };
    vec![
        scaled(builtin::<apps::Deployment>(), "deploy"),
        scaled(builtin::<apps::StatefulSet>(), "sts"),
        scaled(builtin::<apps::ReplicaSet>(), "rs"),
        builtin::<apps::DaemonSet>()
            .short_names(&["ds"])
            .with_status()
            .with_generation()
            .in_category("all"),
        builtin::<apps::ControllerRevision>(),
        builtin::<batch::Job>()
            .with_status()
            .with_generation()
            .in_category("all"),
        builtin::<batch::CronJob>()
            .short_names(&["cj"])
            .with_status()
            .with_generation()
            .in_category("all"),
        hpa(builtin::<autoscaling::v2::HorizontalPodAutoscaler>()),
        hpa_v1(),
        builtin::<policy::PodDisruptionBudget>()
            .short_names(&["pdb"])
            .with_status()
            .with_generation(),
    ]
}

fn hpa(t: ResourceType) -> ResourceType {
    t.short_names(&["hpa"]).with_status().in_category("all")
}

/// `autoscaling/v1` HorizontalPodAutoscalers: served over the `autoscaling/v2` objects, as kube-apiserver
/// stores them; `v2` stays the preferred version.
fn hpa_v1() -> ResourceType {
    let mut t = hpa(builtin::<autoscaling::v1::HorizontalPodAutoscaler>());
    t.preferred = false;
    t.storage_version = "v2".into();
    t.conversion = Conversion::HorizontalPodAutoscalerV1;
    t
}
