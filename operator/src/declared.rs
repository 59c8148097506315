//! [`Declared`]: a kind whose reconciler (and admission webhooks) `#[derive(Reconciler)]` declared, so that
//! an operator binary takes the kind as a whole (`App::operate::<WebApp>()` with the `cli` feature) instead
//! of its reconciler, CRD and webhooks one by one, none of which it can then forget.

use crate::admission::Webhooks;
use crate::cache::CachedKind;
use crate::reconciler::Reconciler;

/// A kind whose reconciler `#[derive(Reconciler)]` declared, with no `data` to pass it; implemented by the
/// derive (which also writes `Kind::reconciler()` and, with `#[admission(..)]`, `Kind::webhooks()`).
///
/// By hand it is two functions:
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::prelude::*;
/// use kubewright::{Declared, admission::Webhooks};
///
/// #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
/// #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
/// pub struct NoteSpec {
///     pub text: String,
/// }
///
/// #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
/// #[serde(rename_all = "camelCase")]
/// pub struct NoteStatus {
///     pub observed_generation: Option<i64>,
///     #[serde(default)]
///     pub conditions: Vec<Condition>,
/// }
///
/// impl Declared for Note {
///     fn declared_reconciler() -> Reconciler<Note> {
///         Reconciler::new("note-controller")
///     }
///     fn declared_webhooks() -> Option<Webhooks<Note>> {
///         None
///     }
/// }
///
/// assert_eq!(Note::declared_reconciler().name(), "note-controller");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no reconciler declared without data",
    label = "not `#[derive(Reconciler)]`, or its reconciler takes `data`",
    note = "`#[derive(Reconciler)]` on the spec implements `Declared` when it declares no `data = ..`; with data, add the parts one by one: `.reconciler({Self}::reconciler(data)).crd({Self}::crd())`"
)]
pub trait Declared: CachedKind {
    /// The reconciler (what `Kind::reconciler()` returns).
    fn declared_reconciler() -> Reconciler<Self>;

    /// The admission webhooks (what `Kind::webhooks()` returns), when the kind declares any.
    fn declared_webhooks() -> Option<Webhooks<Self>>;

    /// The kind's versions (what `Kind::versions()` returns), when it declares other versions with
    /// `#[version(..)]`; `None` (the default) for a kind with one version.
    fn declared_versions() -> Option<crate::conversion::Versions<Self>> {
        None
    }
}

/// Without the `cli` feature there is no `App` to operate: the derive's `impl Operate` for a marker with
/// `#[reconciler(parent = K)]` is nothing (with it, see `cli/operate.rs`).
#[cfg(not(feature = "cli"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __operate_marker {
    ($marker:ident) => {};
}
