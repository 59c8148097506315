//! Fixtures built by the runtime: a child exactly as the runtime leaves it on the cluster (desired-state
//! hash, namespace, controller owner reference), computed from the author's own desired function, so a table
//! test never copies a hash; and a parent with status, conditions and identity filled in.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::ResourceExt;
use serde::Serialize;

use super::env::default_time;
use super::pure::{ToStore, offline_caches};
use crate::__private::DesiredFn;
use crate::cache::{CachedKind, Caches};
use crate::command::RecordingDispatcher;
use crate::conditions::ReconcilerStatus;
use crate::context::{Context, Settings};
use crate::error::{Error, Result};
use crate::reconciler::ParentKind;
use crate::reconcilers::{WriteStrategy, prepare_child};

/// The uid [`Fixtures::parent`] gives a parent that has none.
pub const PARENT_UID: &str = "00000000-0000-4000-8000-000000000001";

/// Builds the objects of table tests from a parent: the children its desired functions return, as the
/// runtime applies them, and the parent itself with identity and status.
///
/// ```
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kubewright::testing::table::Fixtures;
/// # async fn demo<P: kubewright::ParentKind>(parent: P,
/// #     desired_config_map: fn(&P, &mut kubewright::Context) -> kubewright::Result<Option<ConfigMap>>)
/// #     -> kubewright::Result<()> {
/// let fx = Fixtures::new(parent);
/// // The ConfigMap the runtime would have applied: hash, namespace and owner reference included.
/// let live: ConfigMap = fx.child(desired_config_map).await?;
/// # let _ = live; Ok(()) }
/// ```
pub struct Fixtures<P: ParentKind> {
    parent: P,
    caches: Caches,
}

impl<P: ParentKind> std::fmt::Debug for Fixtures<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixtures")
            .field("parent", &self.parent.name_any())
            .finish_non_exhaustive()
    }
}

impl<P: ParentKind> Fixtures<P> {
    /// Fixtures of `parent`; a parent with no uid gets [`PARENT_UID`] and one with no generation gets 1 (as
    /// the API server would give them), so owner references and conditions can name them.
    pub fn new(parent: P) -> Self {
        let mut parent = parent;
        let meta = parent.meta_mut();
        meta.uid.get_or_insert_with(|| PARENT_UID.to_string());
        meta.generation.get_or_insert(1);
        if meta.namespace.is_none() && !crate::reconcilers::is_cluster_scoped::<P>() {
            meta.namespace = Some("default".into());
        }
        Self {
            parent,
            caches: offline_caches(),
        }
    }

    /// Objects the desired functions may read through the context (each kind at most once: a later call
    /// with the same kind replaces the earlier objects).
    pub fn given<K: CachedKind>(self, objects: Vec<K>) -> Self {
        self.caches.insert_store(objects.to_store());
        self
    }

    /// The parent, with the uid, generation and namespace [`Fixtures::new`] filled in.
    pub fn parent(&self) -> &P {
        &self.parent
    }

    /// The parent with a status: the given one, with `observedGeneration` set to the parent's generation.
    pub fn parent_with_status(&self, mut status: P::ParentStatus) -> P
    where
        P: kube::core::object::HasStatus<Status = <P as ParentKind>::ParentStatus>,
    {
        status.set_observed_generation(self.parent.meta().generation);
        let mut parent = self.parent.clone();
        *parent.status_mut() = Some(status);
        parent
    }

    /// A condition as the runtime writes it in table tests: at the harness's default time, for the parent's
    /// generation.
    pub fn condition(&self, type_: &str, status: &str, reason: &str, message: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                default_time(),
            ),
            observed_generation: self.parent.meta().generation,
        }
    }

    /// The child `desired` (the author's desired function, plain or `async`) returns for the parent, as the
    /// runtime leaves it on the cluster after applying it with server-side apply (the default strategy):
    /// with the desired-state hash, the parent's namespace and the controller owner reference. An error
    /// when the function fails or desires no child.
    pub async fn child<C, F, M>(&self, desired: F) -> Result<C>
    where
        C: CachedKind + Serialize,
        C::Scope: 'static,
        F: DesiredFn<P, C, M>,
    {
        self.child_written(desired, WriteStrategy::default()).await
    }

    /// [`child`](Self::child) for a child written with another strategy (no hash is stamped on children
    /// that are updated or created once).
    pub async fn child_written<C, F, M>(&self, desired: F, strategy: WriteStrategy) -> Result<C>
    where
        C: CachedKind + Serialize,
        C::Scope: 'static,
        F: DesiredFn<P, C, M>,
    {
        let mut cx = Context::new(
            self.caches.clone(),
            Arc::new(RecordingDispatcher::default()),
            Arc::new(Settings::new("fixtures")),
            self.parent.object_ref(&()),
            default_time(),
        );
        let Some(mut child) = desired.desired(&self.parent, &mut cx).await? else {
            return Err(Error::custom(format!(
                "the desired function returned no {} for {}",
                C::kind(&()),
                self.parent.name_any()
            )));
        };
        prepare_child(&self.parent, &mut child, &strategy)?;
        Ok(child)
    }
}
