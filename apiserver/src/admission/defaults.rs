//! The defaults kube-apiserver's v1 API fills in webhook configurations and admission policies.

use serde_json::{Value, json};

/// Fills in the defaults of kube-apiserver's v1 API: per webhook `failurePolicy: Fail`,
/// `matchPolicy: Equivalent`, empty `namespaceSelector` and `objectSelector`, `timeoutSeconds: 10`
/// (mutating ones also `reinvocationPolicy: Never`), rules' `scope: "*"` and a service's `port: 443`; an
/// empty `caBundle` is dropped, as Go's `omitempty` drops an empty `[]byte`.
pub(crate) fn default_configuration(obj: &mut Value, mutating: bool) {
    let Some(hooks) = obj["webhooks"].as_array_mut() else {
        return;
    };
    for hook in hooks.iter_mut().filter(|h| h.is_object()) {
        set_default(hook, "failurePolicy", json!("Fail"));
        set_default(hook, "matchPolicy", json!("Equivalent"));
        set_default(hook, "namespaceSelector", json!({}));
        set_default(hook, "objectSelector", json!({}));
        set_default(hook, "timeoutSeconds", json!(10));
        if mutating {
            set_default(hook, "reinvocationPolicy", json!("Never"));
        }
        if let Some(rules) = hook["rules"].as_array_mut() {
            for rule in rules.iter_mut().filter(|r| r.is_object()) {
                set_default(rule, "scope", json!("*"));
            }
        }
        // An empty `caBundle` decodes to an empty `[]byte`, which Go's `omitempty` leaves out.
        if hook["clientConfig"]["caBundle"].as_str() == Some("")
            && let Some(cc) = hook["clientConfig"].as_object_mut()
        {
            cc.remove("caBundle");
        }
        let service = &mut hook["clientConfig"]["service"];
        if service.is_object() {
            set_default(service, "port", json!(443));
        }
    }
}

/// The defaults of a `ValidatingAdmissionPolicy` (`binding: false`: `failurePolicy: Fail`, its
/// `matchConstraints`) or of a binding (its `matchResources`): `matchPolicy: Equivalent`, empty selectors
/// and rules' `scope: "*"`.
pub(crate) fn default_policy(obj: &mut Value, binding: bool) {
    let spec = &mut obj["spec"];
    if !spec.is_object() {
        return;
    }
    if !binding {
        set_default(spec, "failurePolicy", json!("Fail"));
    }
    let key = if binding {
        "matchResources"
    } else {
        "matchConstraints"
    };
    let resources = &mut spec[key];
    if !resources.is_object() {
        return;
    }
    set_default(resources, "matchPolicy", json!("Equivalent"));
    set_default(resources, "namespaceSelector", json!({}));
    set_default(resources, "objectSelector", json!({}));
    for list in ["resourceRules", "excludeResourceRules"] {
        if let Some(rules) = resources[list].as_array_mut() {
            for rule in rules.iter_mut().filter(|r| r.is_object()) {
                set_default(rule, "scope", json!("*"));
            }
        }
    }
}

fn set_default(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = obj.as_object_mut()
        && m.get(key).is_none_or(Value::is_null)
    {
        m.insert(key.to_string(), value);
    }
}
