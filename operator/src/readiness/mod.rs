//! Whether a child is ready: built in for the workload kinds, a hook for any other.
//!
//! A child step reports its condition (`<Kind>Ready`) as `True` only when the child is written *and* ready,
//! and the parent's `Ready` rolls up from those, so `Ready=True` means the children are ready, not merely
//! written. [`builtin`] decides for the kinds Kubernetes' own controllers bring to readiness:
//!
//! | kind | ready when |
//! | --- | --- |
//! | Deployment | the controller observed the spec, and updated and available replicas reach the desired count with no old replica left (as `kubectl rollout status`) |
//! | StatefulSet | the controller observed the spec, and ready and updated replicas reach the desired count |
//! | ReplicaSet | the controller observed the spec, and available replicas reach the desired count |
//! | DaemonSet | the controller observed the spec, and updated and available pods reach the desired count |
//! | Job | its `Complete` condition is `True` (not ready, reason `Failed`, when `Failed` is): finished, not running |
//! | Pod | its `Ready` condition is `True` |
//! | PersistentVolumeClaim | it is `Bound` |
//! | Service | of type `LoadBalancer`: it has an ingress; of any other type: always |
//!
//! Every other kind Kubernetes serves (ConfigMaps, Secrets, Roles, ...) is ready once written. A custom
//! resource (a kind of any other API group, [`is_builtin_group`]) is ready by the conventions most of their
//! controllers follow ([`conventional`], kstatus' rules): a `Ready` condition `True` for its current
//! generation, no `Stalled` or `Reconciling` condition `True`; until its controller reports a status it is not
//! ready, unless its kind has no `status` subresource (asked of the API server's discovery once per kind and
//! process), in which case it is ready once written. A step given a `ready` function
//! (`ChildReconciler::ready`) decides for itself.
//!
//! A child created once and run to its end is ready once it has *finished*, whichever way: [`finished`] takes
//! a Job as ready when its `Complete` or its `Failed` condition is `True` (and every other kind as
//! [`builtin`] does). It is the default of a child set that creates once
//! ([`SetStrategy::CreateOnly`](crate::reconcilers::SetStrategy::CreateOnly)), whose Jobs are runs of a
//! schedule: a failed run is a finished one, which the set's history keeps, not a set that is not ready. A single
//! child created once ([`WriteStrategy::CreateOnly`](crate::WriteStrategy::CreateOnly), a migration Job, say)
//! keeps [`builtin`]: its failure is the parent's. Either step takes a `ready` function to decide otherwise.
//!
//! On the in-memory cluster (`kubewright::testing::apiserver`, and the embedded cluster of `kubewright::cli`), the
//! status of exactly these kinds is played as kube-controller-manager writes it: Deployments, StatefulSets,
//! ReplicaSets and DaemonSets become ready once observed, and a Job runs for its run time on the server's clock
//! (10 seconds by default; `ApiServerBuilder::job_run_time`, or the Job's annotation
//! `kubewright-apiserver.dev/run-time`) and then completes, or fails when its annotation
//! `kubewright-apiserver.dev/fail` is `"true"` (`ApiServerBuilder::jobs_fail` for every Job). Pods,
//! PersistentVolumeClaims and LoadBalancer Services keep the status a test writes, so they are not ready there
//! until one does.

use std::any::Any;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Service};

mod custom;

pub(crate) use custom::Convention;
pub use custom::{conventional, is_builtin_group};

/// Whether a child is ready and, when not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// The child does what it is for.
    Ready,
    /// Not yet (or no longer).
    NotReady {
        /// CamelCase, for the condition's reason (e.g. `ReplicasUnavailable`).
        reason: String,
        /// For humans (e.g. `1 of 3 updated replicas are available`).
        message: String,
    },
}

impl Readiness {
    /// Not ready, for this reason.
    pub fn not_ready(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Readiness::NotReady {
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// Whether it is [`Readiness::Ready`].
    pub fn is_ready(&self) -> bool {
        matches!(self, Readiness::Ready)
    }
}

/// The built-in readiness of the workload kinds (see the [module documentation](self)); other kinds are ready.
///
/// ```
/// use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
/// use kubewright::readiness::{Readiness, builtin};
/// let mut d = Deployment::default();
/// d.metadata.generation = Some(1);
/// d.spec = Some(DeploymentSpec { replicas: Some(2), ..Default::default() });
/// assert!(!builtin(&d).is_ready());
/// d.status = Some(DeploymentStatus {
///     observed_generation: Some(1),
///     replicas: Some(2),
///     updated_replicas: Some(2),
///     available_replicas: Some(2),
///     ..Default::default()
/// });
/// assert_eq!(builtin(&d), Readiness::Ready);
/// ```
pub fn builtin<C: Any>(child: &C) -> Readiness {
    let child: &dyn Any = child;
    if let Some(d) = child.downcast_ref::<Deployment>() {
        deployment(d)
    } else if let Some(s) = child.downcast_ref::<StatefulSet>() {
        stateful_set(s)
    } else if let Some(r) = child.downcast_ref::<ReplicaSet>() {
        replica_set(r)
    } else if let Some(d) = child.downcast_ref::<DaemonSet>() {
        daemon_set(d)
    } else if let Some(j) = child.downcast_ref::<Job>() {
        job(j)
    } else if let Some(p) = child.downcast_ref::<Pod>() {
        pod(p)
    } else if let Some(c) = child.downcast_ref::<PersistentVolumeClaim>() {
        claim(c)
    } else if let Some(s) = child.downcast_ref::<Service>() {
        service(s)
    } else {
        Readiness::Ready
    }
}

/// The readiness of a child run to its end: a Job is ready once it has finished, its `Complete` or its
/// `Failed` condition `True`; any other kind as [`builtin`] decides (see the [module documentation](self)).
///
/// ```
/// use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
/// use kubewright::readiness::{builtin, finished};
/// let mut job = Job::default();
/// assert!(!finished(&job).is_ready());
/// job.status = Some(JobStatus {
///     conditions: Some(vec![JobCondition {
///         type_: "Failed".into(),
///         status: "True".into(),
///         ..Default::default()
///     }]),
///     ..Default::default()
/// });
/// assert!(finished(&job).is_ready());
/// assert!(!builtin(&job).is_ready());
/// ```
pub fn finished<C: Any>(child: &C) -> Readiness {
    let any: &dyn Any = child;
    match any.downcast_ref::<Job>() {
        Some(j) => match job(j) {
            Readiness::NotReady { reason, .. } if reason == "Failed" => Readiness::Ready,
            other => other,
        },
        None => builtin(child),
    }
}

/// Not ready while the workload controller has not observed the latest spec.
fn observed(generation: Option<i64>, observed: Option<i64>) -> Option<Readiness> {
    match (generation, observed) {
        (Some(g), Some(o)) if o >= g => None,
        _ => Some(Readiness::not_ready(
            "NotObserved",
            "waiting for the controller to observe the latest spec",
        )),
    }
}

fn deployment(d: &Deployment) -> Readiness {
    let desired = d.spec.spec_ref().and_then(|s| s.replicas).unwrap_or(1);
    let Some(status) = &d.status else {
        return Readiness::not_ready("NotObserved", "no status yet");
    };
    if let Some(not) = observed(d.metadata.generation, status.observed_generation) {
        return not;
    }
    let updated = status.updated_replicas.unwrap_or(0);
    let replicas = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if updated < desired {
        Readiness::not_ready(
            "RolloutInProgress",
            format!("{updated} of {desired} replicas updated"),
        )
    } else if replicas > updated {
        Readiness::not_ready(
            "RolloutInProgress",
            format!("{} old replicas pending termination", replicas - updated),
        )
    } else if available < updated {
        Readiness::not_ready(
            "ReplicasUnavailable",
            format!("{available} of {updated} updated replicas are available"),
        )
    } else {
        Readiness::Ready
    }
}

fn stateful_set(s: &StatefulSet) -> Readiness {
    let desired = s.spec.spec_ref().and_then(|s| s.replicas).unwrap_or(1);
    let Some(status) = &s.status else {
        return Readiness::not_ready("NotObserved", "no status yet");
    };
    if let Some(not) = observed(s.metadata.generation, status.observed_generation) {
        return not;
    }
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    if ready < desired {
        Readiness::not_ready(
            "ReplicasNotReady",
            format!("{ready} of {desired} replicas are ready"),
        )
    } else if updated < desired {
        Readiness::not_ready(
            "RolloutInProgress",
            format!("{updated} of {desired} replicas updated"),
        )
    } else {
        Readiness::Ready
    }
}

fn replica_set(r: &ReplicaSet) -> Readiness {
    let desired = r.spec.spec_ref().and_then(|s| s.replicas).unwrap_or(1);
    let Some(status) = &r.status else {
        return Readiness::not_ready("NotObserved", "no status yet");
    };
    if let Some(not) = observed(r.metadata.generation, status.observed_generation) {
        return not;
    }
    let available = status.available_replicas.unwrap_or(0);
    if available < desired {
        Readiness::not_ready(
            "ReplicasUnavailable",
            format!("{available} of {desired} replicas are available"),
        )
    } else {
        Readiness::Ready
    }
}

fn daemon_set(d: &DaemonSet) -> Readiness {
    let Some(status) = &d.status else {
        return Readiness::not_ready("NotObserved", "no status yet");
    };
    if let Some(not) = observed(d.metadata.generation, status.observed_generation) {
        return not;
    }
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    let available = status.number_available.unwrap_or(0);
    if updated < desired {
        Readiness::not_ready(
            "RolloutInProgress",
            format!("{updated} of {desired} pods updated"),
        )
    } else if available < desired {
        Readiness::not_ready(
            "PodsUnavailable",
            format!("{available} of {desired} pods are available"),
        )
    } else {
        Readiness::Ready
    }
}

fn job(j: &Job) -> Readiness {
    let conditions = j.status.as_ref().and_then(|s| s.conditions.as_ref());
    let is = |type_: &str| {
        conditions
            .into_iter()
            .flatten()
            .find(|c| c.type_ == type_ && c.status == "True")
    };
    if is("Complete").is_some() {
        Readiness::Ready
    } else if let Some(failed) = is("Failed") {
        Readiness::not_ready(
            "Failed",
            failed
                .message
                .clone()
                .unwrap_or_else(|| "the job failed".into()),
        )
    } else {
        Readiness::not_ready("NotComplete", "the job has not completed")
    }
}

fn pod(p: &Pod) -> Readiness {
    let ready = p
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True");
    if ready {
        Readiness::Ready
    } else {
        Readiness::not_ready("PodNotReady", "the pod is not ready")
    }
}

fn claim(c: &PersistentVolumeClaim) -> Readiness {
    match c.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Bound") => Readiness::Ready,
        phase => Readiness::not_ready(
            "NotBound",
            format!("the claim is {}", phase.unwrap_or("Pending")),
        ),
    }
}

fn service(s: &Service) -> Readiness {
    let load_balancer = s
        .spec
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .is_some_and(|t| t == "LoadBalancer");
    let has_ingress = s
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref())
        .is_some_and(|i| !i.is_empty());
    if !load_balancer || has_ingress {
        Readiness::Ready
    } else {
        Readiness::not_ready("NoIngress", "the load balancer has no ingress yet")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{DeploymentSpec, DeploymentStatus};
    use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaimStatus, ServiceSpec};

    fn deploy(generation: i64, status: Option<DeploymentStatus>) -> Deployment {
        let mut d = Deployment::default();
        d.metadata.generation = Some(generation);
        d.spec = Some(DeploymentSpec {
            replicas: Some(3),
            ..Default::default()
        });
        d.status = status;
        d
    }

    fn status(observed: i64, replicas: i32, updated: i32, available: i32) -> DeploymentStatus {
        DeploymentStatus {
            observed_generation: Some(observed),
            replicas: Some(replicas),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            ..Default::default()
        }
    }

    #[test]
    fn a_deployment_is_ready_when_its_rollout_is_complete() {
        assert!(!builtin(&deploy(1, None)).is_ready());
        assert_eq!(
            builtin(&deploy(2, Some(status(1, 3, 3, 3)))),
            Readiness::not_ready(
                "NotObserved",
                "waiting for the controller to observe the latest spec"
            )
        );
        assert_eq!(
            builtin(&deploy(1, Some(status(1, 3, 1, 1)))),
            Readiness::not_ready("RolloutInProgress", "1 of 3 replicas updated")
        );
        assert_eq!(
            builtin(&deploy(1, Some(status(1, 4, 3, 3)))),
            Readiness::not_ready("RolloutInProgress", "1 old replicas pending termination")
        );
        assert_eq!(
            builtin(&deploy(1, Some(status(1, 3, 3, 0)))),
            Readiness::not_ready(
                "ReplicasUnavailable",
                "0 of 3 updated replicas are available"
            )
        );
        assert_eq!(
            builtin(&deploy(1, Some(status(1, 3, 3, 3)))),
            Readiness::Ready
        );
    }

    #[test]
    fn claims_services_and_other_kinds() {
        let mut pvc = PersistentVolumeClaim::default();
        assert!(!builtin(&pvc).is_ready());
        pvc.status = Some(PersistentVolumeClaimStatus {
            phase: Some("Bound".into()),
            ..Default::default()
        });
        assert!(builtin(&pvc).is_ready());
        let mut svc = Service::default();
        assert!(builtin(&svc).is_ready(), "a ClusterIP service");
        svc.spec = Some(ServiceSpec {
            type_: Some("LoadBalancer".into()),
            ..Default::default()
        });
        assert!(!builtin(&svc).is_ready());
        assert!(builtin(&ConfigMap::default()).is_ready());
    }
}

/// A workload's spec: `Option<Spec>` in k8s-openapi's types before Kubernetes 1.37, `Spec` from 1.37 on. The
/// library enables no Kubernetes version (the operator's crate picks one), so it reads both.
trait SpecRef<T> {
    fn spec_ref(&self) -> Option<&T>;
}

impl<T> SpecRef<T> for Option<T> {
    fn spec_ref(&self) -> Option<&T> {
        self.as_ref()
    }
}

macro_rules! spec_ref_of_required {
    ($($t:ty),*) => {$(
        impl SpecRef<$t> for $t {
            fn spec_ref(&self) -> Option<&$t> {
                Some(self)
            }
        }
    )*};
}

spec_ref_of_required!(
    k8s_openapi::api::apps::v1::DeploymentSpec,
    k8s_openapi::api::apps::v1::StatefulSetSpec,
    k8s_openapi::api::apps::v1::ReplicaSetSpec
);
