//! Helpers that `#[derive(Reconciler)]` calls; not a public API.
//!
//! Each helper is one call of the public builder API with the generic parameters spelled out, so that the
//! compiler checks the functions named in attributes against the signature the runtime expects, and reports a
//! mismatch at the attribute. Everything here can be written by hand with the public API.

use kube::Resource;
use serde::Serialize;

pub use crate::cache::CachedKind;
pub use crate::conditions::ReconcilerStatus;
pub use crate::context::Context;
pub use crate::error::Result;
pub use crate::outcome::Outcome;
pub use crate::reconciler::{ParentKind, Reconciler};
pub use crate::reconcilers::{
    ChildOutcome, ChildReconciler, ChildSetReconciler, Sequence, SyncReconciler, WithFinalizer,
    WriteStrategy,
};
pub use crate::stash::StashKey;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};

/// Whether a parent of this scope may own a child of scope `ChildScope`: Kubernetes only collects namespaced
/// children of namespaced owners in the same namespace, and children of cluster-scoped owners.
#[diagnostic::on_unimplemented(
    message = "a namespaced parent cannot own a cluster-scoped child",
    label = "this child kind is cluster-scoped, its parent kind is namespaced",
    note = "Kubernetes does not garbage-collect a cluster-scoped object owned by a namespaced one; make the parent cluster-scoped, or manage the object in a `#[sync]` step with a `#[finalize]` cleanup"
)]
pub trait OwnerScope<ChildScope> {}

impl OwnerScope<NamespaceResourceScope> for NamespaceResourceScope {}
// With a single impl for namespaced parents, the compiler would infer the child's scope from it and report a
// confusing type mismatch instead of the message above; a second impl (for a scope no kind has) prevents that.
impl OwnerScope<NoScope> for NamespaceResourceScope {}
impl OwnerScope<NamespaceResourceScope> for ClusterResourceScope {}
impl OwnerScope<ClusterResourceScope> for ClusterResourceScope {}

/// A scope no kind has (see the impls of [`OwnerScope`]).
#[derive(Debug)]
pub enum NoScope {}

/// The controller name used when `#[reconciler(name = ..)]` is not given: `<kind, lowercase>-controller`.
pub fn default_name<P: Resource<DynamicType = ()>>() -> String {
    format!("{}-controller", P::kind(&()).to_lowercase())
}

/// The root reconciler, named `name` or [`default_name`].
pub fn reconciler<P: ParentKind>(name: Option<&str>) -> Reconciler<P> {
    match name {
        Some(name) => Reconciler::new(name),
        None => Reconciler::new(default_name::<P>()),
    }
}

/// `#[child(..)]`: a [`ChildReconciler`] named after the child's kind (lowercase), whose child type is
/// inferred from `desired`.
pub fn child<P, C, F>(desired: F) -> ChildReconciler<P, C>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    P::Scope: OwnerScope<C::Scope>,
    C: CachedKind + Serialize,
    C::Scope: 'static,
    F: Fn(&P, &mut Context) -> Result<Option<C>> + Send + Sync + 'static,
{
    ChildReconciler::new(C::kind(&()).to_lowercase(), desired)
}

/// `#[children(..)]`: a [`ChildSetReconciler`] named after the children's kind (lowercase, plural).
pub fn children<P, C, F, I>(desired: F, id: I) -> ChildSetReconciler<P, C>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    P::Scope: OwnerScope<C::Scope>,
    C: CachedKind + Serialize,
    C::Scope: 'static,
    F: Fn(&P, &mut Context) -> Result<::std::vec::Vec<C>> + Send + Sync + 'static,
    I: Fn(&C) -> String + Send + Sync + 'static,
{
    ChildSetReconciler::new(C::plural(&()).into_owned(), desired, id)
}

/// `#[sync(f)]`: a [`SyncReconciler`] named after the function.
pub fn sync<P, F>(name: &'static str, sync: F) -> SyncReconciler<P>
where
    P: Send + Sync,
    F: Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
{
    SyncReconciler::new(name, sync)
}

/// `#[finalize(f)]`: a step that does nothing while the parent lives and runs `finalize` while it is being
/// deleted.
pub fn finalize<P, F>(name: &'static str, finalize: F) -> SyncReconciler<P>
where
    P: Send + Sync,
    F: Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
{
    SyncReconciler::new(name, |_: &mut P, _: &mut Context| Ok(Outcome::Continue)).finalize(finalize)
}

/// The steps of a reconciler with a finalizer, run inside one [`WithFinalizer`].
pub fn steps<P: Send + Sync>(name: &str) -> Sequence<P> {
    Sequence::new(name.to_string())
}

/// `#[reconciler(finalizer = ..)]`: the finalizer around all steps.
pub fn with_finalizer<P>(finalizer: &'static str, steps: Sequence<P>) -> WithFinalizer<P>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    WithFinalizer::new(finalizer, steps)
}

/// Checks at compile time that `S` can be a reconciler's status.
pub const fn assert_status<S: ReconcilerStatus>() {}

/// `strategy = "update"`.
pub const fn update() -> WriteStrategy {
    WriteStrategy::Update
}

/// `strategy = "apply"` (with `force = ..`).
pub const fn apply(force: bool) -> WriteStrategy {
    WriteStrategy::Apply { force }
}

/// `debounce_ms = N`.
pub const fn millis(ms: u64) -> std::time::Duration {
    std::time::Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};

    #[test]
    fn default_names_follow_the_kind() {
        assert_eq!(default_name::<ConfigMap>(), "configmap-controller");
        assert_eq!(default_name::<Namespace>(), "namespace-controller");
    }

    fn owns<P: OwnerScope<C>, C>() {}

    #[test]
    fn scopes_that_may_own() {
        owns::<NamespaceResourceScope, NamespaceResourceScope>();
        owns::<ClusterResourceScope, NamespaceResourceScope>();
        owns::<ClusterResourceScope, ClusterResourceScope>();
    }

    #[test]
    fn strategies() {
        assert_eq!(update(), WriteStrategy::Update);
        assert_eq!(apply(false), WriteStrategy::Apply { force: false });
        assert_eq!(millis(250), std::time::Duration::from_millis(250));
    }
}
