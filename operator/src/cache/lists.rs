//! How a cache gets its first list: streamed through its watch (the WatchList feature, on by default from
//! Kubernetes 1.32: no LIST request, no whole list held in one response) where the API server supports it, or
//! listed in pages where it does not.

use std::time::Duration;

use futures::TryStreamExt;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, WatchEvent, WatchParams};

use super::{CachedKind, is_namespaced};

/// How caches get their first list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListStrategy {
    /// A paged LIST, then a watch from its resourceVersion (every API server; kube's default).
    #[default]
    Paged,
    /// A watch that sends the current objects first and says when they are all sent (`sendInitialEvents`),
    /// as client-go does where the server supports it.
    Streaming,
}

/// A label selector no object carries, so the probe's watch sends no object.
const NOTHING: &str = "operator.dev/list-probe=none";

/// How long the probe waits for the server's answer.
const PROBE: Duration = Duration::from_secs(5);

/// Whether the API server streams the initial objects of a watch of `K`: asks for a streamed watch that selects
/// nothing and waits for the bookmark that ends the (empty) initial state. [`ListStrategy::Streaming`] when it
/// comes; [`ListStrategy::Paged`] on any error (an older server, the feature off, no permission) or when it
/// does not come within a few seconds. `namespace` scopes the probe for operators that may watch only there.
pub async fn probe_list_strategy<K: CachedKind>(
    client: &Client,
    namespace: Option<&str>,
) -> ListStrategy {
    let resource = ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = match namespace.filter(|_| is_namespaced::<K>()) {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let params = WatchParams::streaming_lists()
        .labels(NOTHING)
        .timeout(PROBE.as_secs() as u32);
    let answered = async {
        let stream = api.watch_metadata(&params, "0").await.ok()?;
        futures::pin_mut!(stream);
        while let Ok(Some(event)) = stream.try_next().await {
            match event {
                WatchEvent::Bookmark(b)
                    if b.metadata
                        .annotations
                        .get("k8s.io/initial-events-end")
                        .is_some_and(|v| v == "true") =>
                {
                    return Some(ListStrategy::Streaming);
                }
                WatchEvent::Error(_) => return None,
                _ => {}
            }
        }
        None
    };
    let strategy = tokio::time::timeout(PROBE, answered)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    tracing::debug!(kind = %K::kind(&()), ?strategy, "how caches get their first lists");
    strategy
}
