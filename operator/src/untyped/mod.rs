//! Kinds without Rust types: another project's custom resources (cert-manager's `Certificate`, Prometheus'
//! `ServiceMonitor`, Gateway API's `HTTPRoute`) named by group, version and kind only.
//!
//! Every cache, child step, watch and rule of the runtime works on kinds known at compile time. An operator
//! that creates a `Certificate` need not generate its Rust type from the CRD: [`kind!`](crate::kind)
//! declares the kind by its group/version, kind, plural and scope, and [`Untyped<K>`] is an object of it,
//! its metadata typed and everything else JSON. It is a kind like any other: a child (with a child step's
//! create, apply, update and delete, owner references and readiness by the custom-resource conventions,
//! [`crate::readiness::conventional`]), a child set, a watched or tracked kind, or a parent (with
//! [`Foreign`](crate::Foreign) when its status is not the operator's); its cache, owner index and compact
//! storage are the typed kinds'; the manifests grant its RBAC; the in-memory cluster serves it once its CRD
//! is installed.
//!
//! ```
//! use kubewright::untyped::Untyped;
//! use serde_json::json;
//!
//! kubewright::kind! {
//!     /// cert-manager's Certificate.
//!     pub CertificateKind = "cert-manager.io/v1", "Certificate", "certificates", Namespaced
//! }
//! pub type Certificate = Untyped<CertificateKind>;
//!
//! let cert = Certificate::new("web", json!({"spec": {"secretName": "web-tls", "dnsNames": ["web.example.dev"]}}));
//! assert_eq!(cert.data["spec"]["secretName"], "web-tls");
//! assert_eq!(serde_json::to_value(&cert).unwrap()["apiVersion"], "cert-manager.io/v1");
//! assert_eq!(<Certificate as kube::Resource>::plural(&()), "certificates");
//! ```
//!
//! A child by hand, a Certificate for every Domain (with the derive, name it in `#[child(Certificate, ..)]`;
//! see [`attributes`](crate::attributes)):
//!
//! ```
//! # use kubewright::prelude::*;
//! # use kubewright::untyped::Untyped;
//! # kubewright::kind! { pub CertificateKind = "cert-manager.io/v1", "Certificate", "certificates", Namespaced }
//! # type Certificate = Untyped<CertificateKind>;
//! # #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Domain", namespaced, status = "DomainStatus")]
//! # pub struct DomainSpec { pub host: String }
//! # #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase")]
//! # pub struct DomainStatus { pub observed_generation: Option<i64>, #[serde(default)] pub conditions: Vec<Condition> }
//! use kubewright::{ChildReconciler, Reconciler};
//!
//! fn desired_certificate(d: &Domain, _: &mut Context) -> kubewright::Result<Option<Certificate>> {
//!     let spec = serde_json::json!({"spec": {"dnsNames": [d.spec.host], "secretName": format!("{}-tls", d.name_any())}});
//!     Ok(Some(Certificate::new(&d.name_any(), spec)))
//! }
//!
//! let reconciler: Reconciler<Domain> =
//!     Reconciler::new("domain-controller").step(ChildReconciler::new("certificate", desired_certificate));
//! assert_eq!(reconciler.wiring().kinds()[0].kind, "Certificate");
//! ```
//!
//! A kind chosen when the operator runs (from a flag, a configuration file, discovery) goes in a slot declared
//! with [`dynamic_kind!`](crate::dynamic_kind) and bound to kube's `ApiResource` before the reconcilers are
//! built ([`RunTimeKind::bind`]); its objects are `Untyped<Slot>`, converted from and to kube's `DynamicObject`.
//! kube's `DynamicObject` is not itself a cached kind: its type does not name its kind, and the caches tell
//! kinds apart by type. For the same reason a reconciler declares each kind through one type: two types of one
//! group, version and kind (two `kind!` declarations, or an untyped and a typed one) are a start-up error
//! ([`KindDeclaredTwice`](crate::reconcilers::KindDeclaredTwice)).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod run_time;

#[doc(hidden)]
pub use run_time::__bound;
pub use run_time::{BindError, Binding, RunTimeKind};

/// A kind given by group, version, kind, plural and scope: declared with [`kind!`](crate::kind) (known when
/// the operator is written) or with [`dynamic_kind!`](crate::dynamic_kind) (bound when it runs).
pub trait UntypedKind: Send + Sync + 'static {
    /// The API group (`""` for the core group).
    fn group() -> &'static str;
    /// The version.
    fn version() -> &'static str;
    /// The kind.
    fn kind() -> &'static str;
    /// The resource (plural) name.
    fn plural() -> &'static str;
    /// [`k8s_openapi::NamespaceResourceScope`] or [`k8s_openapi::ClusterResourceScope`].
    type Scope;
}

/// Declares an [`UntypedKind`]: a marker type for `"group/version", "Kind", "plural", Namespaced` (or
/// `Cluster`); [`Untyped<Marker>`](Untyped) is then an object of that kind. See the [module documentation](crate::untyped).
#[macro_export]
macro_rules! kind {
    ($(#[$meta:meta])* $vis:vis $name:ident = $api_version:literal, $kind:literal, $plural:literal, $scope:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis struct $name;

        impl $crate::untyped::UntypedKind for $name {
            fn group() -> &'static str {
                const GROUP: &str = $crate::untyped::__group($api_version);
                GROUP
            }
            fn version() -> &'static str {
                const VERSION: &str = $crate::untyped::__version($api_version);
                VERSION
            }
            fn kind() -> &'static str {
                $kind
            }
            fn plural() -> &'static str {
                $plural
            }
            type Scope = $crate::__untyped_scope!($scope);
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __untyped_scope {
    (Namespaced) => {
        $crate::k8s_openapi::NamespaceResourceScope
    };
    (Cluster) => {
        $crate::k8s_openapi::ClusterResourceScope
    };
}

/// The group of `"group/version"` (`""` for `"v1"`), at compile time.
#[doc(hidden)]
pub const fn __group(api_version: &'static str) -> &'static str {
    match split(api_version) {
        Some(at) => first(api_version, at),
        None => "",
    }
}

/// The version of `"group/version"`, at compile time.
#[doc(hidden)]
pub const fn __version(api_version: &'static str) -> &'static str {
    match split(api_version) {
        Some(at) => rest(api_version, at + 1),
        None => api_version,
    }
}

const fn split(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' {
            return Some(i);
        }
        i += 1;
    }
    None
}

const fn first(text: &str, end: usize) -> &str {
    match text.split_at_checked(end) {
        Some((head, _)) => head,
        None => text,
    }
}

const fn rest(text: &str, start: usize) -> &str {
    match text.split_at_checked(start) {
        Some((_, tail)) => tail,
        None => "",
    }
}

/// An object of the kind `K` declares: typed metadata, and every other field (`spec`, `status`, `data`, ...)
/// as JSON. It serializes with `K`'s `apiVersion` and `kind`.
pub struct Untyped<K> {
    /// The object's metadata.
    pub metadata: ObjectMeta,
    /// Every top-level field but `apiVersion`, `kind` and `metadata`.
    pub data: Map<String, Value>,
    kind: PhantomData<fn() -> K>,
}

impl<K: UntypedKind> Untyped<K> {
    /// An object named `name` whose other fields are those of `fields` (a JSON object; anything else gives
    /// none).
    pub fn new(name: &str, fields: Value) -> Self {
        let data = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                ..ObjectMeta::default()
            },
            data,
            kind: PhantomData,
        }
    }
}

impl<K> Clone for Untyped<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            data: self.data.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> PartialEq for Untyped<K> {
    fn eq(&self, other: &Self) -> bool {
        self.metadata == other.metadata && self.data == other.data
    }
}

impl<K: UntypedKind> fmt::Debug for Untyped<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(K::kind())
            .field("metadata", &self.metadata)
            .field("data", &self.data)
            .finish()
    }
}

impl<K: UntypedKind> Resource for Untyped<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::kind())
    }

    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::group())
    }

    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::version())
    }

    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed(K::plural())
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<K: UntypedKind> Serialize for Untyped<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.data.len() + 3))?;
        map.serialize_entry("apiVersion", &Self::api_version(&()))?;
        map.serialize_entry("kind", K::kind())?;
        map.serialize_entry("metadata", &self.metadata)?;
        for (key, value) in &self.data {
            if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl<'de, K: UntypedKind> Deserialize<'de> for Untyped<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut data = Map::<String, Value>::deserialize(deserializer)?;
        data.remove("apiVersion");
        data.remove("kind");
        let metadata = match data.remove("metadata") {
            Some(meta) => ObjectMeta::deserialize(meta).map_err(de::Error::custom)?,
            None => ObjectMeta::default(),
        };
        Ok(Self {
            metadata,
            data,
            kind: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    crate::kind! {
        /// A cluster-scoped kind of the core group, for the test.
        Thing = "v1", "Thing", "things", Cluster
    }
    crate::kind! {
        Route = "gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes", Namespaced
    }

    #[test]
    fn group_and_version_come_from_the_api_version() {
        assert_eq!((Thing::group(), Thing::version()), ("", "v1"));
        assert_eq!(
            (Route::group(), Route::version()),
            ("gateway.networking.k8s.io", "v1")
        );
        assert_eq!(
            <Untyped<Route> as Resource>::api_version(&()),
            "gateway.networking.k8s.io/v1"
        );
        assert!(crate::cache::is_namespaced::<Untyped<Route>>());
        assert!(!crate::cache::is_namespaced::<Untyped<Thing>>());
    }

    #[test]
    fn an_object_round_trips_and_always_names_its_kind() {
        let json = json!({
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
            "spec": {"hostnames": ["web.example.dev"]},
            "status": {"parents": []},
        });
        let route: Untyped<Route> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(route.metadata.uid.as_deref(), Some("u-1"));
        assert_eq!(route.data["spec"]["hostnames"][0], "web.example.dev");
        assert_eq!(serde_json::to_value(&route).unwrap(), json);
        let made = Untyped::<Route>::new("x", json!({"spec": {}}));
        let value = serde_json::to_value(&made).unwrap();
        assert_eq!(
            (value["apiVersion"].as_str(), value["kind"].as_str()),
            (Some("gateway.networking.k8s.io/v1"), Some("HTTPRoute"))
        );
    }
}
