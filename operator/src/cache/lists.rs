//! How a cache gets its first list: streamed through its watch (the WatchList feature, on by default from
//! Kubernetes 1.32: no LIST request, no whole list held in one response) where the API server supports it, or
//! listed in pages where it does not.

use std::time::Duration;

use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, WatchEvent, WatchParams};
use kube::runtime::watcher::{self, Event};

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

/// The watch events of one cache: `watch` called with `config`, streaming the first list when `strategy` is
/// [`ListStrategy::Streaming`].
///
/// A streamed list the server refuses falls back to paged lists for this cache from then on, as client-go's
/// reflector falls back "because making progress is better than deadlocking": kube-apiserver answers a streamed
/// watch with 429 while the watch cache of its resource is (re)initializing (after a CRD is created, or when the
/// cache fell behind etcd), where a paged LIST is served from etcd at once. Without the fallback the cache would
/// retry the streamed watch with a growing backoff and stay unsynced (and the operator unready) meanwhile.
pub(crate) fn events<K, W>(
    kind: &str,
    strategy: ListStrategy,
    config: watcher::Config,
    watch: W,
) -> BoxStream<'static, watcher::Result<Event<K>>>
where
    K: Send + 'static,
    W: Fn(watcher::Config) -> BoxStream<'static, watcher::Result<Event<K>>> + Send + 'static,
{
    if strategy == ListStrategy::Paged {
        return watch(config);
    }
    struct Streamed<K, W> {
        kind: String,
        current: BoxStream<'static, watcher::Result<Event<K>>>,
        /// How to list in pages instead; taken when the fallback happens.
        paged: Option<(W, watcher::Config)>,
        /// Between the start of a (re)list and the end of its initial events.
        listing: bool,
    }
    let state = Streamed {
        kind: kind.to_string(),
        current: watch(config.clone().streaming_lists()),
        paged: Some((watch, config)),
        listing: true,
    };
    futures::stream::unfold(state, |mut s| async move {
        let event = s.current.next().await?;
        match &event {
            Ok(Event::Init) => s.listing = true,
            Ok(Event::InitDone) => s.listing = false,
            Err(error) if s.listing => {
                if let Some((watch, config)) = s.paged.take() {
                    tracing::info!(
                        kind = %s.kind,
                        %error,
                        "the API server did not stream the first list; listing in pages instead"
                    );
                    s.current = watch(config);
                }
            }
            _ => {}
        }
        Some((event, s))
    })
    .boxed()
}
