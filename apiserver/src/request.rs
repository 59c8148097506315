//! Turning a request path and query into what the server should do.

pub mod timeout;

use std::collections::HashMap;
use std::fmt;

/// The Kubernetes verb of a resource request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH (any patch type, including apply).
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl Verb {
    /// The lowercase name used by Kubernetes (`get`, `deletecollection`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }

    /// Whether the verb may change stored state.
    pub fn is_mutating(&self) -> bool {
        matches!(
            self,
            Verb::Create | Verb::Update | Verb::Patch | Verb::Delete | Verb::DeleteCollection
        )
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request for a resource: the parts of its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// The verb.
    pub verb: Verb,
    /// API group, empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Subresource (`status`, `scale`), if any.
    pub subresource: Option<String>,
    /// Namespace from the path, if any.
    pub namespace: Option<String>,
    /// Object name from the path, if any.
    pub name: Option<String>,
}

/// What a path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    Resources(String, String),
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiV3Root,
    /// `/openapi/v3/apis/{group}/{version}` or `/openapi/v3/api/v1`.
    OpenApiV3(String, String),
    /// `/healthz`, `/readyz`, `/livez` (the endpoint), or one of their checks (`/livez/etcd`).
    Health(String, Option<String>),
    /// A resource request.
    Resource(ResourceRequest),
    /// Anything else.
    Unknown,
}

/// Parses a request path (without query) and method.
pub fn route(method: &http::Method, path: &str, query: &Query) -> Route {
    let parts: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        ["version"] => return Route::Version,
        ["api"] => return Route::CoreVersions,
        ["apis"] => return Route::Groups,
        ["apis", g] => return Route::Group(g.to_string()),
        ["api", v] => return Route::Resources(String::new(), v.to_string()),
        ["apis", g, v] => return Route::Resources(g.to_string(), v.to_string()),
        ["openapi", "v2"] => return Route::OpenApiV2,
        ["openapi", "v3"] => return Route::OpenApiV3Root,
        ["openapi", "v3", "api", v] => return Route::OpenApiV3(String::new(), v.to_string()),
        ["openapi", "v3", "apis", g, v] => return Route::OpenApiV3(g.to_string(), v.to_string()),
        [endpoint @ ("healthz" | "readyz" | "livez"), check @ ..] => {
            let check = (!check.is_empty()).then(|| check.join("/"));
            return Route::Health(endpoint.to_string(), check);
        }
        _ => {}
    }
    let (group, version, rest) = match parts.as_slice() {
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
        _ => return Route::Unknown,
    };
    let mut rest: &[&str] = rest;
    let mut watch_path = false;
    if rest.first() == Some(&"watch") {
        watch_path = true;
        rest = &rest[1..];
    }
    let mut namespace = None;
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        namespace = Some(rest[1].to_string());
        if rest.len() > 2 && rest[2] != "status" && rest[2] != "finalize" {
            rest = &rest[2..];
        }
    }
    let (resource, name, subresource) = match rest {
        [r] => (r.to_string(), None, None),
        [r, n] => (r.to_string(), Some(n.to_string()), None),
        [r, n, s] => (r.to_string(), Some(n.to_string()), Some(s.to_string())),
        _ => return Route::Unknown,
    };
    // The namespace object itself is addressed as /api/v1/namespaces/{name}.
    if resource == "namespaces" && group.is_empty() {
        namespace = None;
    }
    let watch = watch_path || query.flag("watch");
    let verb = match (method.as_str(), name.is_some()) {
        ("GET", true) if watch => Verb::Watch,
        ("GET", true) => Verb::Get,
        ("GET", false) if watch => Verb::Watch,
        ("GET", false) => Verb::List,
        ("POST", _) => Verb::Create,
        ("PUT", _) => Verb::Update,
        ("PATCH", _) => Verb::Patch,
        ("DELETE", true) => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => return Route::Unknown,
    };
    Route::Resource(ResourceRequest {
        verb,
        group,
        version,
        resource,
        subresource,
        namespace,
        name,
    })
}

/// Query parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    params: HashMap<String, String>,
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Self {
        let params = raw
            .map(|q| {
                form_urlencoded::parse(q.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        Self { params }
    }

    /// A parameter's value, if present and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A copy with `key` set to `value`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.params.insert(key.to_string(), value.to_string());
        self
    }

    /// The same query without `key`.
    pub fn without(mut self, key: &str) -> Self {
        self.params.remove(key);
        self
    }

    /// Whether a boolean parameter is `true` or `1`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true") | Some("1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(method: &str, path: &str, q: &str) -> Route {
        route(
            &http::Method::from_bytes(method.as_bytes()).unwrap(),
            path,
            &Query::parse(Some(q)),
        )
    }

    fn res(route: Route) -> ResourceRequest {
        match route {
            Route::Resource(r) => r,
            other => panic!("not a resource: {other:?}"),
        }
    }

    #[test]
    fn namespaced_paths() {
        let rr = res(r("GET", "/api/v1/namespaces/ns/configmaps/x", ""));
        assert_eq!(rr.verb, Verb::Get);
        assert_eq!(rr.namespace.as_deref(), Some("ns"));
        assert_eq!(rr.resource, "configmaps");
        assert_eq!(rr.name.as_deref(), Some("x"));
        let rr = res(r(
            "GET",
            "/apis/apps/v1/namespaces/ns/deployments",
            "watch=true",
        ));
        assert_eq!(rr.verb, Verb::Watch);
        assert_eq!(rr.group, "apps");
        let rr = res(r(
            "PATCH",
            "/apis/apps/v1/namespaces/ns/deployments/d/scale",
            "",
        ));
        assert_eq!(rr.subresource.as_deref(), Some("scale"));
        let rr = res(r("GET", "/api/v1/watch/namespaces/ns/pods", ""));
        assert_eq!(rr.verb, Verb::Watch);
        let rr = res(r("DELETE", "/api/v1/namespaces/ns/pods", ""));
        assert_eq!(rr.verb, Verb::DeleteCollection);
    }

    #[test]
    fn namespace_object_paths() {
        let rr = res(r("GET", "/api/v1/namespaces/foo", ""));
        assert_eq!(rr.resource, "namespaces");
        assert_eq!(rr.name.as_deref(), Some("foo"));
        assert_eq!(rr.namespace, None);
        let rr = res(r("PUT", "/api/v1/namespaces/foo/status", ""));
        assert_eq!(rr.subresource.as_deref(), Some("status"));
        let rr = res(r("GET", "/api/v1/namespaces", ""));
        assert_eq!(rr.verb, Verb::List);
    }

    #[test]
    fn discovery_paths() {
        assert_eq!(r("GET", "/api", ""), Route::CoreVersions);
        assert_eq!(
            r("GET", "/apis/apps/v1", ""),
            Route::Resources("apps".into(), "v1".into())
        );
        assert_eq!(r("GET", "/version", ""), Route::Version);
        assert_eq!(r("GET", "/nope/x/y/z/a/b/c/d", ""), Route::Unknown);
    }
}
