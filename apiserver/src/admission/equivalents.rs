//! `matchPolicy: Equivalent`: the resources kube-apiserver's equivalent resource mapper counts as the same
//! as the requested one (stored together: every served version of a custom resource, `events` of the core
//! group and of `events.k8s.io`, `horizontalpodautoscalers` of `autoscaling/v1` and `v2`), and the object as
//! a webhook matched through one of them sees it (converted to that version) and returns it.

use serde_json::Value;

use super::equivalent::Equivalent;
use super::review::Review;
use crate::registry::{Registry, ResourceType};

/// The resources equivalent to `rt` (with `subresource`, which they must serve too), `rt` included, in the
/// order kube-apiserver registers them: a custom resource's versions as its CRD (`crd`) lists them, built-in
/// ones by group and version.
pub(crate) fn equivalents(
    registry: &Registry,
    crd: Option<&Value>,
    rt: &ResourceType,
    subresource: Option<&str>,
) -> Vec<Equivalent> {
    let mut out: Vec<Equivalent> = registry
        .all()
        .filter(|t| t.storage == rt.storage)
        .filter(|t| match subresource {
            Some("status") => t.status_subresource,
            Some("scale") => t.scale.is_some(),
            _ => true,
        })
        .map(|t| Equivalent { rt: t.clone() })
        .collect();
    if let Some(versions) = crd.and_then(|c| c["spec"]["versions"].as_array()) {
        let index = |e: &Equivalent| {
            versions
                .iter()
                .position(|v| v["name"].as_str() == Some(e.rt.version.as_str()))
                .unwrap_or(usize::MAX)
        };
        out.sort_by_key(index);
    }
    out
}

/// `object`, of the requested resource `r`, as the webhook called for `invocation` sees it: converted to
/// that resource's version (`None` for the requested one: as it is).
pub(crate) fn versioned(
    r: &Review<'_>,
    invocation: Option<&Equivalent>,
    object: Option<&Value>,
) -> Option<Value> {
    let object = object?;
    match (invocation, own(r)) {
        (Some(to), Some(from)) => Some(convert(&from.rt, &to.rt, object)),
        _ => Some(object.clone()),
    }
}

/// `object` as the webhook called for `invocation` returned it (in that resource's version), back in the
/// requested resource's version.
pub(crate) fn unversioned(r: &Review<'_>, invocation: Option<&Equivalent>, object: Value) -> Value {
    match (invocation, own(r)) {
        (Some(from), Some(to)) => convert(&from.rt, &to.rt, &object),
        _ => object,
    }
}

/// Applies the schema defaults of the version the webhook called for `invocation` saw (`None`: the
/// requested one) to `object`, as kube-apiserver defaults a custom resource after each webhook's patch.
pub(crate) fn default_in(r: &Review<'_>, invocation: Option<&Equivalent>, object: &mut Value) {
    if let Some(schema) = invocation
        .or_else(|| own(r))
        .and_then(|e| e.rt.schema.as_ref())
    {
        schema.apply_defaults(object);
    }
}

/// The requested resource among `r`'s equivalents.
fn own<'a>(r: &Review<'a>) -> Option<&'a Equivalent> {
    r.equivalents.iter().find(|e| {
        (
            e.rt.group.as_str(),
            e.rt.version.as_str(),
            e.rt.plural.as_str(),
        ) == (r.group, r.version, r.resource)
    })
}

/// `object` of type `from` as type `to` serves it (through the stored form, and the CRD's conversion webhook
/// when a custom resource's CRD has one, as kube-apiserver converts for the webhook). A conversion that fails
/// leaves the object as only its `apiVersion` changes it (the request then meets that failure when stored).
fn convert(from: &ResourceType, to: &ResourceType, object: &Value) -> Value {
    crate::convert::try_to_storage(from, object.clone())
        .and_then(|stored| crate::convert::try_from_storage(to, &stored))
        .unwrap_or_else(|_| {
            crate::convert::from_storage(to, &crate::convert::to_storage(from, object.clone()))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::review::hook;

    /// A registry serving `things.example.dev` in `v1` (storage) and `v1beta1`.
    fn registry() -> Registry {
        let mut registry = Registry::default();
        for version in ["v1", "v1beta1"] {
            let mut t = ResourceType::new("example.dev", version, "Thing", "things", true);
            t.storage_version = "v1".into();
            t.custom = true;
            registry.insert(t);
        }
        registry
    }

    fn review<'a>(version: &'a str, equivalents: &'a [Equivalent]) -> Review<'a> {
        Review {
            group: "example.dev",
            version,
            kind: "Thing",
            resource: "things",
            subresource: None,
            namespaced: true,
            namespace: "ns",
            name: "a",
            operation: "CREATE",
            object: None,
            old_object: None,
            dry_run: false,
            namespace_labels: None,
            equivalents,
            invocation: None,
        }
    }

    fn webhook(policy: &str) -> Value {
        json!({"name": "w.example.dev", "matchPolicy": policy, "rules": [{
            "apiGroups": ["example.dev"], "apiVersions": ["v1"], "resources": ["things"],
            "operations": ["CREATE"],
        }]})
    }

    #[test]
    fn the_versions_of_a_custom_resource_come_in_the_crds_order() {
        let registry = registry();
        let Some(rt) = registry.get("example.dev", "v1", "things") else {
            panic!("things are served");
        };
        let crd = json!({"spec": {"versions": [{"name": "v1beta1"}, {"name": "v1"}]}});
        let found = equivalents(&registry, Some(&crd), &rt, None);
        let versions: Vec<&str> = found.iter().map(|e| e.rt.version.as_str()).collect();
        assert_eq!(versions, ["v1beta1", "v1"]);
        assert!(equivalents(&registry, Some(&crd), &rt, Some("status")).is_empty());
    }

    #[test]
    fn an_equivalent_webhook_is_called_for_the_other_version_an_exact_one_is_not() {
        let registry = registry();
        let Some(rt) = registry.get("example.dev", "v1beta1", "things") else {
            panic!("things are served");
        };
        let found = equivalents(&registry, None, &rt, None);
        let r = review("v1beta1", &found);
        let Some(h) = hook("c/0".into(), &webhook("Equivalent"), &r) else {
            panic!("the equivalent webhook matches");
        };
        let Some(invocation) = h.invocation.as_ref() else {
            panic!("through v1");
        };
        assert_eq!(invocation.rt.version, "v1");
        assert!(hook("c/0".into(), &webhook("Exact"), &r).is_none());
        // For the version the rules name, the webhook is called as it is.
        let r = review("v1", &found);
        let Some(h) = hook("c/0".into(), &webhook("Equivalent"), &r) else {
            panic!("the webhook matches v1");
        };
        assert!(h.invocation.is_none());
    }

    #[test]
    fn the_object_is_converted_to_the_webhooks_version_and_back() {
        let registry = registry();
        let Some(rt) = registry.get("example.dev", "v1beta1", "things") else {
            panic!("things are served");
        };
        let found = equivalents(&registry, None, &rt, None);
        let r = review("v1beta1", &found);
        let v1 = found.iter().find(|e| e.rt.version == "v1");
        let object =
            json!({"apiVersion": "example.dev/v1beta1", "kind": "Thing", "spec": {"a": 1}});
        let Some(seen) = versioned(&r, v1, Some(&object)) else {
            panic!("an object");
        };
        assert_eq!(seen["apiVersion"], "example.dev/v1");
        assert_eq!(seen["spec"], object["spec"]);
        assert_eq!(unversioned(&r, v1, seen), object);
        assert_eq!(versioned(&r, None, Some(&object)), Some(object));
    }
}
