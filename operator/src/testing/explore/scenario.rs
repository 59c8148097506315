//! What a user (or the cluster around the operator) does while the operator runs: apply, patch and delete
//! objects, write a status as a built-in controller would, move the clock, and let the operator settle between
//! actions.

use std::fmt;

use k8s_openapi::jiff::SignedDuration;
use kube::api::{ApiResource, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde_json::Value;

use super::run::api;
use crate::testing::table::HarnessError;

/// The field manager of the scenario's applies, as a user's `kubectl apply --server-side` would be.
pub const SCENARIO_MANAGER: &str = "scenario";

/// A list of user actions on the embedded cluster, run in order while the operator reconciles.
///
/// Actions run back to back unless a [`settle`](Scenario::settle) stands between them: then the operator runs
/// passes until one round over every parent writes nothing before the next action. The operator always
/// settles after the last action.
///
/// The clock (the server's, which stamps objects, and the operator's, [`Context::now`](crate::Context::now))
/// stands still except at an [`advance`](Scenario::advance): a pass that asks to be requeued after a delay is
/// due again once an advance moves the clock to or past that time, not before.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::testing::explore::Scenario;
///
/// let mut settings = ConfigMap::default();
/// settings.metadata.name = Some("settings".into());
/// settings.metadata.namespace = Some("default".into());
/// let scenario = Scenario::new()
///     .apply(&settings)
///     .settle()
///     .patch::<ConfigMap>(Some("default"), "settings", serde_json::json!({"data": {"a": "1"}}))
///     .settle()
///     .delete::<ConfigMap>(Some("default"), "settings");
/// assert_eq!(scenario.len(), 5);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Scenario {
    pub(super) actions: Vec<Action>,
}

/// One user action.
#[derive(Debug, Clone)]
pub(super) enum Action {
    /// Moves the clock of the server and of the operator.
    Advance(SignedDuration),
    /// JSON merge patch of an object's status subresource.
    Status { object: Object, status: Value },
    /// Server-side apply (create or update) of an object.
    Apply { object: Object, body: Value },
    /// JSON merge patch of an object.
    Patch { object: Object, patch: Value },
    /// Delete an object (background propagation, as `kubectl delete`).
    Delete { object: Object },
    /// Let the operator settle before the next action.
    Settle,
    /// An external trigger names a parent: it is due, with no change in the cluster.
    Trigger { object: Object },
}

/// The object an action is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Object {
    pub(super) resource: ApiResource,
    pub(super) namespace: Option<String>,
    pub(super) name: String,
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.resource.kind, self.name),
            None => write!(f, "{} {}", self.resource.kind, self.name),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Apply { object, .. } => write!(f, "apply {object}"),
            Action::Patch { object, .. } => write!(f, "patch {object}"),
            Action::Delete { object } => write!(f, "delete {object}"),
            Action::Settle => write!(f, "settle"),
            Action::Advance(by) => write!(f, "advance the clock by {by:#}"),
            Action::Status { object, .. } => write!(f, "write the status of {object}"),
            Action::Trigger { object } => write!(f, "trigger {object} from outside the cluster"),
        }
    }
}

fn object<K: Resource<DynamicType = ()>>(namespace: Option<&str>, name: &str) -> Object {
    let namespaced = crate::cache::is_namespaced::<K>();
    Object {
        resource: ApiResource::erase::<K>(&()),
        namespace: namespaced.then(|| namespace.unwrap_or("default").to_string()),
        name: name.to_string(),
    }
}

impl Scenario {
    /// No actions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many actions (settles included).
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// Whether there are no actions.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Creates or updates `obj` by server-side apply (forced, as the field manager [`SCENARIO_MANAGER`]); a
    /// namespaced object with no namespace goes into `default`. An object that cannot be serialized applies
    /// nothing and fails the run, naming it.
    pub fn apply<K: Resource<DynamicType = ()> + Serialize>(mut self, obj: &K) -> Self {
        let name = obj.meta().name.clone().unwrap_or_default();
        let target = object::<K>(obj.meta().namespace.as_deref(), &name);
        let mut body = serde_json::to_value(obj).unwrap_or(Value::Null);
        if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
            meta.remove("uid");
            meta.remove("managedFields");
            meta.remove("creationTimestamp");
            if let Some(ns) = &target.namespace {
                meta.insert("namespace".into(), Value::String(ns.clone()));
            }
        }
        body["apiVersion"] = Value::String(target.resource.api_version.clone());
        body["kind"] = Value::String(target.resource.kind.clone());
        self.actions.push(Action::Apply {
            object: target,
            body,
        });
        self
    }

    /// Changes the object of kind `K` by a JSON merge patch.
    pub fn patch<K: Resource<DynamicType = ()>>(
        mut self,
        namespace: Option<&str>,
        name: &str,
        patch: Value,
    ) -> Self {
        self.actions.push(Action::Patch {
            object: object::<K>(namespace, name),
            patch,
        });
        self
    }

    /// Deletes the object of kind `K` (background propagation: its dependents go after it).
    pub fn delete<K: Resource<DynamicType = ()>>(
        mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Self {
        self.actions.push(Action::Delete {
            object: object::<K>(namespace, name),
        });
        self
    }

    /// Lets the operator settle before the next action.
    pub fn settle(mut self) -> Self {
        self.actions.push(Action::Settle);
        self
    }

    /// Moves the clock forward by `by`, for the server (the times it stamps) and the operator
    /// ([`Context::now`](crate::Context::now)) alike; the passes that asked to be requeued by then
    /// ([`Outcome::RequeueAfter`](crate::Outcome::RequeueAfter)) are due. Follow it with
    /// [`settle`](Self::settle) to let them run before the next action. A negative or zero `by` moves nothing
    /// (time does not go back).
    ///
    /// ```
    /// use k8s_openapi::jiff::SignedDuration;
    /// use kubewright::testing::explore::Scenario;
    ///
    /// // Three periods of an operator that acts every minute.
    /// let scenario = Scenario::new()
    ///     .advance(SignedDuration::from_mins(1))
    ///     .settle()
    ///     .advance(SignedDuration::from_mins(1))
    ///     .settle()
    ///     .advance(SignedDuration::from_mins(1));
    /// assert_eq!(scenario.len(), 5);
    /// ```
    pub fn advance(mut self, by: SignedDuration) -> Self {
        self.actions.push(Action::Advance(by));
        self
    }

    /// Writes the status of the object of kind `K` as another controller would (the Job controller completing
    /// a Job, say): a JSON merge patch of its status subresource with `{"status": status}`, so the fields of
    /// `status` are set, a `null` removes one, and a list replaces the list. The object must exist when the
    /// action runs (in the unperturbed run and in every perturbed one: a perturbed run that lacks it is a
    /// finding).
    ///
    /// ```
    /// use k8s_openapi::api::batch::v1::Job;
    /// use kubewright::testing::explore::Scenario;
    /// use serde_json::json;
    ///
    /// let done = json!({
    ///     "succeeded": 1,
    ///     "conditions": [{"type": "Complete", "status": "True"}],
    /// });
    /// let scenario = Scenario::new()
    ///     .settle()
    ///     .status::<Job>(Some("default"), "nightly-1735689600", done);
    /// assert_eq!(scenario.len(), 2);
    /// ```
    pub fn status<K: Resource<DynamicType = ()>>(
        mut self,
        namespace: Option<&str>,
        name: &str,
        status: Value,
    ) -> Self {
        self.actions.push(Action::Status {
            object: object::<K>(namespace, name),
            status,
        });
        self
    }

    /// Makes the parent of kind `K` due for a pass with no change in the cluster, as a trigger from outside
    /// it does ([`Reconciler::reconcile_on`](crate::Reconciler::reconcile_on),
    /// [`Reconciler::poll`](crate::Reconciler::poll)): the controllers of kind `K` reconcile it at the next
    /// settle. The explorer does not run the reconciler's own external streams; this is how a scenario plays
    /// them. A parent that does not exist is ignored, as the controller ignores it.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kubewright::testing::explore::Scenario;
    ///
    /// // The outside system a parent reads changed: reconcile it again.
    /// let scenario = Scenario::new().settle().trigger::<ConfigMap>(Some("default"), "site");
    /// assert_eq!(scenario.len(), 2);
    /// ```
    pub fn trigger<K: Resource<DynamicType = ()>>(
        mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Self {
        self.actions.push(Action::Trigger {
            object: object::<K>(namespace, name),
        });
        self
    }
}

impl Action {
    /// Carries the action out through `client`.
    pub(super) async fn perform(&self, client: &Client) -> Result<(), HarnessError> {
        let failed = |source| HarnessError::Kube {
            context: format!("the scenario's action `{self}`"),
            source,
        };
        match self {
            Action::Apply { object, body } => {
                if body.is_null() {
                    return Err(HarnessError::Setup(format!(
                        "the scenario's object {object} could not be serialized"
                    )));
                }
                let params = PatchParams::apply(SCENARIO_MANAGER).force();
                api(client, &object.resource, object.namespace.as_deref())
                    .patch(&object.name, &params, &Patch::Apply(body))
                    .await
                    .map_err(failed)?;
            }
            Action::Patch { object, patch } => {
                api(client, &object.resource, object.namespace.as_deref())
                    .patch(&object.name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map_err(failed)?;
            }
            Action::Delete { object } => {
                api(client, &object.resource, object.namespace.as_deref())
                    .delete(&object.name, &DeleteParams::background())
                    .await
                    .map_err(failed)?;
            }
            Action::Status { object, status } => {
                let patch = serde_json::json!({ "status": status });
                api(client, &object.resource, object.namespace.as_deref())
                    .patch_status(&object.name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(failed)?;
            }
            // The run carries these out itself.
            Action::Settle | Action::Advance(_) | Action::Trigger { .. } => {}
        }
        Ok(())
    }
}
