//! Parents whose status is not the operator's: Kubernetes' own kinds (a `Service`, a `Namespace`) and other
//! projects' custom resources.
//!
//! A reconciler's parent is usually the operator's own custom resource, whose status holds the conditions the
//! runtime writes. A controller that gives every annotated Service an Ingress, or every Namespace a quota, has
//! a parent whose status belongs to someone else (the Service's to kube-proxy and the cloud controller) or
//! that has none. [`Foreign<K>`] makes any cached kind a parent: steps see the object (it dereferences to
//! `K`), and the runtime writes nothing to its status. What would have been its conditions are told instead:
//! a Warning event when a pass fails or its `Ready` condition turns `False` (with its reason and message), a
//! Normal event `Ready` when it turns `True` again, and the parent counted in the metric
//! `operator_foreign_parents_not_ready{controller}` while it is not ready. The manifests grant no access to
//! its `status`.
//!
//! ```
//! use k8s_openapi::api::core::v1::Service;
//! use k8s_openapi::api::networking::v1::Ingress;
//! use kubewright::{ChildReconciler, Context, Foreign, Reconciler};
//!
//! fn desired_ingress(svc: &Foreign<Service>, _: &mut Context) -> kubewright::Result<Option<Ingress>> {
//!     let exposed = svc.metadata.annotations.as_ref()
//!         .is_some_and(|a| a.get("example.dev/expose").is_some_and(|v| v == "true"));
//!     Ok(exposed.then(Ingress::default))
//! }
//!
//! let reconciler: Reconciler<Foreign<Service>> =
//!     Reconciler::new("expose").step(ChildReconciler::new("ingress", desired_ingress));
//! ```

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::conditions::{ConditionUpdate, ReconcilerStatus};
use crate::context::Context;
use crate::reconciler::{ParentKind, Reconciler};

/// A parent of kind `K` whose status the runtime does not write (see the [module documentation](self)).
///
/// It serializes and deserializes as `K`, and dereferences to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Foreign<K> {
    object: K,
    status: Option<Unwritten>,
}

impl<K> Foreign<K> {
    /// `object`, as a parent.
    pub fn new(object: K) -> Self {
        Self {
            object,
            status: None,
        }
    }

    /// The object.
    pub fn into_inner(self) -> K {
        self.object
    }
}

impl<K> From<K> for Foreign<K> {
    fn from(object: K) -> Self {
        Self::new(object)
    }
}

impl<K> Deref for Foreign<K> {
    type Target = K;

    fn deref(&self) -> &K {
        &self.object
    }
}

impl<K> DerefMut for Foreign<K> {
    fn deref_mut(&mut self) -> &mut K {
        &mut self.object
    }
}

impl<K: Serialize> Serialize for Foreign<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.object.serialize(serializer)
    }
}

impl<'de, K: Deserialize<'de>> Deserialize<'de> for Foreign<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        K::deserialize(deserializer).map(Self::new)
    }
}

impl<K: Resource> Resource for Foreign<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        self.object.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.object.meta_mut()
    }
}

impl<K> HasStatus for Foreign<K> {
    type Status = Unwritten;

    fn status(&self) -> Option<&Unwritten> {
        self.status.as_ref()
    }

    fn status_mut(&mut self) -> &mut Option<Unwritten> {
        &mut self.status
    }
}

/// The status of a [`Foreign`] parent during a pass: the conditions the steps set, which the runtime tells as
/// events and metrics instead of writing them. It serializes as nothing, so the runtime never finds it
/// changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Unwritten {
    conditions: Vec<Condition>,
    observed_generation: Option<i64>,
}

impl Serialize for Unwritten {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        serializer.serialize_map(Some(0))?.end()
    }
}

impl ReconcilerStatus for Unwritten {
    const WRITTEN: bool = false;

    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }

    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }

    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }

    fn set_observed_generation(&mut self, generation: Option<i64>) {
        self.observed_generation = generation;
    }
}

/// The `Ready` condition each parent without a written status had at its last pass, so that only a change is
/// told (events are for changes, as conditions' transitions are).
#[derive(Debug, Default)]
pub(crate) struct LastReady {
    by_uid: Mutex<HashMap<String, ConditionUpdate>>,
}

/// What a change of a foreign parent's `Ready` condition is told as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadyChange {
    /// No change since the last pass.
    Same,
    /// Became ready (after not being ready; the first pass of a ready parent tells nothing).
    Ready,
    /// Not ready, with this reason and message.
    NotReady { reason: String, message: String },
}

impl LastReady {
    /// Records the parent `uid`'s `Ready` condition of this pass; what changed since the last.
    pub(crate) fn record(&self, uid: &str, ready: &ConditionUpdate) -> ReadyChange {
        let mut by_uid = self.by_uid.lock().unwrap_or_else(|e| e.into_inner());
        let before = by_uid.insert(uid.to_string(), ready.clone());
        let is_ready = ready.status == crate::conditions::ConditionStatus::True;
        match before {
            Some(b)
                if b.status == ready.status
                    && b.reason == ready.reason
                    && b.message == ready.message =>
            {
                ReadyChange::Same
            }
            None if is_ready => ReadyChange::Same,
            _ if is_ready => ReadyChange::Ready,
            _ => ReadyChange::NotReady {
                reason: ready.reason.clone(),
                message: ready.message.clone(),
            },
        }
    }

    /// How many parents are not ready now.
    pub(crate) fn not_ready(&self) -> usize {
        self.by_uid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|c| c.status != crate::conditions::ConditionStatus::True)
            .count()
    }

    /// Forgets the parent `uid` (deleted).
    pub(crate) fn forget(&self, uid: &str) {
        self.by_uid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uid);
    }

    /// Forgets every parent whose uid `keep` rejects.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.by_uid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|uid, _| keep(uid));
    }
}

impl<P: ParentKind> Reconciler<P> {
    /// For a parent whose status is not written ([`crate::Foreign`]): tells a change of its `Ready`
    /// condition as an event (Warning when it turns `False`, Normal `Ready` when it turns `True` again) and
    /// counts the parents not ready.
    pub(crate) async fn tell_ready(&self, parent: &P, ready: &ConditionUpdate, cx: &mut Context) {
        let Some(uid) = parent.uid() else { return };
        match self.last_ready.record(&uid, ready) {
            ReadyChange::Same => {}
            ReadyChange::Ready => {
                cx.event(false, "Ready", "Reconcile", "ready".to_string())
                    .await;
            }
            ReadyChange::NotReady { reason, message } => {
                cx.event(true, &reason, "Reconcile", message).await;
            }
        }
        crate::metrics::Metrics::global()
            .foreign_not_ready(self.name(), self.last_ready.not_ready());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Service;

    #[test]
    fn a_foreign_parent_reads_and_writes_as_its_kind_and_its_status_is_nothing() {
        let json = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"ports": [{"port": 80}]},
            "status": {"loadBalancer": {}},
        });
        let mut svc: Foreign<Service> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(svc.metadata.name.as_deref(), Some("web"));
        assert_eq!(serde_json::to_value(&svc).unwrap(), json);
        assert_eq!(<Foreign<Service> as Resource>::plural(&()), "services");
        svc.status_mut()
            .get_or_insert_with(Default::default)
            .conditions_mut()
            .push(Condition {
                type_: "Ready".into(),
                status: "False".into(),
                last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                ),
                message: String::new(),
                observed_generation: None,
                reason: "Failed".into(),
            });
        assert_eq!(serde_json::to_value(&svc).unwrap(), json);
        assert_eq!(
            serde_json::to_value(svc.status()).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn only_changes_of_ready_are_told() {
        let last = LastReady::default();
        let ready = ConditionUpdate::true_("Ready", "Ready", "");
        let failing = ConditionUpdate::false_("Ready", "ReconcileError", "boom");
        assert_eq!(last.record("a", &ready), ReadyChange::Same);
        assert_eq!(
            last.record("a", &failing),
            ReadyChange::NotReady {
                reason: "ReconcileError".into(),
                message: "boom".into()
            }
        );
        assert_eq!(last.record("a", &failing), ReadyChange::Same);
        assert_eq!(last.not_ready(), 1);
        assert_eq!(last.record("a", &ready), ReadyChange::Ready);
        assert_eq!(last.not_ready(), 0);
        assert!(matches!(
            last.record("b", &failing),
            ReadyChange::NotReady { .. }
        ));
        last.forget("b");
        assert_eq!(last.not_ready(), 0);
    }
}
