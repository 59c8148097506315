//! The watch loop of one cache: its events update the indexes, then the objects (in the cache's
//! [`Form`]), and are broadcast to controllers' triggers.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::RwLock;
use std::sync::atomic::AtomicU64;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};

use super::objects::CompactWriter;
use super::{
    Cache, CachedKind, Change, Form, Key, LastError, ListStrategy, Wire, describe_watch_error,
    events, lists, namespaces, options, strip,
};

/// What the watch loop of one cache needs.
pub(super) struct Watch<K: CachedKind> {
    pub(super) cache: Cache<K>,
    pub(super) client: Client,
    /// The namespaces to watch (empty: all, or the kind is cluster-scoped).
    pub(super) namespaces: Arc<Vec<String>>,
    pub(super) lists: Arc<RwLock<ListStrategy>>,
    pub(super) kind: String,
    pub(super) last_error: LastError,
    pub(super) seen: Arc<AtomicU64>,
}

/// The watch loop: runs until aborted (a cache already started returns at once).
pub(super) fn run<K: CachedKind>(w: Watch<K>) -> BoxFuture<'static, ()> {
    async move {
        let Watch {
            cache,
            client,
            namespaces,
            lists,
            kind,
            last_error,
            seen,
        } = w;
        let Some(writer) = cache
            .writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return;
        };
        let options = cache.options();
        let form = cache.objects.start(options.is_typed());
        let strategy = *lists.read().unwrap_or_else(|e| e.into_inner());
        let config = options.watcher_config();
        let metadata_only = options.is_metadata_only();
        let relist_objects = cache.objects.clone();
        let watch = move |config: watcher::Config| {
            if !namespaces.is_empty() {
                namespaces::watch(
                    &client,
                    &namespaces,
                    config,
                    metadata_only,
                    relist_objects.clone(),
                )
            } else if metadata_only {
                // Dynamic, as the namespaced watches: one watch of metadata compiled for every kind.
                let resource = ApiResource::erase::<K>(&());
                let api: Api<PartialObjectMeta<DynamicObject>> =
                    Api::all_with(client.clone(), &resource);
                watcher::watcher(api, config)
                    .default_backoff()
                    .filter_map(|ev| {
                        futures::future::ready(namespaces::convert(ev, |o| {
                            options::from_metadata::<K>(o.metadata)
                        }))
                    })
                    .boxed()
            } else {
                let api: Api<Wire<K>> = Api::all(client.clone());
                watcher::watcher(api, config)
                    .default_backoff()
                    .filter_map(|ev| {
                        futures::future::ready(namespaces::convert(ev, |Wire(o)| Some(o)))
                    })
                    .boxed()
            }
        };
        let events = lists::events(&kind, strategy, config, watch);
        let mut pending = None;
        let mut listed: Option<HashSet<Key>> = None;
        let mut listed_once = false;
        let indexed = cache.clone();
        let indexed_events = events.modify(strip::<K>).map(move |ev| {
            if let Ok(ev) = &ev {
                let c = &indexed;
                events::index_update(
                    &c.owners,
                    &c.objects,
                    c.replayed.spec_kept(),
                    &mut pending,
                    ev,
                );
                c.indexes.update(&c.objects, ev);
                events::note_seen(&seen, ev);
                c.replayed.note(&seen, &mut listed_once, ev);
                events::broadcast(&c.changes, &c.objects, &mut listed, ev);
            }
            ev
        });
        let stored = cache.clone();
        let stream = match form {
            Form::Typed => indexed_events
                .reflect_shared(writer)
                .map(move |ev| {
                    if let Ok(ev) = &ev {
                        events::broadcast_applied(&stored.changes, stored.objects.store(), ev);
                        if let Event::InitDone = ev {
                            stored.objects.mark_ready();
                        }
                    }
                    ev
                })
                .boxed(),
            Form::Compact => {
                // Nothing reads the reflector's store of a compact cache, nor subscribes to it.
                drop(writer);
                let mut compact = CompactWriter::new(cache.objects.clone());
                indexed_events
                    .map(move |ev| {
                        if let Ok(ev) = &ev {
                            compact.apply(ev);
                            if let Event::Apply(o) = ev {
                                stored.changes.send(Change::Applied(Arc::new(o.clone())));
                            }
                        }
                        ev
                    })
                    .boxed()
            }
        };
        futures::pin_mut!(stream);
        while let Some(ev) = stream.next().await {
            if let Err(e) = ev {
                let answer = describe_watch_error(&e);
                tracing::warn!(kind = %kind, error = %answer, "watch failed; retrying with backoff");
                *last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
            }
        }
    }
    .boxed()
}
