//! A sharded operator's run: narrowing the caches to this member's objects, joining the group, and the
//! assigner that runs on whichever member holds the group's assigner Lease.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use kube::Client;
use kube::api::{ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use super::{Assigner, Gate, MemberLease, Members, SHARD_LABEL, Sharding, ShardingError};
use crate::cache::{CacheOptionsError, Caches};
use crate::leader::{Elector, LeaderElection};
use crate::metrics::Metrics;

/// One controller's kinds as sharding sees them.
#[derive(Debug, Clone)]
pub(crate) struct ShardedKinds {
    /// The parent kind.
    pub(crate) parents: ApiResource,
    /// The kinds of its children (they follow the parent).
    pub(crate) children: Vec<ApiResource>,
    /// The kinds it reads or watches without owning them (`apiVersion`, kind): every member caches them all.
    pub(crate) shared: Vec<(String, String)>,
}

/// Why a sharded run could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error(transparent)]
    Sharding(#[from] ShardingError),
    #[error(transparent)]
    Cache(#[from] CacheOptionsError),
}

/// Narrows the caches of every parent and child kind to the objects labelled with this member's identity
/// (kinds that some controller reads or watches without owning them stay whole), joins the group, opens the
/// gate for passes, and answers the member's Lease (to hold and release) and the group's settings.
pub(crate) async fn start(
    client: &Client,
    caches: &Caches,
    gate: &Gate,
    config: &Sharding,
    kinds: &[ShardedKinds],
) -> Result<MemberLease, StartError> {
    config.validate()?;
    let selector = format!("{SHARD_LABEL}={}", config.member());
    let shared: Vec<&(String, String)> = kinds.iter().flat_map(|k| &k.shared).collect();
    let mut narrowed: Vec<(String, String)> = Vec::new();
    for kind in kinds
        .iter()
        .flat_map(|k| std::iter::once(&k.parents).chain(&k.children))
    {
        let key = (kind.api_version.clone(), kind.kind.clone());
        if shared.contains(&&key) || narrowed.contains(&key) {
            continue;
        }
        if caches.narrow(&key.0, &key.1, &selector)? {
            narrowed.push(key);
        }
    }
    let mut member = MemberLease::new(client.clone(), config.clone());
    member.join().await?;
    gate.join(config.member(), client.clone());
    tracing::info!(group = %config.group(), member = %config.member(), kinds = ?narrowed, "joined the sharded group; caches hold this member's objects");
    Ok(member)
}

/// Runs the assigner while this member holds the group's assigner Lease (`<group>-assigner`), one round per
/// retry period over each parent kind (in each namespace the operator watches); until `stop` turns true,
/// then releases the Lease.
pub(crate) async fn assign(
    client: Client,
    config: Sharding,
    kinds: Vec<ShardedKinds>,
    namespaces: Vec<String>,
    mut stop: watch::Receiver<bool>,
) {
    let (lease_duration, renew_deadline, retry_period) = config.timings();
    let election = LeaderElection::new(
        format!("{}-assigner", config.group()),
        config.namespace().to_string(),
    )
    .identity(config.member())
    .lease_duration(lease_duration)
    .renew_deadline(renew_deadline)
    .retry_period(retry_period);
    let mut elector = Elector::new(client.clone(), election);
    let mut members = Members::new(client.clone(), config.namespace(), config.group());
    let assigners: Vec<Assigner<DynamicObject>> = kinds
        .iter()
        .flat_map(|k| {
            let scopes: Vec<Option<String>> = if namespaces.is_empty() {
                vec![None]
            } else {
                namespaces.iter().cloned().map(Some).collect()
            };
            scopes.into_iter().map(|ns| {
                let mut a = Assigner::of(client.clone(), k.parents.clone());
                for c in &k.children {
                    a = a.child_resource(c.clone());
                }
                match ns {
                    Some(ns) => a.within(ns),
                    None => a,
                }
            })
        })
        .collect();
    loop {
        tokio::select! {
            _ = stopped(&mut stop) => return,
            _ = elector.acquire() => {}
        }
        tracing::info!(group = %config.group(), member = %config.member(), "this member assigns the group's parents");
        // The parents' metadata, watched while this member assigns, so that a round lists nothing: only what the
        // assigner reads (identity, labels, resourceVersion), so that 10,000 parents cost a few megabytes.
        let mut watching = tokio::task::JoinSet::new();
        let changes = Arc::new(AtomicU64::new(0));
        let stores: Vec<Store<PartialObjectMeta<DynamicObject>>> = assigners
            .iter()
            .map(|a| {
                let writer = reflector::store::Writer::new(a.parents().clone());
                let store = writer.as_reader();
                let events = watcher::watcher(
                    a.parents_metadata_api(),
                    watcher::Config::default().page_size(crate::cache::LIST_PAGE),
                )
                .modify(|p| p.metadata = assigned_meta(&p.metadata));
                let changes = changes.clone();
                watching.spawn(
                    reflector::reflector(writer, events)
                        .default_backoff()
                        .for_each(move |_| {
                            changes.fetch_add(1, Ordering::Relaxed);
                            std::future::ready(())
                        }),
                );
                store
            })
            .collect();
        let rounds = async {
            for store in &stores {
                let _ = store.wait_until_ready().await;
            }
            // A round runs when a parent or the membership changed since the last, or the last one wrote or
            // met a conflict (its writes come back as changes, and a conflict is retried).
            let mut last: Option<(u64, Vec<String>)> = None;
            loop {
                let live = match members.live().await {
                    Ok(live) => live,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read the members' Leases; retrying");
                        tokio::time::sleep(retry_period).await;
                        continue;
                    }
                };
                let seen = changes.load(Ordering::Relaxed);
                if last.as_ref() == Some(&(seen, live.clone())) {
                    tokio::time::sleep(retry_period).await;
                    continue;
                }
                let mut busy = false;
                let mut owners: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
                for (a, store) in assigners.iter().zip(&stores) {
                    let kind = a.parents().kind.clone();
                    let parents = store.state().iter().map(|p| p.metadata.clone()).collect();
                    match a.round_over(live.clone(), parents).await {
                        Ok(round) => {
                            let m = Metrics::global();
                            m.shard_moves(&kind, "assign", round.assigned);
                            m.shard_moves(&kind, "drain", round.draining);
                            m.shard_moves(&kind, "cancel", round.cancelled);
                            m.shard_moves(&kind, "reassign", round.reassigned);
                            busy |= round.assigned
                                + round.draining
                                + round.cancelled
                                + round.reassigned
                                + round.conflicts
                                > 0;
                            let counts = owners.entry(kind).or_default();
                            for member in &round.live {
                                counts.entry(member.clone()).or_default();
                            }
                            for (member, n) in round.owners {
                                *counts.entry(member).or_default() += n;
                            }
                        }
                        Err(e) => {
                            busy = true;
                            tracing::warn!(kind = %kind, error = %e, "an assigner round failed; retrying")
                        }
                    }
                }
                for (kind, counts) in &owners {
                    Metrics::global().shard_parents(kind, counts);
                }
                last = (!busy).then_some((seen, live));
                tokio::time::sleep(retry_period).await;
            }
        };
        tokio::select! {
            _ = stopped(&mut stop) => {
                elector.release().await;
                return;
            }
            lost = elector.hold() => {
                tracing::warn!(group = %config.group(), reason = %lost, "this member no longer assigns");
            }
            _ = rounds => {}
        }
    }
}

/// What the assigner keeps of a parent's metadata: its identity, labels and resourceVersion.
fn assigned_meta(meta: &kube::core::ObjectMeta) -> kube::core::ObjectMeta {
    kube::core::ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        labels: meta.labels.clone(),
        ..kube::core::ObjectMeta::default()
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
