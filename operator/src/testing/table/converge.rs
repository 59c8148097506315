//! Tests that settle: [`TestEnv::converge`] runs a reconciler's passes over one parent until a pass writes
//! nothing, each pass on caches that have seen the previous pass's writes, and returns the final state.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use super::env::{HarnessError, TestEnv};
use super::expect::Write;
use crate::reconciler::{ParentKind, Reconciler};
use crate::testing::apiserver::RequestRecord;

/// How many passes [`TestEnv::converge`] runs before it gives up.
pub const MAX_PASSES: usize = 10;

/// How long [`TestEnv::converge`] waits for the caches to see a pass's writes.
const CATCH_UP: Duration = Duration::from_secs(10);

/// A parent that settled: the passes it took, what each wrote, and the state the cluster holds now.
pub struct Converged<P> {
    /// The passes run, the last one writing nothing.
    pub passes: usize,
    /// The writes of each pass but the last (which made none), in order.
    pub writes: Vec<Vec<Write>>,
    /// The parent as the API server holds it after the last pass; `None` once it is gone (e.g. a finalizer
    /// released it).
    pub parent: Option<P>,
    client: Client,
}

impl<P: std::fmt::Debug> std::fmt::Debug for Converged<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converged")
            .field("passes", &self.passes)
            .field("writes", &self.writes)
            .field("parent", &self.parent)
            .finish_non_exhaustive()
    }
}

impl<P> Converged<P> {
    /// An object as the API server holds it now (`namespace` `None` for a cluster-scoped kind).
    pub async fn get<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, HarnessError>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        read(&self.client, namespace, name).await
    }

    /// Every write of every pass, in order.
    pub fn all_writes(&self) -> impl Iterator<Item = &Write> {
        self.writes.iter().flatten()
    }
}

impl TestEnv {
    /// Runs passes of `reconciler` over `parent` the way the controller does until one writes nothing (no
    /// create, update, patch, delete, status write or event), at most [`MAX_PASSES`]; before each pass the
    /// caches have seen every write of the one before, and before the first, when anything was written since
    /// the last [`pass`](Self::pass) (the test's own write through [`client`](Self::client), say), every cache
    /// holds what the server holds (within its selection), so that it runs on what the test just changed. Every pass runs at the environment's time ([`TestEnv::now`]; see
    /// [`pass`](Self::pass)). Wires the reconciler's kinds and starts their caches first if that is not done
    /// yet. A pass that ends in an error (an invalid spec, say) is a pass like any other: what counts is
    /// whether it wrote.
    ///
    /// Fails with [`HarnessError::NotConverged`] listing the writes of every pass when the last allowed pass
    /// still wrote.
    pub async fn converge<P: ParentKind>(
        &mut self,
        reconciler: &Reconciler<P>,
        parent: &ObjectRef<P>,
    ) -> Result<Converged<P>, HarnessError> {
        self.wire(&reconciler.wiring());
        self.cache::<P>();
        self.start().await?;
        if self.server().requests().iter().any(RequestRecord::is_write) {
            super::env::caches_caught_up(self.caches(), CATCH_UP).await?;
        }
        let mut writes = Vec::new();
        for pass in 1..=MAX_PASSES {
            let report = self.pass(reconciler, parent).await?;
            let written = report.writes();
            if written.is_empty() {
                let now = read(&self.client(), parent.namespace.as_deref(), &parent.name).await?;
                return Ok(Converged {
                    passes: pass,
                    writes,
                    parent: now,
                    client: self.client(),
                });
            }
            self.catch_up(&report.requests).await?;
            writes.push(written);
        }
        Err(HarnessError::NotConverged {
            parent: match &parent.namespace {
                Some(ns) => format!("{} {ns}/{}", P::kind(&()), parent.name),
                None => format!("{} {}", P::kind(&()), parent.name),
            },
            passes: MAX_PASSES,
            writes: describe(&writes),
        })
    }

    /// Waits until every cache of a kind that `requests` wrote has seen the resourceVersion the write
    /// answered (kinds that are not cached, such as events, need no wait).
    async fn catch_up(&self, requests: &[RequestRecord]) -> Result<(), HarnessError> {
        let deadline = tokio::time::Instant::now() + CATCH_UP;
        for r in requests.iter().filter(|r| r.is_write()) {
            let Some(answer) = &r.response else { continue };
            let (Some(api_version), Some(kind), Some(rv)) = (
                answer["apiVersion"].as_str(),
                answer["kind"].as_str(),
                answer["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|rv| rv.parse::<u64>().ok()),
            ) else {
                continue;
            };
            loop {
                match self.caches().seen_resource_version(api_version, kind) {
                    None => break,
                    Some(seen) if seen >= rv => break,
                    Some(_) if tokio::time::Instant::now() >= deadline => {
                        return Err(HarnessError::Timeout {
                            what: format!("the {kind} cache to see resourceVersion {rv}"),
                            after: CATCH_UP,
                        });
                    }
                    Some(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                }
            }
        }
        Ok(())
    }
}

/// An object of kind `K` as the API server holds it.
async fn read<K>(
    client: &Client,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<K>, HarnessError>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let resource = ApiResource::erase::<K>(&());
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let context = || format!("reading {} {name}", K::kind(&()));
    let Some(found) = api
        .get_opt(name)
        .await
        .map_err(|source| HarnessError::Kube {
            context: context(),
            source,
        })?
    else {
        return Ok(None);
    };
    let value = serde_json::to_value(found)?;
    Ok(Some(serde_json::from_value(value)?))
}

/// One line per write, grouped by pass.
fn describe(passes: &[Vec<Write>]) -> String {
    let mut out = String::new();
    for (i, writes) in passes.iter().enumerate() {
        out.push_str(&format!("\n  pass {}:", i + 1));
        for w in writes {
            out.push_str(&format!("\n    {w}"));
        }
    }
    out
}
