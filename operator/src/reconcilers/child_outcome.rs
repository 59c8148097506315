//! What a child step did in a pass ([`ChildOutcome`]), as the reflect callbacks and later steps see it.

use crate::context::Context;

/// What happened to a child in a pass, for the reflect callback.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildOutcome<C> {
    /// The child was created.
    Created(C),
    /// The child was changed.
    Updated(C),
    /// The child already matched.
    Unchanged(C),
    /// The child is being deleted (it has a `deletionTimestamp`): it is not written or deleted again, is not
    /// ready, and is created again once it is gone if it is still desired.
    Terminating(C),
    /// The child was deleted (the desired function returned none).
    Deleted,
    /// There is no child and none is wanted.
    Absent,
    /// An object with the child's name exists and is controlled by someone else; it was left alone.
    Conflict {
        /// The object's name.
        name: String,
        /// Who controls it, if anyone (`Kind/name`).
        controller: Option<String>,
    },
    /// The desired state could not be computed or written.
    Failed(String),
}

impl<C> ChildOutcome<C> {
    /// The child as it now is, if there is one (a terminating child still exists).
    pub fn child(&self) -> Option<&C> {
        match self {
            ChildOutcome::Created(c)
            | ChildOutcome::Updated(c)
            | ChildOutcome::Unchanged(c)
            | ChildOutcome::Terminating(c) => Some(c),
            _ => None,
        }
    }

    /// Whether the child is being deleted.
    pub fn is_terminating(&self) -> bool {
        matches!(self, ChildOutcome::Terminating(_))
    }

    /// Reflects the child into one status field: `value` of the child while it is in place (created, updated
    /// or unchanged), `None` once it is gone, terminating or someone else's, and the field left as it was
    /// when the pass failed (what was reported before still holds).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Service;
    /// # use kube::ResourceExt;
    /// # use kubewright::ChildOutcome;
    /// let mut service: Option<String> = Some("old".into());
    /// let mut s = Service::default();
    /// s.metadata.name = Some("web".into());
    /// ChildOutcome::Created(s).reflect_into(&mut service, |s| Some(s.name_any()));
    /// assert_eq!(service.as_deref(), Some("web"));
    /// ChildOutcome::<Service>::Failed("boom".into()).reflect_into(&mut service, |s| Some(s.name_any()));
    /// assert_eq!(service.as_deref(), Some("web"));
    /// ChildOutcome::<Service>::Deleted.reflect_into(&mut service, |s| Some(s.name_any()));
    /// assert_eq!(service, None);
    /// ```
    pub fn reflect_into<T>(&self, field: &mut Option<T>, value: impl FnOnce(&C) -> Option<T>) {
        match self {
            ChildOutcome::Created(c) | ChildOutcome::Updated(c) | ChildOutcome::Unchanged(c) => {
                *field = value(c);
            }
            ChildOutcome::Failed(_) => {}
            ChildOutcome::Terminating(_)
            | ChildOutcome::Deleted
            | ChildOutcome::Absent
            | ChildOutcome::Conflict { .. } => *field = None,
        }
    }
}

impl Context {
    /// What the child step of kind `C` decided earlier in this pass (`None` before it ran, or without one):
    /// a later step's desired function can build on it without reading it back from status.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # use kubewright::{ChildOutcome, Context};
    /// fn desired_secret(cx: &Context) -> Option<Secret> {
    ///     // Only once the ConfigMap step has its child in place.
    ///     let config = cx.child_outcome::<ConfigMap>()?.child()?;
    ///     # let _ = config;
    ///     Some(Secret::default())
    /// }
    /// ```
    pub fn child_outcome<C: Send + Sync + 'static>(&self) -> Option<&ChildOutcome<C>> {
        self.decided::<ChildOutcome<C>>()
    }
}
