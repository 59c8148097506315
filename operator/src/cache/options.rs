//! What a cache holds of its kind: every object, the objects a label selector picks (such as the children of
//! this operator's parents, by the owner label the runtime sets), or their metadata only.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::watcher;
use serde_json::json;

use super::CachedKind;

/// The label the runtime sets on every child it writes: the uid of the parent that controls it. A cache of
/// [`CacheOptions::owned`] holds only objects with this label.
pub const OWNER_LABEL: &str = "operator.dev/owner";

/// What the cache of one kind holds, set with [`Operator::cache`](crate::Operator::cache) or
/// [`Caches::configure`](super::Caches::configure) before the caches start. The default holds every object
/// of the kind (in the operator's namespaces).
///
/// A cache that does not hold every object saves memory on kinds that are common in a cluster (Secrets,
/// ConfigMaps, Pods) and costs a `GET` where an object is looked for and not found: before creating a child
/// that is not in its cache, the runtime reads it from the API server, so an object of the same name that
/// someone else made is never taken over.
///
/// ```
/// use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// use kubewright::CacheOptions;
/// # fn f(operator: kubewright::Operator) -> kubewright::Operator {
/// operator
///     // The Secrets this operator's parents own, not every Secret of the cluster.
///     .cache::<Secret>(CacheOptions::owned())
///     // ConfigMaps by name and labels only (a mapper that needs no data).
///     .cache::<ConfigMap>(CacheOptions::all().metadata_only())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheOptions {
    labels: Option<String>,
    fields: Option<String>,
    metadata_only: bool,
    typed: bool,
}

impl CacheOptions {
    /// Every object of the kind (the default).
    pub fn all() -> Self {
        Self::default()
    }

    /// The objects the runtime wrote as children: those carrying the [`OWNER_LABEL`].
    pub fn owned() -> Self {
        Self::labels(OWNER_LABEL)
    }

    /// The objects a label selector picks, in Kubernetes' syntax (`app=web,tier!=db`, `owner`, `!legacy`).
    pub fn labels(selector: impl Into<String>) -> Self {
        Self {
            labels: Some(selector.into()),
            ..Self::default()
        }
    }

    /// Also requires `selector` of the objects' labels (added to the label selector, if any).
    pub(crate) fn and_labels(mut self, selector: &str) -> Self {
        self.labels = Some(match self.labels.take() {
            Some(l) => format!("{l},{selector}"),
            None => selector.to_string(),
        });
        self
    }

    /// Also (or only) the objects a field selector picks, such as `metadata.name=settings` or
    /// `spec.nodeName=a` (what the API server supports for the kind).
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.fields = Some(selector.into());
        self
    }

    /// Holds metadata only (names, labels, annotations, owner references; every other field at its default),
    /// watched as `PartialObjectMetadata` so the rest never crosses the wire. For kinds that are watched or
    /// referenced, never for children: the runtime compares a child's fields with the desired ones.
    pub fn metadata_only(mut self) -> Self {
        self.metadata_only = true;
        self
    }

    /// Holds the objects as typed values (kube's reflector store; [`Form::Typed`](super::Form::Typed)) even
    /// when no controller reconciles the kind as parent, for a kind that steps read heavily: reads then share
    /// the stored values instead of decoding each (the default for such kinds is
    /// [`Form::Compact`](super::Form::Compact), a fraction of the memory).
    pub fn typed(mut self) -> Self {
        self.typed = true;
        self
    }

    /// Whether the objects are held typed whatever the kind's role.
    pub fn is_typed(&self) -> bool {
        self.typed
    }

    /// The label selector, if any.
    pub fn label_selector(&self) -> Option<&str> {
        self.labels.as_deref()
    }

    /// The field selector, if any.
    pub fn field_selector(&self) -> Option<&str> {
        self.fields.as_deref()
    }

    /// Whether only metadata is cached.
    pub fn is_metadata_only(&self) -> bool {
        self.metadata_only
    }

    /// Whether the cache holds every object of the kind (no selector); a lookup that finds nothing in a cache
    /// that does not is no proof that the object does not exist.
    pub fn holds_every_object(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// The watch configuration: pages of [`LIST_PAGE`] objects when the first list is paged.
    pub(crate) fn watcher_config(&self) -> watcher::Config {
        let mut config = watcher::Config::default().page_size(LIST_PAGE);
        if let Some(l) = &self.labels {
            config = config.labels(l);
        }
        if let Some(f) = &self.fields {
            config = config.fields(f);
        }
        config
    }

    /// Checks the options make sense for `K`.
    pub(crate) fn check<K: CachedKind>(&self) -> Result<(), CacheOptionsError> {
        for (what, selector) in [("label", &self.labels), ("field", &self.fields)] {
            if selector.as_deref().is_some_and(|s| s.trim().is_empty()) {
                return Err(CacheOptionsError::EmptySelector {
                    kind: K::kind(&()).into_owned(),
                    what,
                });
            }
        }
        if self.metadata_only && from_metadata::<K>(ObjectMeta::default()).is_none() {
            return Err(CacheOptionsError::NeedsMoreThanMetadata {
                kind: K::kind(&()).into_owned(),
            });
        }
        Ok(())
    }
}

/// How many objects a page of a paged list holds. The watch holds a whole page, decoded, while the store takes
/// its objects one by one (with kube's default of 500, the pages of a list of 1,000 Deployments held about 8 MB
/// at once, the largest part of a restarted operator's peak); 100 costs one LIST request per 100 objects.
pub const LIST_PAGE: u32 = 100;

/// Cache options that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheOptionsError {
    /// The caches have started: options apply to caches not started yet.
    #[error(
        "the cache of {kind} has started already: set its options before the operator runs (and before a test environment starts its caches)"
    )]
    Started {
        /// The kind.
        kind: String,
    },
    /// A selector is empty.
    #[error(
        "the {what} selector of the cache of {kind} is empty; use CacheOptions::all() to cache every object"
    )]
    EmptySelector {
        /// The kind.
        kind: String,
        /// `label` or `field`.
        what: &'static str,
    },
    /// `K` cannot be built from metadata alone.
    #[error(
        "{kind} cannot be cached as metadata only: the type needs fields besides metadata to deserialize (give them `#[serde(default)]`, or cache every field)"
    )]
    NeedsMoreThanMetadata {
        /// The kind.
        kind: String,
    },
    /// A child kind cached as metadata only.
    #[error(
        "{kind} is a child kind and cannot be cached as metadata only: the runtime compares a child's fields with the desired ones"
    )]
    ChildMetadataOnly {
        /// The kind.
        kind: String,
    },
}

/// A `K` holding `meta` and every other field at its default; `None` when `K` needs more to deserialize.
pub(crate) fn from_metadata<K: CachedKind>(meta: ObjectMeta) -> Option<K> {
    let value = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": meta,
    });
    crate::json::convert(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Secret;

    #[test]
    fn built_in_kinds_come_from_metadata_alone() {
        let meta = ObjectMeta {
            name: Some("db".into()),
            labels: Some([(OWNER_LABEL.to_string(), "u1".to_string())].into()),
            ..ObjectMeta::default()
        };
        let secret: Secret = from_metadata(meta.clone()).unwrap();
        assert_eq!(secret.metadata, meta);
        assert!(secret.data.is_none());
        let deployment: Deployment = from_metadata(meta).unwrap();
        assert!(deployment.spec.is_none());
        assert_eq!(
            CacheOptions::all().metadata_only().check::<Secret>(),
            Ok(())
        );
    }

    #[test]
    fn selectors_reach_the_watch_and_say_whether_the_cache_is_complete() {
        let all = CacheOptions::all();
        assert!(all.holds_every_object());
        let owned = CacheOptions::owned();
        assert!(!owned.holds_every_object());
        assert_eq!(
            owned.watcher_config().label_selector.as_deref(),
            Some(OWNER_LABEL)
        );
        let named = CacheOptions::all().fields("metadata.name=settings");
        assert!(!named.holds_every_object());
        assert_eq!(
            named.watcher_config().field_selector.as_deref(),
            Some("metadata.name=settings")
        );
        assert!(matches!(
            CacheOptions::labels(" ").check::<Secret>(),
            Err(CacheOptionsError::EmptySelector { what: "label", .. })
        ));
    }
}
