//! Stores and caches built from plain vectors of objects, for tests that run steps with no API server.

use kube::Client;
use kube::runtime::reflector::Store;

use crate::cache::{CachedKind, Caches};

/// A reflector store holding `objects`, ready to read: the command-pattern's `vec![..].to_store()`.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::runtime::reflector::ObjectRef;
/// use kubewright::testing::store_from;
///
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// cm.metadata.namespace = Some("default".into());
/// let store = store_from(vec![cm]);
/// assert!(store.get(&ObjectRef::new("settings").within("default")).is_some());
/// ```
pub fn store_from<K: CachedKind>(objects: Vec<K>) -> Store<K> {
    crate::cache::frozen_store(objects)
}

/// `vec![..].to_store()`: [`store_from`] as a method.
pub trait ToStore<K: CachedKind> {
    /// A ready reflector store holding these objects.
    fn to_store(self) -> Store<K>;
}

impl<K: CachedKind> ToStore<K> for Vec<K> {
    fn to_store(self) -> Store<K> {
        store_from(self)
    }
}

/// The error every request of an [`offline_client`] fails with.
#[derive(Debug, thiserror::Error)]
#[error("this client is offline: a test without an API server made a request")]
pub struct Offline;

/// A client whose every request fails with [`Offline`]: what [`offline_caches`] hold, so that a step run
/// against preloaded caches cannot reach any server. Needs a Tokio runtime.
pub fn offline_client() -> Client {
    let service = tower::service_fn(|_req: http::Request<kube::client::Body>| async {
        Err::<http::Response<http_body_util::Empty<bytes::Bytes>>, _>(Offline)
    });
    Client::new(service, "default")
}

/// Caches on an [`offline_client`] with nothing in them; add kinds with [`Caches::insert_store`]. Needs a
/// Tokio runtime.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::testing::{offline_caches, store_from};
///
/// let caches = offline_caches();
/// caches.insert_store(store_from(Vec::<ConfigMap>::new()));
/// assert!(caches.get::<ConfigMap>().is_some());
/// # }
/// ```
pub fn offline_caches() -> Caches {
    Caches::new(offline_client())
}
