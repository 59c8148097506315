//! kube-apiserver's authorizer with `--authorization-mode=RBAC`: members of `system:masters` are allowed
//! (the privileged-group authorizer it always puts first, with an empty reason), then RBAC
//! (`plugin/pkg/auth/authorizer/rbac`) walks the ClusterRoleBindings, and in a namespace the RoleBindings,
//! that name the user, its groups or its service account, and allows the first rule of their roles that
//! matches, with the reason `RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"`. A
//! binding whose role is missing adds its error to the reason of a request no rule allows
//! (`RBAC: clusterrole.rbac.authorization.k8s.io "r" not found`). RBAC never denies: a request no rule
//! allows has no opinion (`allowed` and `denied` false).
//!
//! Bindings are visited in name order (kube-apiserver's informer cache in no set order): when several
//! allow a request, the binding named may differ. kube-apiserver's bootstrap policy (`cluster-admin`,
//! `system:discovery`, ... and their bindings) is not created by the in-memory server.

use serde_json::Value;

use super::user::UserInfo;
use crate::store::State;

const GROUP: &str = "rbac.authorization.k8s.io";

/// What a request asks to do (`authorizer.Attributes`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Attributes {
    /// Who asks.
    pub(crate) user: UserInfo,
    /// The verb.
    pub(crate) verb: String,
    /// Whether it is a resource request (else a non-resource path).
    pub(crate) resource_request: bool,
    /// The namespace, empty for cluster-wide.
    pub(crate) namespace: String,
    /// The API group.
    pub(crate) group: String,
    /// The resource.
    pub(crate) resource: String,
    /// The subresource.
    pub(crate) subresource: String,
    /// The object name.
    pub(crate) name: String,
    /// The non-resource path.
    pub(crate) path: String,
}

/// An authorizer's decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Decision {
    /// Allowed.
    pub(crate) allowed: bool,
    /// Denied (never, by RBAC).
    pub(crate) denied: bool,
    /// The reason text.
    pub(crate) reason: String,
}

/// The rules that apply to a user in a namespace, with the errors met finding them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    /// Each rule, in visiting order.
    pub(crate) rules: Vec<Value>,
    /// The errors (missing roles), in visiting order.
    pub(crate) errors: Vec<String>,
}

/// Authorizes `attrs` against the stored RBAC objects.
pub(crate) fn authorize(state: &State, attrs: &Attributes) -> Decision {
    if attrs.user.groups.iter().any(|g| g == "system:masters") {
        return Decision {
            allowed: true,
            ..Decision::default()
        };
    }
    let mut errors = Vec::new();
    let mut allowed_by = None;
    visit(
        state,
        &attrs.user,
        &attrs.namespace,
        &mut |source, rule| match rule {
            Ok(rule) if rule_allows(attrs, rule) => {
                allowed_by = Some(source.to_string());
                false
            }
            Ok(_) => true,
            Err(e) => {
                errors.push(e);
                true
            }
        },
    );
    if let Some(source) = allowed_by {
        return Decision {
            allowed: true,
            denied: false,
            reason: format!("RBAC: allowed by {source}"),
        };
    }
    Decision {
        reason: if errors.is_empty() {
            String::new()
        } else {
            format!("RBAC: {}", aggregate(&errors))
        },
        ..Decision::default()
    }
}

/// The rules of `user` in `namespace` (RBAC's `RulesFor`).
pub(crate) fn rules_for(state: &State, user: &UserInfo, namespace: &str) -> Rules {
    let mut out = Rules::default();
    visit(state, user, namespace, &mut |_, rule| {
        match rule {
            Ok(rule) => out.rules.push(rule.clone()),
            Err(e) => out.errors.push(e),
        }
        true
    });
    out
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one message alone, several in brackets, repeats dropped.
pub(crate) fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&String> = Vec::new();
    for e in errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!(
            "[{}]",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn objects<'a>(state: &'a State, plural: &str) -> Vec<&'a Value> {
    state
        .collections
        .get(&(GROUP.to_string(), plural.to_string()))
        .map(|c| c.objects.values().map(|v| v.as_ref()).collect())
        .unwrap_or_default()
}

fn find<'a>(state: &'a State, plural: &str, namespace: &str, name: &str) -> Option<&'a Value> {
    objects(state, plural).into_iter().find(|o| {
        o["metadata"]["name"].as_str() == Some(name)
            && o["metadata"]["namespace"].as_str().unwrap_or("") == namespace
    })
}

/// RBAC's `VisitRulesFor`: the visitor gets each rule with its source, or an error; it returns whether to go
/// on.
fn visit(
    state: &State,
    user: &UserInfo,
    namespace: &str,
    visitor: &mut dyn FnMut(&str, Result<&Value, String>) -> bool,
) {
    for binding in objects(state, "clusterrolebindings") {
        if !walk_binding(state, user, binding, "", visitor) {
            return;
        }
    }
    if namespace.is_empty() {
        return;
    }
    for binding in objects(state, "rolebindings") {
        if binding["metadata"]["namespace"].as_str() == Some(namespace)
            && !walk_binding(state, user, binding, namespace, visitor)
        {
            return;
        }
    }
}

fn walk_binding(
    state: &State,
    user: &UserInfo,
    binding: &Value,
    namespace: &str,
    visitor: &mut dyn FnMut(&str, Result<&Value, String>) -> bool,
) -> bool {
    let subjects = binding["subjects"].as_array().cloned().unwrap_or_default();
    let Some(subject) = subjects.iter().find(|s| applies(user, s, namespace)) else {
        return true;
    };
    let kind = binding["roleRef"]["kind"].as_str().unwrap_or("");
    let role_name = binding["roleRef"]["name"].as_str().unwrap_or("");
    let role = match kind {
        "Role" => find(state, "roles", namespace, role_name)
            .ok_or_else(|| format!("role.{GROUP} {role_name:?} not found")),
        "ClusterRole" => find(state, "clusterroles", "", role_name)
            .ok_or_else(|| format!("clusterrole.{GROUP} {role_name:?} not found")),
        other => Err(format!("unsupported role reference kind: {other:?}")),
    };
    let role = match role {
        Ok(role) => role,
        Err(e) => return visitor("", Err(e)),
    };
    let name = binding["metadata"]["name"].as_str().unwrap_or("");
    let source = if namespace.is_empty() {
        format!(
            "ClusterRoleBinding {name:?} of {kind} {role_name:?} to {}",
            describe(subject, "")
        )
    } else {
        let qualified = format!("{name}/{namespace}");
        format!(
            "RoleBinding {qualified:?} of {kind} {role_name:?} to {}",
            describe(subject, namespace)
        )
    };
    for rule in role["rules"].as_array().into_iter().flatten() {
        if !visitor(&source, Ok(rule)) {
            return false;
        }
    }
    true
}

fn describe(subject: &Value, binding_namespace: &str) -> String {
    let kind = subject["kind"].as_str().unwrap_or("");
    let name = subject["name"].as_str().unwrap_or("");
    if kind == "ServiceAccount" {
        let ns = subject["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(binding_namespace);
        let qualified = format!("{name}/{ns}");
        return format!("{kind} {qualified:?}");
    }
    format!("{kind} {name:?}")
}

fn applies(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or("");
    match subject["kind"].as_str().unwrap_or("") {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = subject["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(namespace);
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

/// RBAC's `RuleAllows`.
fn rule_allows(attrs: &Attributes, rule: &Value) -> bool {
    let verb = strings(&rule["verbs"]).any(|v| v == "*" || v == attrs.verb);
    if !attrs.resource_request {
        return verb
            && strings(&rule["nonResourceURLs"]).any(|u| {
                u == "*"
                    || u == attrs.path
                    || (u.ends_with('*') && attrs.path.starts_with(u.trim_end_matches('*')))
            });
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    let group = strings(&rule["apiGroups"]).any(|g| g == "*" || g == attrs.group);
    let resource = strings(&rule["resources"]).any(|r| {
        r == "*"
            || r == combined
            || (!attrs.subresource.is_empty()
                && r.len() == attrs.subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(attrs.subresource.as_str()))
    });
    let names: Vec<&str> = strings(&rule["resourceNames"]).collect();
    let name = names.is_empty() || names.contains(&attrs.name.as_str());
    verb && group && resource && name
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attrs(verb: &str, resource: &str, subresource: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            subresource: subresource.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn rules_match_as_rbac_matches() {
        let rule = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]});
        assert!(rule_allows(&attrs("get", "pods", "status"), &rule));
        assert!(!rule_allows(&attrs("get", "pods", ""), &rule));
        assert!(!rule_allows(&attrs("list", "pods", "status"), &rule));
        let urls = json!({"verbs": ["*"], "nonResourceURLs": ["/healthz/*"]});
        let mut path = attrs("get", "", "");
        path.resource_request = false;
        path.path = "/healthz/etcd".into();
        assert!(rule_allows(&path, &urls));
        path.path = "/version".into();
        assert!(!rule_allows(&path, &urls));
        let named = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]});
        let mut a = attrs("get", "pods", "");
        assert!(!rule_allows(&a, &named));
        a.name = "a".into();
        assert!(rule_allows(&a, &named));
    }

    #[test]
    fn errors_aggregate_as_go_does() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
