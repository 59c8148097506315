//! Classifying a request by the stored FlowSchemas, as kube-apiserver's API priority and fairness filter does
//! (`k8s.io/apiserver/pkg/util/flowcontrol`: `rule.go` and the config controller's digest).
//!
//! FlowSchemas are tried in order of `matchingPrecedence`, ties by name; the first whose rules match the
//! request (a subject and, for a resource request, a resource rule, else a non-resource rule) and whose
//! PriorityLevelConfiguration exists classifies it. Without a match the mandatory `catch-all` classifies it.

use std::cmp::Ordering;

use serde_json::Value;

use crate::auth::user::UserInfo;
use crate::request::{ResourceRequest, Route};
use crate::store::State;

/// The API group of FlowSchemas and PriorityLevelConfigurations.
pub(crate) const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// What a request is, as the classifier sees it (apiserver's `RequestInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A request for a resource.
    Resource {
        /// `get`, `list`, `watch`, `create`, ...
        verb: String,
        /// The API group, empty for the core group.
        group: String,
        /// The resource, with `/subresource` when there is one.
        resource: String,
        /// The namespace, empty for a cluster-scoped request (a namespace's own requests name it).
        namespace: String,
    },
    /// A request for a path that is no resource (`/version`, `/healthz`).
    NonResource {
        /// The HTTP method in lowercase.
        verb: String,
        /// The path.
        path: String,
    },
}

impl Target {
    /// The target of a routed request.
    pub(crate) fn of(route: &Route, method: &::http::Method, path: &str) -> Self {
        match route {
            Route::Resource(rr) => resource(rr),
            _ => Target::NonResource {
                verb: method.as_str().to_ascii_lowercase(),
                path: path.to_string(),
            },
        }
    }
}

fn resource(rr: &ResourceRequest) -> Target {
    let resource = match &rr.subresource {
        Some(sub) => format!("{}/{sub}", rr.resource),
        None => rr.resource.clone(),
    };
    let namespace = match (&rr.namespace, rr.group.as_str(), rr.resource.as_str()) {
        (Some(ns), _, _) => ns.clone(),
        // apiserver's RequestInfo takes a namespace's own name as the request's namespace.
        (None, "", "namespaces") => rr.name.clone().unwrap_or_default(),
        (None, _, _) => String::new(),
    };
    Target::Resource {
        verb: rr.verb.as_str().to_string(),
        group: rr.group.clone(),
        resource,
        namespace,
    }
}

/// The FlowSchema and PriorityLevelConfiguration a request was classified by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classification {
    /// The FlowSchema's name.
    pub(crate) flow_schema: String,
    /// The FlowSchema's uid.
    pub(crate) flow_schema_uid: String,
    /// The PriorityLevelConfiguration's name.
    pub(crate) priority_level: String,
    /// The PriorityLevelConfiguration's uid.
    pub(crate) priority_level_uid: String,
}

/// The stored objects of a flowcontrol resource.
pub(crate) fn stored<'a>(state: &'a State, plural: &str) -> impl Iterator<Item = &'a Value> {
    state
        .collections
        .get(&(GROUP.to_string(), plural.to_string()))
        .into_iter()
        .flat_map(|c| c.objects.values().map(|o| o.as_ref()))
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Classifies a request by `user` for `target`, or `None` when no stored FlowSchema matches (the
/// mandatory ones removed or their priority levels missing).
pub(crate) fn classify(state: &State, user: &UserInfo, target: &Target) -> Option<Classification> {
    let mut schemas: Vec<&Value> = stored(state, "flowschemas").collect();
    schemas.sort_by(|a, b| precedence(a, b));
    schemas.into_iter().find_map(|fs| {
        let pl_name = str_of(fs, "/spec/priorityLevelConfiguration/name");
        let pl = stored(state, "prioritylevelconfigurations")
            .find(|pl| str_of(pl, "/metadata/name") == pl_name)?;
        matches_schema(fs, user, target).then(|| Classification {
            flow_schema: str_of(fs, "/metadata/name").to_string(),
            flow_schema_uid: str_of(fs, "/metadata/uid").to_string(),
            priority_level: pl_name.to_string(),
            priority_level_uid: str_of(pl, "/metadata/uid").to_string(),
        })
    })
}

/// apihelpers' `FlowSchemaSequence` order: `matchingPrecedence`, then name.
fn precedence(a: &Value, b: &Value) -> Ordering {
    let p = |v: &Value| {
        v.pointer("/spec/matchingPrecedence")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    p(a).cmp(&p(b))
        .then_with(|| str_of(a, "/metadata/name").cmp(str_of(b, "/metadata/name")))
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    list(v, key).iter().filter_map(Value::as_str).collect()
}

/// Whether `fs` matches: any of its rules.
pub(crate) fn matches_schema(fs: &Value, user: &UserInfo, target: &Target) -> bool {
    list(&fs["spec"], "rules").iter().any(|rule| {
        list(rule, "subjects")
            .iter()
            .any(|s| matches_subject(s, user))
            && match target {
                Target::Resource { .. } => list(rule, "resourceRules")
                    .iter()
                    .any(|r| matches_resource_rule(r, target)),
                Target::NonResource { verb, path } => list(rule, "nonResourceRules")
                    .iter()
                    .any(|r| contains(verb, &strings(r, "verbs"), "*") && matches_url(r, path)),
            }
    })
}

fn matches_subject(subject: &Value, user: &UserInfo) -> bool {
    match subject["kind"].as_str() {
        Some("User") => subject["user"]["name"]
            .as_str()
            .is_some_and(|n| n == "*" || n == user.name),
        Some("Group") => subject["group"]["name"]
            .as_str()
            .is_some_and(|n| n == "*" || user.groups.iter().any(|g| g == n)),
        Some("ServiceAccount") => {
            let (Some(ns), Some(name)) = (
                subject["serviceAccount"]["namespace"].as_str(),
                subject["serviceAccount"]["name"].as_str(),
            ) else {
                return false;
            };
            let Some(rest) = user.name.strip_prefix("system:serviceaccount:") else {
                return false;
            };
            if name == "*" {
                // The namespace is matched as a prefix followed by `:`, as `rule.go` does.
                rest.strip_prefix(ns).is_some_and(|r| r.starts_with(':'))
            } else {
                rest == format!("{ns}:{name}")
            }
        }
        _ => false,
    }
}

fn matches_resource_rule(rule: &Value, target: &Target) -> bool {
    let Target::Resource {
        verb,
        group,
        resource,
        namespace,
    } = target
    else {
        return false;
    };
    if !contains(verb, &strings(rule, "verbs"), "*")
        || !contains(resource, &strings(rule, "resources"), "*")
        || !contains(group, &strings(rule, "apiGroups"), "*")
    {
        return false;
    }
    if namespace.is_empty() {
        return rule["clusterScope"].as_bool().unwrap_or(false);
    }
    contains(namespace, &strings(rule, "namespaces"), "*")
}

fn matches_url(rule: &Value, path: &str) -> bool {
    strings(rule, "nonResourceURLs").iter().any(|url| {
        if *url == "*" || *url == path {
            return true;
        }
        let mut prefix = url.trim_end_matches('*').to_string();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        path.starts_with(&prefix)
    })
}

/// `rule.go`'s `containsString`: the wildcard alone matches everything, else an exact member.
fn contains(x: &str, list: &[&str], wildcard: &str) -> bool {
    (list.len() == 1 && list[0] == wildcard) || list.contains(&x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        }
    }

    fn pods(verb: &str, ns: &str) -> Target {
        Target::Resource {
            verb: verb.into(),
            group: String::new(),
            resource: "pods".into(),
            namespace: ns.into(),
        }
    }

    #[test]
    fn subjects_rules_and_urls_match_as_rule_go_does() {
        let fs = json!({"spec": {"rules": [{
            "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube", "name": "*"}},
                         {"kind": "Group", "group": {"name": "ops"}}],
            "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"],
                               "namespaces": ["a"]}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/debug/*"]}]}]}});
        let ops = user("x", &["ops"]);
        assert!(matches_schema(&fs, &ops, &pods("get", "a")));
        assert!(!matches_schema(&fs, &ops, &pods("get", "b")));
        assert!(!matches_schema(&fs, &ops, &pods("get", "")));
        assert!(!matches_schema(&fs, &ops, &pods("delete", "a")));
        assert!(!matches_schema(&fs, &user("x", &[]), &pods("get", "a")));
        let sa = user("system:serviceaccount:kube:builder", &[]);
        assert!(matches_schema(&fs, &sa, &pods("list", "a")));
        let other_ns = user("system:serviceaccount:kube-system:builder", &[]);
        assert!(!matches_schema(&fs, &other_ns, &pods("list", "a")));
        let url = |path: &str| Target::NonResource {
            verb: "get".into(),
            path: path.into(),
        };
        assert!(matches_schema(&fs, &ops, &url("/metrics")));
        assert!(!matches_schema(&fs, &ops, &url("/debug")));
        assert!(matches_schema(&fs, &ops, &url("/metrics/x")));
        assert!(matches_schema(&fs, &ops, &url("/debug/pprof")));
        assert!(!matches_schema(&fs, &ops, &url("/metricsx")));
    }
}
