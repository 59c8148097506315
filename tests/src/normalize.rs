//! Comparing objects from two runs of one scenario: what differs between runs by nature is removed.

use serde_json::Value;

/// Removes from one object (in place) what two runs of the same scenario never share: `uid`,
/// `resourceVersion`, `creationTimestamp`, owner references' uids, the conditions' `lastTransitionTime` and
/// the managed fields' `time`; the owner label's value (a uid) becomes `uid`. `null` is left alone.
pub fn strip_run_identity(object: &mut Value) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in ["uid", "resourceVersion", "creationTimestamp"] {
            meta.remove(k);
        }
        if let Some(owner) = meta
            .get_mut("labels")
            .and_then(|l| l.get_mut(kubewright::OWNER_LABEL))
        {
            *owner = Value::String("uid".into());
        }
        for (list, field) in [("ownerReferences", "uid"), ("managedFields", "time")] {
            for entry in meta
                .get_mut(list)
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(entry) = entry.as_object_mut() {
                    entry.remove(field);
                }
            }
        }
    }
    for condition in object
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(condition) = condition.as_object_mut() {
            condition.remove("lastTransitionTime");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identities_and_times_go_and_the_rest_stays() {
        let mut o = json!({
            "metadata": {
                "name": "a", "uid": "u", "resourceVersion": "7", "creationTimestamp": "t",
                "ownerReferences": [{"kind": "WebApp", "uid": "p"}],
                "managedFields": [{"manager": "m", "time": "t"}],
            },
            "status": {"conditions": [{"type": "Ready", "lastTransitionTime": "t"}]},
        });
        strip_run_identity(&mut o);
        assert_eq!(
            o,
            json!({
                "metadata": {
                    "name": "a",
                    "ownerReferences": [{"kind": "WebApp"}],
                    "managedFields": [{"manager": "m"}],
                },
                "status": {"conditions": [{"type": "Ready"}]},
            })
        );
        let mut null = Value::Null;
        strip_run_identity(&mut null);
        assert_eq!(null, Value::Null);
    }
}
