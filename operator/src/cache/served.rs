//! What the API server serves of the cached kinds, from its discovery: whether each kind is served at all (and
//! with the scope its type declares), checked before an operator starts, and whether a kind has a `status`
//! subresource (for the readiness of custom-resource children).

use std::any::TypeId;
use std::collections::BTreeMap;

use super::{CachedKind, Caches};

/// A cached kind the API server does not serve as its type declares it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotServed {
    /// No resource of that group, version and name.
    #[error(
        "{kind} ({api_version}, resource {plural}) is not served by the cluster: install its CustomResourceDefinition first (the manifests of the project that defines it, or `manifests | kubectl apply -f -` for this operator's own kinds)"
    )]
    Missing {
        /// The kind.
        kind: String,
        /// Its `apiVersion`.
        api_version: String,
        /// Its resource (plural) name.
        plural: String,
    },
    /// A slot of [`dynamic_kind!`](crate::dynamic_kind) that was not bound to a kind before the reconcilers
    /// using it were built.
    #[error(
        "the run-time kind {slot} is not bound to a kind: call {slot}::bind with its ApiResource before building the reconcilers that use it"
    )]
    Unbound {
        /// The slot's name.
        slot: String,
    },
    /// Served with the other scope.
    #[error(
        "{kind} ({api_version}) is declared {declared} but the cluster serves it {served}: declare it with the cluster's scope"
    )]
    Scope {
        /// The kind.
        kind: String,
        /// Its `apiVersion`.
        api_version: String,
        /// `namespaced` or `cluster-scoped`, as declared.
        declared: &'static str,
        /// As served.
        served: &'static str,
    },
}

/// The resources the API server serves in `api_version` (`v1` is the core group's, under `/api`).
async fn discover(
    client: &kube::Client,
    api_version: &str,
) -> kube::Result<k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList> {
    if api_version.contains('/') {
        client.list_api_group_resources(api_version).await
    } else {
        client.list_core_api_resources(api_version).await
    }
}

fn scope(namespaced: bool) -> &'static str {
    if namespaced {
        "namespaced"
    } else {
        "cluster-scoped"
    }
}

impl Caches {
    /// Checks, with one discovery request per group and version, that the API server serves every kind these
    /// caches watch, with the scope its type declares: an operator whose child kind's CRD is missing (or whose
    /// untyped kind is declared with the wrong scope) fails before it writes anything, naming the kind. A
    /// discovery request that fails otherwise (not a 404) is logged and checks nothing.
    pub async fn check_served(&self) -> Result<(), NotServed> {
        let mut by_version: BTreeMap<String, Vec<(String, String, bool)>> = BTreeMap::new();
        {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            for e in entries.values().filter(|e| e.watched) {
                by_version.entry(e.api_version.clone()).or_default().push((
                    e.kind.clone(),
                    e.plural.clone(),
                    e.namespaced,
                ));
            }
        }
        if let Some((_, kinds)) = by_version.iter().find(|(v, _)| v.is_empty())
            && let Some((slot, _, _)) = kinds.first()
        {
            return Err(NotServed::Unbound { slot: slot.clone() });
        }
        for (api_version, kinds) in by_version {
            let resources = match discover(&self.client, &api_version).await {
                Ok(list) => list.resources,
                Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
                Err(e) => {
                    tracing::warn!(api_version = %api_version, error = %e, "cannot discover the kinds served; not checked");
                    continue;
                }
            };
            for (kind, plural, namespaced) in kinds {
                match resources.iter().find(|r| r.name == plural) {
                    None => {
                        return Err(NotServed::Missing {
                            kind,
                            api_version,
                            plural,
                        });
                    }
                    Some(r) if r.namespaced != namespaced => {
                        return Err(NotServed::Scope {
                            kind,
                            api_version,
                            declared: scope(namespaced),
                            served: scope(r.namespaced),
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Whether the API server serves a `status` subresource for kind `K` (a custom resource's CRD declares
    /// one, or not), from its discovery of `K`'s group and version, asked once per kind (one request, which
    /// every authenticated user may make). When discovery fails, `true` (logged; asked again next time): a
    /// child is then not taken for ready before its controller reports a status.
    pub async fn reports_status<K: CachedKind>(&self) -> bool {
        let key = TypeId::of::<K>();
        if let Some(known) = self
            .statuses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return *known;
        }
        let api_version = K::api_version(&());
        match discover(&self.client, &api_version).await {
            Ok(list) => {
                let status = format!("{}/status", K::plural(&()));
                let reports = list.resources.iter().any(|r| r.name == status);
                self.statuses
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key, reports);
                reports
            }
            Err(e) => {
                tracing::warn!(kind = %K::kind(&()), api_version = %api_version, error = %e, "cannot discover whether the kind has a status subresource; taking it as having one");
                true
            }
        }
    }
}
