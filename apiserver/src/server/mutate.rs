//! The mutating webhooks of a write, called as kube-apiserver's mutating dispatcher calls them
//! (`k8s.io/apiserver/pkg/admission/plugin/webhook/mutating`), reinvocation included.
//!
//! Each webhook is matched (rules, selectors, then match conditions) against the object as the webhooks
//! before it left it. A webhook whose patch changes the object makes every webhook with
//! `reinvocationPolicy: IfNeeded` called before it (since the last such change) due for a second call; once
//! every webhook ran, the due ones still matching are called again, in the same order, each once (a webhook
//! that did not run the first time is not called then). A patch that leaves the object as it was changes
//! nothing.
//!
//! After a patch a custom resource gets its schema's defaults again (a change is judged before). An empty
//! patch is no patch; a patch on a delete (which has no object) is refused with a 500, whatever
//! the failure policy.
//!
//! A webhook matched through an equivalent resource (`matchPolicy: Equivalent`) sees the object in that
//! resource's version, and its patch applies there.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::ApiServer;
use super::admit::{conditions_hold, denied, with_object};
use crate::admission::{Review, WebhookHandler, default_in, hook, ordered, unversioned, versioned};
use crate::error::ApiError;

/// What the mutating webhooks made of the object.
pub(super) struct Mutated {
    /// The object after every patch.
    pub object: Value,
    /// Whether any webhook answered with a patch.
    pub patched: bool,
}

/// Which webhooks are due for a second call (kube-apiserver's `webhookReinvokeContext`).
#[derive(Debug, Default)]
struct Reinvocation {
    /// `IfNeeded` webhooks called since the object last changed.
    since_change: HashSet<String>,
    /// The webhooks to call again.
    due: HashSet<String>,
    /// Whether any webhook changed the object (a second round is held).
    again: bool,
}

impl Reinvocation {
    /// A webhook's patch changed the object: the webhooks called before it are due.
    fn changed(&mut self) {
        self.due.extend(self.since_change.drain());
        self.again = true;
    }
}

impl ApiServer {
    /// Calls the mutating webhooks of `configurations` on `object` (`None` on a delete, where a webhook's
    /// patch is refused with a 500), adding their warnings to `warnings`; `Err` when one refuses or cannot be called under
    /// `failurePolicy: Fail`.
    pub(super) async fn mutate(
        &self,
        configurations: &[Value],
        base: &Review<'_>,
        object: Option<Value>,
        handlers: &HashMap<(String, String), WebhookHandler>,
        warnings: &mut Vec<String>,
    ) -> Result<Mutated, ApiError> {
        let deleting = object.is_none();
        let mut current = object.unwrap_or(Value::Null);
        let mut patched = false;
        let mut state = Reinvocation::default();
        let webhooks = ordered(configurations);
        for round in 0..2 {
            if round == 1 && !state.again {
                break;
            }
            for (id, w) in &webhooks {
                let Some(hook) = hook(
                    id.clone(),
                    w,
                    &with_object(base, (!deleting).then_some(&current)),
                ) else {
                    continue;
                };
                // The webhook sees the object in the version its rules name.
                let invocation = hook.invocation.as_ref();
                let seen = versioned(base, invocation, (!deleting).then_some(&current));
                let old = versioned(base, invocation, base.old_object);
                let review = Review {
                    object: seen.as_ref(),
                    old_object: old.as_ref(),
                    invocation,
                    ..base.clone()
                };
                if !conditions_hold(&hook, &review)? {
                    continue;
                }
                if round == 1 && !state.due.contains(&hook.id) {
                    continue;
                }
                let verdict = self.ask(&hook, &review, handlers).await?;
                let mut changed = false;
                if let Some(verdict) = verdict {
                    warnings.extend(verdict.warnings.iter().cloned());
                    if !verdict.allowed {
                        return Err(denied(&hook, &verdict));
                    }
                    // An empty patch is no patch; there is nothing to patch on a delete.
                    let patch = verdict
                        .patch
                        .filter(|p| p.as_array().is_none_or(|ops| !ops.is_empty()));
                    match (patch, &seen) {
                        (Some(patch), Some(seen)) => {
                            let mut next = apply(&hook.name, seen, patch)?;
                            changed = &next != seen;
                            // The next webhook sees the patched object defaulted again.
                            default_in(base, invocation, &mut next);
                            current = unversioned(base, invocation, next);
                            patched = true;
                        }
                        (Some(_), None) => return Err(no_object(&hook.name)),
                        (None, _) => {}
                    }
                }
                if changed {
                    state.changed();
                }
                if hook.reinvoke {
                    state.since_change.insert(hook.id.clone());
                }
            }
        }
        Ok(Mutated {
            object: current,
            patched,
        })
    }
}

/// kube-apiserver's error for a patch where there is no object (a delete): 500, whatever the failure policy.
fn no_object(webhook: &str) -> ApiError {
    let cause = format!(
        "admission webhook \"{webhook}\" attempted to modify the object, which is not supported for this operation"
    );
    let mut error = ApiError::internal(cause.clone());
    error.details = Some(serde_json::json!({"causes": [{"message": cause}]}));
    error
}

/// `object` with a webhook's JSON `patch` applied; `Err` (500) when it is not a JSON patch or does not
/// apply.
fn apply(webhook: &str, object: &Value, patch: Value) -> Result<Value, ApiError> {
    let patch: json_patch::Patch = serde_json::from_value(patch).map_err(|e| {
        ApiError::internal(format!(
            "failed calling webhook \"{webhook}\": the patch is not a JSON patch: {e}"
        ))
    })?;
    let mut next = object.clone();
    json_patch::patch(&mut next, &patch).map_err(|e| {
        ApiError::internal(format!(
            "failed calling webhook \"{webhook}\": the patch does not apply: {e}"
        ))
    })?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_makes_the_webhooks_called_before_it_due() {
        let mut state = Reinvocation::default();
        state.since_change.insert("a".into());
        state.changed();
        state.since_change.insert("b".into());
        assert!(state.again);
        assert!(state.due.contains("a"));
        assert!(!state.due.contains("b"));
        state.changed();
        assert!(state.due.contains("b"));
        assert!(state.since_change.is_empty());
    }

    #[test]
    fn a_patch_is_applied_or_refused() {
        let object = serde_json::json!({"data": {"a": "1"}});
        let patch = serde_json::json!([{"op": "add", "path": "/data/b", "value": "2"}]);
        let next = apply("w", &object, patch).expect("the patch applies");
        assert_eq!(next["data"]["b"], "2");
        let bad = serde_json::json!([{"op": "remove", "path": "/nope"}]);
        let e = apply("w", &object, bad).expect_err("the patch does not apply");
        assert_eq!(e.code, 500);
    }
}
