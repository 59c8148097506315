//! Helpers that `#[derive(Reconciler)]` calls; not a public API.
//!
//! Each helper is one call of the public builder API with the generic parameters spelled out, so that the
//! compiler checks the functions named in attributes against the signature the runtime expects, and reports a
//! mismatch at the attribute. Everything here can be written by hand with the public API.

use std::future::Future;

use futures::future::{self, BoxFuture, FutureExt};
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;

pub use crate::cache::CachedKind;
pub use crate::conditions::ReconcilerStatus;
pub use crate::context::Context;
pub use crate::error::Result;
pub use crate::outcome::Outcome;
pub use crate::reconciler::{ParentKind, Reconciler};
pub use crate::reconcilers::{
    ChildOutcome, ChildReconciler, ChildSetReconciler, Retention, Sequence, SetStrategy,
    SyncReconciler, WithFinalizer, WriteStrategy,
};
pub use crate::stash::StashKey;
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

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
pub fn reconciler<P: crate::cache::CachedKind>(name: Option<&str>) -> Reconciler<P> {
    match name {
        Some(name) => Reconciler::new(name),
        None => Reconciler::new(default_name::<P>()),
    }
}

/// What a child kind must be for a parent of kind `P`: a kind the runtime can cache and serialize, whose scope
/// `P`'s scope can own. One bound for the helpers below, so that a desired function returning something else
/// is reported with this message (the compiler would otherwise name whichever of the underlying bounds it
/// checks first, such as `k8s_openapi::Metadata`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Kubernetes resource kind, so it cannot be a child",
    label = "this function's child type `{Self}` is not a Kubernetes resource kind",
    note = "a child is a `kube::Resource` with a static type (k8s-openapi's types such as `Deployment`, or the root type `#[derive(CustomResource)]` generates from a spec) that is `Clone`, `Debug`, `Serialize` and `DeserializeOwned`; to compute a value that is not an object, use a `#[sync]` step and the stash"
)]
pub trait ChildKind<P>: Sized {
    /// `#[child(..)]`: a [`ChildReconciler`] named after the child's kind (lowercase).
    fn child<F, M>(desired: F) -> ChildReconciler<P, Self>
    where
        F: DesiredFn<P, Self, M>;

    /// `#[children(..)]`: a [`ChildSetReconciler`] named after the children's kind (lowercase, plural).
    fn children<F, M, I>(desired: F, id: I) -> ChildSetReconciler<P, Self>
    where
        F: DesiredSetFn<P, Self, M>,
        I: Fn(&Self) -> String + Send + Sync + 'static;
}

impl<P, C> ChildKind<P> for C
where
    C: CachedKind + Serialize,
    C::Scope: 'static,
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    P::Scope: OwnerScope<C::Scope>,
{
    fn child<F, M>(desired: F) -> ChildReconciler<P, C>
    where
        F: DesiredFn<P, C, M>,
    {
        ChildReconciler::new_async(C::kind(&()).to_lowercase(), move |parent, cx| {
            desired.desired(parent, cx)
        })
    }

    fn children<F, M, I>(desired: F, id: I) -> ChildSetReconciler<P, C>
    where
        F: DesiredSetFn<P, C, M>,
        I: Fn(&C) -> String + Send + Sync + 'static,
    {
        ChildSetReconciler::new_async(
            C::plural(&()).into_owned(),
            move |parent, cx| desired.desired(parent, cx),
            id,
        )
    }
}

/// `#[child(..)]`: a [`ChildReconciler`] named after the child's kind (lowercase), whose child type is
/// inferred from `desired`, a plain or an `async fn` (see [`DesiredFn`]).
pub fn child<P, C, F, M>(desired: F) -> ChildReconciler<P, C>
where
    F: DesiredFn<P, C, M>,
    C: ChildKind<P>,
{
    C::child(desired)
}

/// `#[children(..)]`: a [`ChildSetReconciler`] named after the children's kind (lowercase, plural); `desired`
/// is a plain or an `async fn` (see [`DesiredSetFn`]).
pub fn children<P, C, F, M, I>(desired: F, id: I) -> ChildSetReconciler<P, C>
where
    F: DesiredSetFn<P, C, M>,
    C: ChildKind<P>,
    I: Fn(&C) -> String + Send + Sync + 'static,
{
    C::children(desired, id)
}

/// `#[sync(f)]`: a [`SyncReconciler`] named after the function, a plain or an `async fn` (see [`StepFn`]).
pub fn sync<P, F, M>(name: &'static str, sync: F) -> SyncReconciler<P>
where
    P: Send + Sync,
    F: StepFn<P, M>,
{
    SyncReconciler::new_async(name, move |parent, cx| sync.run(parent, cx))
}

/// `#[finalize(f)]`: a step that does nothing while the parent lives and runs `finalize` (a plain or an
/// `async fn`) while it is being deleted.
pub fn finalize<P, F, M>(name: &'static str, finalize: F) -> SyncReconciler<P>
where
    P: Send + Sync,
    F: StepFn<P, M>,
{
    SyncReconciler::new(name, |_: &mut P, _: &mut Context| Ok(Outcome::Continue))
        .finalize_async(move |parent, cx| finalize.run(parent, cx))
}

// Plain or async: the derive sees only a path, so the function's shape is told apart by the traits below, each
// implemented twice, for a plain `fn` returning `Result<T>` (marker [`Plain`]) and for a function returning a
// `Send` future of `Result<T>` (marker [`Async`], e.g. an `async fn`). The marker is a type parameter of the
// trait, so the two impls do not overlap, and the compiler infers it from the one impl the function satisfies;
// a function satisfying neither gets the trait's `on_unimplemented` message, spanned on its path.

/// The `map` function of `#[watches(..)]`: `fn(Arc<K>) -> Vec<ObjectRef<P>>`, or with the caches as a second
/// argument (`fn(Arc<K>, &Caches) -> Vec<ObjectRef<P>>`). The marker is the argument list.
#[diagnostic::on_unimplemented(
    message = "`#[watches(map = ..)]` expects `fn(Arc<Watched>) -> Vec<ObjectRef<{P}>>` or `fn(Arc<Watched>, &Caches) -> Vec<ObjectRef<{P}>>`",
    label = "not a `fn(Arc<Watched>) -> Vec<ObjectRef<{P}>>` nor a `fn(Arc<Watched>, &Caches) -> Vec<ObjectRef<{P}>>`",
    note = "a closure is not accepted here: define a function and name it; for parents that name the object in a spec field, `#[watches(Kind, by = field)]` needs no function"
)]
pub trait MapFn<K, P: ParentKind, M>: Send + Sync + 'static {
    /// Calls the function.
    fn map(&self, object: std::sync::Arc<K>, caches: &crate::Caches) -> Vec<ObjectRef<P>>;
}

impl<K, P: ParentKind, F> MapFn<K, P, (std::sync::Arc<K>,)> for F
where
    F: Fn(std::sync::Arc<K>) -> Vec<ObjectRef<P>> + Send + Sync + 'static,
{
    fn map(&self, object: std::sync::Arc<K>, _: &crate::Caches) -> Vec<ObjectRef<P>> {
        self(object)
    }
}

impl<K, P: ParentKind, F> MapFn<K, P, (std::sync::Arc<K>, crate::Caches)> for F
where
    F: Fn(std::sync::Arc<K>, &crate::Caches) -> Vec<ObjectRef<P>> + Send + Sync + 'static,
{
    fn map(&self, object: std::sync::Arc<K>, caches: &crate::Caches) -> Vec<ObjectRef<P>> {
        self(object, caches)
    }
}

/// `#[watches(K, map = f)]`: the mapper as [`Reconciler::watches_with`] takes it (boxed, so a function of the
/// wrong shape is reported once, here).
#[allow(clippy::type_complexity)]
pub fn mapper<K, P, M, F>(
    map: F,
) -> Box<dyn Fn(std::sync::Arc<K>, &crate::Caches) -> Vec<ObjectRef<P>> + Send + Sync>
where
    K: 'static,
    P: ParentKind,
    M: 'static,
    F: MapFn<K, P, M>,
{
    Box::new(move |object, caches| map.map(object, caches))
}

/// What a spec field naming other objects may be: a name, an optional name, or a list of them.
#[diagnostic::on_unimplemented(
    message = "`#[watches(by = ..)]` expects a field of type `String`, `Option<String>`, `Vec<String>` or `Option<Vec<String>>`",
    label = "the names of the watched objects cannot be read from this field"
)]
pub trait ReferenceNames {
    /// The names the field holds.
    fn names(&self) -> Vec<String>;
}

impl ReferenceNames for String {
    fn names(&self) -> Vec<String> {
        vec![self.clone()]
    }
}

impl<T: ReferenceNames> ReferenceNames for Option<T> {
    fn names(&self) -> Vec<String> {
        self.as_ref().map(T::names).unwrap_or_default()
    }
}

impl<T: ReferenceNames> ReferenceNames for Vec<T> {
    fn names(&self) -> Vec<String> {
        self.iter().flat_map(T::names).collect()
    }
}

/// `#[watches(K, by = field)]`: the names the field holds.
pub fn reference_names<T: ReferenceNames>(field: &T) -> Vec<String> {
    field.names()
}

/// Marker of [`DesiredFn`], [`DesiredSetFn`] and [`StepFn`] for a plain `fn`.
#[derive(Debug)]
pub enum Plain {}

/// Marker of [`DesiredFn`], [`DesiredSetFn`] and [`StepFn`] for an `async fn` (any function returning a `Send`
/// future).
#[derive(Debug)]
pub enum Async {}

/// A function of `(A, &'a mut Context)` returning a `Send` future of `Result<T>` that may borrow both
/// arguments: what an `async fn` taking references is, for each lifetime `'a`.
pub trait AsyncFnOf<'a, A, T>:
    Fn(A, &'a mut Context) -> <Self as AsyncFnOf<'a, A, T>>::Future
{
    /// The future the function returns.
    type Future: Future<Output = Result<T>> + Send + 'a;
}

impl<'a, A, T, F, Fut> AsyncFnOf<'a, A, T> for F
where
    F: Fn(A, &'a mut Context) -> Fut,
    Fut: Future<Output = Result<T>> + Send + 'a,
{
    type Future = Fut;
}

/// The `desired` function of `#[child(..)]`: `fn(&P, &mut Context) -> Result<Option<C>>`, or the same as an
/// `async fn`.
#[diagnostic::on_unimplemented(
    message = "`#[child(desired = ..)]` expects `fn(&{P}, &mut Context) -> kubewright::Result<Option<Child>>`, or an `async fn` of that signature",
    label = "not a `fn(&{P}, &mut Context) -> kubewright::Result<Option<Child>>` nor an `async fn` of that signature",
    note = "an `async fn` is accepted: its future must be `Send` (hold nothing that is not `Send`, such as an `Rc` or a `RefCell` borrow, across an `.await`)"
)]
pub trait DesiredFn<P, C, M>: Send + Sync + 'static {
    /// Calls the function, boxing its future (a ready one for a plain `fn`).
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Option<C>>>;
}

#[diagnostic::do_not_recommend]
impl<P, C, F> DesiredFn<P, C, Plain> for F
where
    C: Send + 'static,
    F: Fn(&P, &mut Context) -> Result<Option<C>> + Send + Sync + 'static,
{
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Option<C>>> {
        future::ready(self(parent, cx)).boxed()
    }
}

#[diagnostic::do_not_recommend]
impl<P, C, F> DesiredFn<P, C, Async> for F
where
    F: for<'a> AsyncFnOf<'a, &'a P, Option<C>> + Send + Sync + 'static,
{
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Option<C>>> {
        self(parent, cx).boxed()
    }
}

/// The `desired` function of `#[children(..)]`: `fn(&P, &mut Context) -> Result<Vec<C>>`, or the same as an
/// `async fn`.
#[diagnostic::on_unimplemented(
    message = "`#[children(desired = ..)]` expects `fn(&{P}, &mut Context) -> kubewright::Result<Vec<Child>>`, or an `async fn` of that signature",
    label = "not a `fn(&{P}, &mut Context) -> kubewright::Result<Vec<Child>>` nor an `async fn` of that signature",
    note = "an `async fn` is accepted: its future must be `Send` (hold nothing that is not `Send`, such as an `Rc` or a `RefCell` borrow, across an `.await`)"
)]
pub trait DesiredSetFn<P, C, M>: Send + Sync + 'static {
    /// Calls the function, boxing its future (a ready one for a plain `fn`).
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Vec<C>>>;
}

#[diagnostic::do_not_recommend]
impl<P, C, F> DesiredSetFn<P, C, Plain> for F
where
    C: Send + 'static,
    F: Fn(&P, &mut Context) -> Result<Vec<C>> + Send + Sync + 'static,
{
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Vec<C>>> {
        future::ready(self(parent, cx)).boxed()
    }
}

#[diagnostic::do_not_recommend]
impl<P, C, F> DesiredSetFn<P, C, Async> for F
where
    F: for<'a> AsyncFnOf<'a, &'a P, Vec<C>> + Send + Sync + 'static,
{
    fn desired<'a>(&self, parent: &'a P, cx: &'a mut Context) -> BoxFuture<'a, Result<Vec<C>>> {
        self(parent, cx).boxed()
    }
}

/// The function of `#[sync(..)]` or `#[finalize(..)]`: `fn(&mut P, &mut Context) -> Result<Outcome>`, or the
/// same as an `async fn`.
#[diagnostic::on_unimplemented(
    message = "`#[sync(..)]` and `#[finalize(..)]` expect `fn(&mut {P}, &mut Context) -> kubewright::Result<Outcome>`, or an `async fn` of that signature",
    label = "not a `fn(&mut {P}, &mut Context) -> kubewright::Result<Outcome>` nor an `async fn` of that signature",
    note = "an `async fn` is accepted: its future must be `Send` (hold nothing that is not `Send`, such as an `Rc` or a `RefCell` borrow, across an `.await`)"
)]
pub trait StepFn<P, M>: Send + Sync + 'static {
    /// Calls the function, boxing its future (a ready one for a plain `fn`).
    fn run<'a>(&self, parent: &'a mut P, cx: &'a mut Context) -> BoxFuture<'a, Result<Outcome>>;
}

#[diagnostic::do_not_recommend]
impl<P, F> StepFn<P, Plain> for F
where
    F: Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
{
    fn run<'a>(&self, parent: &'a mut P, cx: &'a mut Context) -> BoxFuture<'a, Result<Outcome>> {
        future::ready(self(parent, cx)).boxed()
    }
}

#[diagnostic::do_not_recommend]
impl<P, F> StepFn<P, Async> for F
where
    F: for<'a> AsyncFnOf<'a, &'a mut P, Outcome> + Send + Sync + 'static,
{
    fn run<'a>(&self, parent: &'a mut P, cx: &'a mut Context) -> BoxFuture<'a, Result<Outcome>> {
        self(parent, cx).boxed()
    }
}

/// A child step, for [`one_step_per_child_kind`]: the kind it manages.
pub trait ChildStep {
    /// The child kind.
    type Child;
}

impl<P, C> ChildStep for ChildReconciler<P, C> {
    type Child = C;
}

impl<P, C> ChildStep for ChildSetReconciler<P, C> {
    type Child = C;
}

/// Two child kinds, as a pair, are either [`Distinct`] or the [`SameKind`]: for a pair of two different kinds
/// only the first impl holds, for a pair of one kind both do, so the marker `K` of [`one_step_per_child_kind`]
/// cannot be inferred and the compiler reports "type annotations needed ... multiple impls satisfying
/// `(Kind, Kind): OneStepPerChildKind<_>`".
pub trait OneStepPerChildKind<K> {}

/// Marker of [`OneStepPerChildKind`]: two kinds.
#[derive(Debug)]
pub enum Distinct {}

/// Marker of [`OneStepPerChildKind`]: one kind, twice.
#[derive(Debug)]
pub enum SameKind {}

impl<A, B> OneStepPerChildKind<Distinct> for (A, B) {}
impl<A> OneStepPerChildKind<SameKind> for (A, A) {}

/// Compiles only when the two child steps manage different kinds (see [`OneStepPerChildKind`]): the derive
/// calls it for each pair of `#[child]`/`#[children]` steps, also when their kinds are inferred from the
/// desired functions, which the derive cannot see.
pub fn one_step_per_child_kind<A, B, K>(_first: &A, _second: &B)
where
    A: ChildStep,
    B: ChildStep,
    (A::Child, B::Child): OneStepPerChildKind<K>,
{
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

/// `strategy = "create"`.
pub const fn create_only() -> WriteStrategy {
    WriteStrategy::CreateOnly
}

/// `strategy = "apply"` (with `force = ..`).
pub const fn apply(force: bool) -> WriteStrategy {
    WriteStrategy::Apply { force }
}

/// `#[children(strategy = "create")]`.
pub const fn set_create_only() -> SetStrategy {
    SetStrategy::CreateOnly
}

/// `#[children(strategy = "apply")]` (with `force = ..`).
pub const fn set_apply(force: bool) -> SetStrategy {
    SetStrategy::Apply { force }
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

    /// A context on a client that never connects (none of the functions below makes a request).
    fn context() -> Context {
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        let client = kube::Client::try_from(config).expect("a client");
        Context::new(
            crate::Caches::new(client),
            std::sync::Arc::new(crate::RecordingDispatcher::default()),
            std::sync::Arc::new(crate::Settings::new("test")),
            Default::default(),
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        )
    }

    fn plain_desired(cm: &ConfigMap, _: &mut Context) -> Result<Option<Namespace>> {
        Ok(cm.metadata.name.clone().map(|name| Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(name),
                ..Default::default()
            },
            ..Default::default()
        }))
    }

    async fn async_desired(cm: &ConfigMap, cx: &mut Context) -> Result<Option<Namespace>> {
        tokio::task::yield_now().await;
        plain_desired(cm, cx)
    }

    fn plain_set(cm: &ConfigMap, cx: &mut Context) -> Result<Vec<Namespace>> {
        Ok(plain_desired(cm, cx)?.into_iter().collect())
    }

    async fn async_set(cm: &ConfigMap, cx: &mut Context) -> Result<Vec<Namespace>> {
        tokio::task::yield_now().await;
        plain_set(cm, cx)
    }

    fn plain_step(cm: &mut ConfigMap, _: &mut Context) -> Result<Outcome> {
        cm.metadata.name = Some("plain".into());
        Ok(Outcome::Continue)
    }

    async fn async_step(cm: &mut ConfigMap, _: &mut Context) -> Result<Outcome> {
        tokio::task::yield_now().await;
        cm.metadata.name = Some("async".into());
        Ok(Outcome::Continue)
    }

    fn desired<F: DesiredFn<ConfigMap, Namespace, M>, M>(f: F) -> F {
        f
    }

    fn desired_set<F: DesiredSetFn<ConfigMap, Namespace, M>, M>(f: F) -> F {
        f
    }

    fn step<F: StepFn<ConfigMap, M>, M>(f: F) -> F {
        f
    }

    #[tokio::test]
    async fn plain_and_async_functions_are_both_steps() {
        let mut cx = context();
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        let name = |ns: Option<Namespace>| ns.and_then(|ns| ns.metadata.name);
        let plain = desired(plain_desired).desired(&cm, &mut cx).await.unwrap();
        let awaited = desired(async_desired).desired(&cm, &mut cx).await.unwrap();
        assert_eq!(name(plain), Some("a".into()));
        assert_eq!(name(awaited), Some("a".into()));
        assert_eq!(
            desired_set(plain_set)
                .desired(&cm, &mut cx)
                .await
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            desired_set(async_set)
                .desired(&cm, &mut cx)
                .await
                .unwrap()
                .len(),
            1
        );
        step(plain_step).run(&mut cm, &mut cx).await.unwrap();
        assert_eq!(cm.metadata.name.as_deref(), Some("plain"));
        step(async_step).run(&mut cm, &mut cx).await.unwrap();
        assert_eq!(cm.metadata.name.as_deref(), Some("async"));
    }

    #[test]
    fn steps_of_different_kinds_pass_the_kind_check() {
        let configmaps =
            child::<Namespace, ConfigMap, _, _>(|_: &Namespace, _: &mut Context| Ok(None));
        let namespaces = children::<Namespace, Namespace, _, _, _>(
            |_: &Namespace, _: &mut Context| Ok(Vec::new()),
            |ns: &Namespace| ns.metadata.name.clone().unwrap_or_default(),
        );
        one_step_per_child_kind(&configmaps, &namespaces);
    }

    #[test]
    fn strategies() {
        assert_eq!(update(), WriteStrategy::Update);
        assert_eq!(create_only(), WriteStrategy::CreateOnly);
        assert_eq!(apply(false), WriteStrategy::Apply { force: false });
        assert_eq!(set_create_only(), SetStrategy::CreateOnly);
        assert_eq!(set_apply(true), SetStrategy::default());
        assert_eq!(millis(250), std::time::Duration::from_millis(250));
    }
}
