//! [`Operate`]: what [`App::operate`](super::App::operate) takes, a kind the derive declared (its reconciler,
//! CRD, versions and webhooks) or a marker struct whose `#[reconciler(parent = K)]` declared a reconciler of a
//! built-in or foreign kind (its reconciler alone: such a kind has no CRD of the operator's).

use kube::CustomResourceExt;

use super::App;
use crate::{Declared, ParentKind};

/// What [`App::operate::<K>()`](super::App::operate) adds to an operator binary for `K`.
///
/// - A kind `#[derive(Reconciler)]` declared without `data` ([`Declared`]): its reconciler (with its RBAC in
///   the manifests), its CRD, its versions and its admission webhooks.
/// - A marker struct with `#[reconciler(parent = Service)]` (the derive implements `Operate` for it): its
///   reconciler of [`Foreign<Service>`](crate::Foreign) and that reconciler's RBAC; no CRD, since the kind is
///   Kubernetes' or another project's.
///
/// By hand, a marker implements it with [`App::reconciler`](super::App::reconciler):
///
/// ```
/// use k8s_openapi::api::core::v1::Service;
/// use kubewright::cli::{App, Operate};
/// use kubewright::{Foreign, Reconciler};
///
/// struct Watcher;
///
/// impl Operate for Watcher {
///     fn operate(app: App) -> App {
///         app.reconciler(Reconciler::<Foreign<Service>>::new("watcher"))
///     }
/// }
///
/// let app = App::new("watcher").operate::<Watcher>();
/// assert!(app.installation().crds().is_empty());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares nothing `App::operate` can run",
    label = "neither a kind `#[derive(Reconciler)]` declared nor a marker with `#[reconciler(parent = ..)]`",
    note = "`App::operate::<K>()` takes a kind whose reconciler `#[derive(Reconciler)]` declared without `data`, or a marker struct with `#[reconciler(parent = Kind)]`; a kind whose reconciler takes `data` adds the parts one by one: `.reconciler({Self}::reconciler(data)).crd({Self}::crd())`"
)]
pub trait Operate {
    /// `app` with what `Self` declares added.
    fn operate(app: App) -> App;
}

impl<K> Operate for K
where
    K: Declared + ParentKind + CustomResourceExt,
{
    fn operate(app: App) -> App {
        let app = app.reconciler(K::declared_reconciler()).crd(K::crd());
        let app = match K::declared_versions() {
            Some(versions) => app.versions(versions),
            None => app,
        };
        match K::declared_webhooks() {
            Some(webhooks) => app.webhooks(webhooks),
            None => app,
        }
    }
}

/// `impl Operate for Marker`, which the derive emits for a marker with `#[reconciler(parent = K)]`; nothing
/// when the `cli` feature is off (the derive cannot see the runtime's features, this macro can).
#[doc(hidden)]
#[macro_export]
macro_rules! __operate_marker {
    ($marker:ident) => {
        #[automatically_derived]
        impl $crate::cli::Operate for $marker {
            fn operate(app: $crate::cli::App) -> $crate::cli::App {
                app.reconciler($marker::reconciler())
            }
        }
    };
}
